#include "hal/cuda/cuda_library.h"

#include <dlfcn.h>

#include <mutex>

namespace hexir::hal::cuda {

StatusOr<const CudaLibrary*> CudaLibrary::Get(const char* path) {
  static std::mutex mu;
  static const CudaLibrary* loaded = nullptr;
  std::lock_guard<std::mutex> lock(mu);
  if (loaded != nullptr) return loaded;
  void* handle = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = ::dlerror();
    return FailedPreconditionError("no CUDA driver: ", path, " cannot be loaded (", err ? err : "unknown error",
                                   "); install the NVIDIA driver or run on the host device");
  }
  auto* library = new CudaLibrary();
#define HEXIR_CUDA_RESOLVE(member, symbol, params)                                                 \
  library->member = reinterpret_cast<CUresult(*) params>(::dlsym(handle, symbol));                 \
  if (library->member == nullptr) {                                                                \
    delete library;                                                                                \
    ::dlclose(handle);                                                                             \
    return FailedPreconditionError("the CUDA driver ", path, " lacks ", symbol, ": it is too old"); \
  }
  HEXIR_CUDA_FUNCTIONS(HEXIR_CUDA_RESOLVE)
#undef HEXIR_CUDA_RESOLVE
  library->has_graphs = true;
#define HEXIR_CUDA_RESOLVE_OPTIONAL(member, symbol, params)                        \
  library->member = reinterpret_cast<CUresult(*) params>(::dlsym(handle, symbol)); \
  library->has_graphs = library->has_graphs && library->member != nullptr;
  HEXIR_CUDA_GRAPH_FUNCTIONS(HEXIR_CUDA_RESOLVE_OPTIONAL)
#undef HEXIR_CUDA_RESOLVE_OPTIONAL
  CUresult init = library->cuInit(0);
  if (init != CUDA_SUCCESS) {
    Status s = library->Check(init, "cuInit");
    delete library;
    ::dlclose(handle);
    return FailedPreconditionError("no CUDA device: the driver does not initialize (", s.message(), ")");
  }
  loaded = library;  // kept for the life of the process
  return loaded;
}

Status CudaLibrary::Check(CUresult result, const char* call) const {
  if (result == CUDA_SUCCESS) return Status::Ok();
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName == nullptr || cuGetErrorName(result, &name) != CUDA_SUCCESS) name = nullptr;
  if (cuGetErrorString == nullptr || cuGetErrorString(result, &text) != CUDA_SUCCESS) text = nullptr;
  std::string what = std::string(call) + " failed: " + (name ? name : "CUDA error " + std::to_string(result)) +
                     (text ? std::string(" (") + text + ")" : std::string());
  switch (result) {
    case CUDA_ERROR_OUT_OF_MEMORY: return ResourceExhaustedError(what);
    case CUDA_ERROR_NO_DEVICE: return FailedPreconditionError(what);
    case CUDA_ERROR_NOT_FOUND: return NotFoundError(what);
    default: return InternalError(what);
  }
}

}  // namespace hexir::hal::cuda
