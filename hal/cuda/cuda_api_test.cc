// cuda_api.h declares the Driver API by hand so that nothing CUDA is needed to build. This test
// holds it to NVIDIA's own cuda.h where a toolkit is installed (built only there): each
// function's exported name is the one cuda.h maps its plain name to (cuMemAlloc ->
// cuMemAlloc_v2), its parameters have the sizes and pointer-ness of cuda.h's (and the structs
// they point to, their size), and the graph nodes' parameter blocks have cuda.h's layout.
//
// cuda_api.h comes first: cuda.h's macros rename the plain names, which the checks below use on
// purpose and which must not rename the members of hexir's own declarations.
#include "hal/cuda/cuda_api.h"

#include <catch2/catch.hpp>
#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

// cuda.h defines this one as a macro: hexir's value is taken before it is included.
constexpr unsigned int kHexirHostAllocPortable = hexir::hal::cuda::CU_MEMHOSTALLOC_PORTABLE;

#include <cuda.h>

namespace {

template <typename T, typename = void>
struct IsComplete : std::false_type {};
template <typename T>
struct IsComplete<T, std::void_t<decltype(sizeof(T))>> : std::true_type {};

// Two parameter types pass the same way: same size and pointer-ness, and where both point to
// complete non-void types, pointees of the same size.
template <typename A, typename B>
constexpr bool SameParameter() {
  if (sizeof(A) != sizeof(B) || std::is_pointer_v<A> != std::is_pointer_v<B>) return false;
  if constexpr (std::is_pointer_v<A>) {
    using PA = std::remove_cv_t<std::remove_pointer_t<A>>;
    using PB = std::remove_cv_t<std::remove_pointer_t<B>>;
    if constexpr (!std::is_void_v<PA> && !std::is_void_v<PB> && IsComplete<PA>::value && IsComplete<PB>::value)
      return sizeof(PA) == sizeof(PB);
  }
  return true;
}

template <typename Ours, typename Theirs>
struct SameFunction;
template <typename R1, typename... A1, typename R2, typename... A2>
struct SameFunction<R1 (*)(A1...), R2 (*)(A2...)> {
  static constexpr bool Check() {
    if constexpr (sizeof...(A1) != sizeof...(A2)) {
      return false;
    } else {
      return sizeof(R1) == sizeof(R2) && (SameParameter<A1, A2>() && ...);
    }
  }
};

#define HEXIR_STRINGIZE2(x) #x
#define HEXIR_STRINGIZE(x) HEXIR_STRINGIZE2(x)

}  // namespace

// Whether hexir resolves the symbol cuda.h calls. One exception, on purpose: cuda.h of CUDA
// 12.8 and newer maps cuEventElapsedTime to cuEventElapsedTime_v2 (the same signature), which
// older drivers lack; every driver still exports the original, which hexir keeps.
bool SameSymbol(const std::string& ours, const std::string& cuda_h) {
  if (ours == "cuEventElapsedTime" && cuda_h == "cuEventElapsedTime_v2") return true;
  return ours == cuda_h;
}

// In hexir's namespace, so that the parameter lists of the X-macros name hexir's types.
namespace hexir::hal::cuda {
namespace {

TEST_CASE("cuda_api.h matches cuda.h: exported names and signatures", "[cuda]") {
  int checked = 0;
  // `member` is expanded by cuda.h's macros here: the versioned name cuda.h calls.
#define HEXIR_CHECK_FUNCTION(member, symbol, params)                                    \
  {                                                                                     \
    INFO("function " #member " exported as " symbol);                                   \
    CHECK(SameSymbol(symbol, HEXIR_STRINGIZE(member)));                                 \
    constexpr bool same = SameFunction<CUresult(*) params, decltype(&::member)>::Check(); \
    CHECK(same);                                                                        \
    ++checked;                                                                          \
  }
  HEXIR_CUDA_FUNCTIONS(HEXIR_CHECK_FUNCTION)
  HEXIR_CUDA_GRAPH_FUNCTIONS(HEXIR_CHECK_FUNCTION)
#undef HEXIR_CHECK_FUNCTION
  CHECK(checked > 40);
}

}  // namespace
}  // namespace hexir::hal::cuda

namespace {

TEST_CASE("cuda_api.h matches cuda.h: constants and the graph nodes' parameter layouts", "[cuda]") {
  namespace ours = hexir::hal::cuda;
  CHECK(ours::CUDA_ERROR_OUT_OF_MEMORY == CUDA_ERROR_OUT_OF_MEMORY);
  CHECK(ours::CUDA_ERROR_NO_DEVICE == CUDA_ERROR_NO_DEVICE);
  CHECK(ours::CUDA_ERROR_NOT_FOUND == CUDA_ERROR_NOT_FOUND);
  CHECK(ours::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK == CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  CHECK(ours::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  CHECK(ours::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  CHECK(ours::CU_JIT_INFO_LOG_BUFFER == CU_JIT_INFO_LOG_BUFFER);
  CHECK(ours::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES);
  CHECK(ours::CU_JIT_ERROR_LOG_BUFFER == CU_JIT_ERROR_LOG_BUFFER);
  CHECK(ours::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);
  CHECK(ours::CU_STREAM_NON_BLOCKING == CU_STREAM_NON_BLOCKING);
  CHECK(kHexirHostAllocPortable == CU_MEMHOSTALLOC_PORTABLE);
  CHECK(ours::CU_EVENT_DEFAULT == CU_EVENT_DEFAULT);
  CHECK(ours::CU_MEMORYTYPE_HOST == CU_MEMORYTYPE_HOST);
  CHECK(ours::CU_MEMORYTYPE_DEVICE == CU_MEMORYTYPE_DEVICE);

#define HEXIR_SAME_FIELD(Ours, Theirs, field)                                    \
  {                                                                              \
    INFO(#Theirs "::" #field);                                                   \
    CHECK(offsetof(Ours, field) == offsetof(Theirs, field));                     \
    CHECK(sizeof(std::declval<Ours>().field) == sizeof(std::declval<Theirs>().field)); \
  }
  using K = ours::CudaKernelNodeParams;
  CHECK(sizeof(K) == sizeof(CUDA_KERNEL_NODE_PARAMS));
  HEXIR_SAME_FIELD(K, CUDA_KERNEL_NODE_PARAMS, func)
  HEXIR_SAME_FIELD(K, CUDA_KERNEL_NODE_PARAMS, gridDimX)
  HEXIR_SAME_FIELD(K, CUDA_KERNEL_NODE_PARAMS, gridDimY)
  HEXIR_SAME_FIELD(K, CUDA_KERNEL_NODE_PARAMS, gridDimZ)
  HEXIR_SAME_FIELD(K, CUDA_KERNEL_NODE_PARAMS, blockDimX)
  HEXIR_SAME_FIELD(K, CUDA_KERNEL_NODE_PARAMS, blockDimY)
  HEXIR_SAME_FIELD(K, CUDA_KERNEL_NODE_PARAMS, blockDimZ)
  HEXIR_SAME_FIELD(K, CUDA_KERNEL_NODE_PARAMS, sharedMemBytes)
  HEXIR_SAME_FIELD(K, CUDA_KERNEL_NODE_PARAMS, kernelParams)
  HEXIR_SAME_FIELD(K, CUDA_KERNEL_NODE_PARAMS, extra)
  HEXIR_SAME_FIELD(K, CUDA_KERNEL_NODE_PARAMS, kern)
  HEXIR_SAME_FIELD(K, CUDA_KERNEL_NODE_PARAMS, ctx)
  using S = ours::CudaMemsetNodeParams;
  CHECK(sizeof(S) == sizeof(CUDA_MEMSET_NODE_PARAMS));
  HEXIR_SAME_FIELD(S, CUDA_MEMSET_NODE_PARAMS, dst)
  HEXIR_SAME_FIELD(S, CUDA_MEMSET_NODE_PARAMS, pitch)
  HEXIR_SAME_FIELD(S, CUDA_MEMSET_NODE_PARAMS, value)
  HEXIR_SAME_FIELD(S, CUDA_MEMSET_NODE_PARAMS, elementSize)
  HEXIR_SAME_FIELD(S, CUDA_MEMSET_NODE_PARAMS, width)
  HEXIR_SAME_FIELD(S, CUDA_MEMSET_NODE_PARAMS, height)
  using M = ours::CudaMemcpy3D;
  CHECK(sizeof(M) == sizeof(CUDA_MEMCPY3D));
  HEXIR_SAME_FIELD(M, CUDA_MEMCPY3D, srcXInBytes)
  HEXIR_SAME_FIELD(M, CUDA_MEMCPY3D, srcY)
  HEXIR_SAME_FIELD(M, CUDA_MEMCPY3D, srcZ)
  HEXIR_SAME_FIELD(M, CUDA_MEMCPY3D, srcLOD)
  HEXIR_SAME_FIELD(M, CUDA_MEMCPY3D, srcMemoryType)
  HEXIR_SAME_FIELD(M, CUDA_MEMCPY3D, srcHost)
  HEXIR_SAME_FIELD(M, CUDA_MEMCPY3D, srcDevice)
  HEXIR_SAME_FIELD(M, CUDA_MEMCPY3D, srcArray)
  HEXIR_SAME_FIELD(M, CUDA_MEMCPY3D, reserved0)
  HEXIR_SAME_FIELD(M, CUDA_MEMCPY3D, srcPitch)
  HEXIR_SAME_FIELD(M, CUDA_MEMCPY3D, srcHeight)
  HEXIR_SAME_FIELD(M, CUDA_MEMCPY3D, dstXInBytes)
  HEXIR_SAME_FIELD(M, CUDA_MEMCPY3D, dstY)
  HEXIR_SAME_FIELD(M, CUDA_MEMCPY3D, dstZ)
  HEXIR_SAME_FIELD(M, CUDA_MEMCPY3D, dstLOD)
  HEXIR_SAME_FIELD(M, CUDA_MEMCPY3D, dstMemoryType)
  HEXIR_SAME_FIELD(M, CUDA_MEMCPY3D, dstHost)
  HEXIR_SAME_FIELD(M, CUDA_MEMCPY3D, dstDevice)
  HEXIR_SAME_FIELD(M, CUDA_MEMCPY3D, dstArray)
  HEXIR_SAME_FIELD(M, CUDA_MEMCPY3D, reserved1)
  HEXIR_SAME_FIELD(M, CUDA_MEMCPY3D, dstPitch)
  HEXIR_SAME_FIELD(M, CUDA_MEMCPY3D, dstHeight)
  HEXIR_SAME_FIELD(M, CUDA_MEMCPY3D, WidthInBytes)
  HEXIR_SAME_FIELD(M, CUDA_MEMCPY3D, Height)
  HEXIR_SAME_FIELD(M, CUDA_MEMCPY3D, Depth)
#undef HEXIR_SAME_FIELD
}

}  // namespace
