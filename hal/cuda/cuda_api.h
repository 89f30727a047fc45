// The few CUDA Driver API types, constants and functions the CUDA backend uses, declared here
// so that no CUDA header or toolkit is needed to build: libcuda.so.1 is opened with dlopen when
// a device is created (cuda_library.h), and each function below is looked up by its exported
// name (the versioned one where cuda.h maps the plain name to it: cuMemAlloc -> cuMemAlloc_v2).
// The declarations follow the Driver API's documented C ABI (64-bit Linux).
#pragma once

#include <cstddef>

namespace hexir::hal::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUjit_option = int;
using CUdevice_attribute = int;
using CUgraph = struct CUgraph_st*;
using CUgraphNode = struct CUgraphNode_st*;
using CUgraphExec = struct CUgraphExec_st*;
using CUmemorytype = int;

inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
inline constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
inline constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
inline constexpr CUjit_option CU_JIT_INFO_LOG_BUFFER = 3;
inline constexpr CUjit_option CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4;
inline constexpr CUjit_option CU_JIT_ERROR_LOG_BUFFER = 5;
inline constexpr CUjit_option CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
inline constexpr unsigned int CU_STREAM_NON_BLOCKING = 0x1;
inline constexpr unsigned int CU_MEMHOSTALLOC_PORTABLE = 0x1;
inline constexpr unsigned int CU_EVENT_DEFAULT = 0x0;
inline constexpr CUmemorytype CU_MEMORYTYPE_HOST = 0x1;
inline constexpr CUmemorytype CU_MEMORYTYPE_DEVICE = 0x2;

// The graph nodes' parameter blocks, as cuda.h lays them out (CUDA 12 and 13: the kernel node's
// is CUDA_KERNEL_NODE_PARAMS_v2, taken by the _v2 functions). cuda_api_test checks the layouts
// against cuda.h where a toolkit is installed.
struct CudaKernelNodeParams {
  CUfunction func = nullptr;
  unsigned int gridDimX = 1, gridDimY = 1, gridDimZ = 1;
  unsigned int blockDimX = 1, blockDimY = 1, blockDimZ = 1;
  unsigned int sharedMemBytes = 0;
  void** kernelParams = nullptr;
  void** extra = nullptr;
  void* kern = nullptr;  // CUkernel: used only when func is null
  CUcontext ctx = nullptr;
};
struct CudaMemsetNodeParams {
  CUdeviceptr dst = 0;
  size_t pitch = 0;
  unsigned int value = 0;
  unsigned int elementSize = 0;  // 1, 2 or 4
  size_t width = 0;              // elements per row
  size_t height = 1;             // rows
};
struct CudaMemcpy3D {
  size_t srcXInBytes = 0, srcY = 0, srcZ = 0, srcLOD = 0;
  CUmemorytype srcMemoryType = 0;
  const void* srcHost = nullptr;
  CUdeviceptr srcDevice = 0;
  void* srcArray = nullptr;
  void* reserved0 = nullptr;
  size_t srcPitch = 0, srcHeight = 0;
  size_t dstXInBytes = 0, dstY = 0, dstZ = 0, dstLOD = 0;
  CUmemorytype dstMemoryType = 0;
  void* dstHost = nullptr;
  CUdeviceptr dstDevice = 0;
  void* dstArray = nullptr;
  void* reserved1 = nullptr;
  size_t dstPitch = 0, dstHeight = 0;
  size_t WidthInBytes = 0, Height = 1, Depth = 1;
};

// X(member, exported symbol, parameters): every Driver API function the backend calls.
#define HEXIR_CUDA_FUNCTIONS(X)                                                                                   \
  X(cuInit, "cuInit", (unsigned int flags))                                                                     \
  X(cuDriverGetVersion, "cuDriverGetVersion", (int* version))                                                   \
  X(cuDeviceGetCount, "cuDeviceGetCount", (int* count))                                                         \
  X(cuDeviceGet, "cuDeviceGet", (CUdevice * device, int ordinal))                                               \
  X(cuDeviceGetName, "cuDeviceGetName", (char* name, int length, CUdevice device))                              \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", (int* value, CUdevice_attribute attribute, CUdevice device))  \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext * context, CUdevice device))               \
  X(cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", (CUdevice device))                               \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", (CUcontext context))                                                    \
  X(cuMemAlloc, "cuMemAlloc_v2", (CUdeviceptr * pointer, size_t bytes))                                         \
  X(cuMemFree, "cuMemFree_v2", (CUdeviceptr pointer))                                                           \
  X(cuMemGetInfo, "cuMemGetInfo_v2", (size_t * free_bytes, size_t * total_bytes))                                \
  X(cuMemHostAlloc, "cuMemHostAlloc", (void** pointer, size_t bytes, unsigned int flags))                       \
  X(cuMemFreeHost, "cuMemFreeHost", (void* pointer))                                                            \
  X(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", (CUdeviceptr target, const void* source, size_t bytes, CUstream)) \
  X(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", (void* target, CUdeviceptr source, size_t bytes, CUstream))     \
  X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", (CUdeviceptr target, CUdeviceptr source, size_t bytes, CUstream)) \
  X(cuMemsetD8Async, "cuMemsetD8Async", (CUdeviceptr target, unsigned char value, size_t count, CUstream))      \
  X(cuMemsetD16Async, "cuMemsetD16Async", (CUdeviceptr target, unsigned short value, size_t count, CUstream))   \
  X(cuMemsetD32Async, "cuMemsetD32Async", (CUdeviceptr target, unsigned int value, size_t count, CUstream))     \
  X(cuMemsetD2D32Async, "cuMemsetD2D32Async",                                                                   \
    (CUdeviceptr target, size_t pitch, unsigned int value, size_t width, size_t height, CUstream))              \
  X(cuStreamCreate, "cuStreamCreate", (CUstream * stream, unsigned int flags))                                  \
  X(cuStreamDestroy, "cuStreamDestroy_v2", (CUstream stream))                                                   \
  X(cuStreamSynchronize, "cuStreamSynchronize", (CUstream stream))                                              \
  X(cuEventCreate, "cuEventCreate", (CUevent * event, unsigned int flags))                                      \
  X(cuEventDestroy, "cuEventDestroy_v2", (CUevent event))                                                       \
  X(cuEventRecord, "cuEventRecord", (CUevent event, CUstream stream))                                           \
  X(cuEventElapsedTime, "cuEventElapsedTime", (float* milliseconds, CUevent start, CUevent end))                \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx",                                                                   \
    (CUmodule * module, const void* image, unsigned int count, CUjit_option* options, void** values))           \
  X(cuModuleUnload, "cuModuleUnload", (CUmodule module))                                                        \
  X(cuModuleGetFunction, "cuModuleGetFunction", (CUfunction * function, CUmodule module, const char* name))     \
  X(cuLaunchKernel, "cuLaunchKernel",                                                                           \
    (CUfunction function, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z, unsigned int block_x,  \
     unsigned int block_y, unsigned int block_z, unsigned int shared_bytes, CUstream stream, void** parameters, \
     void** extra))                                                                                             \
  X(cuGetErrorName, "cuGetErrorName", (CUresult error, const char** name))                                      \
  X(cuGetErrorString, "cuGetErrorString", (CUresult error, const char** text))

// The CUDA graph functions (CUDA 12.0 and newer): resolved when the driver has them all; a
// driver without them runs every session without graphs.
#define HEXIR_CUDA_GRAPH_FUNCTIONS(X)                                                                             \
  X(cuGraphCreate, "cuGraphCreate", (CUgraph * graph, unsigned int flags))                                      \
  X(cuGraphDestroy, "cuGraphDestroy", (CUgraph graph))                                                          \
  X(cuGraphAddKernelNode, "cuGraphAddKernelNode_v2",                                                            \
    (CUgraphNode * node, CUgraph graph, const CUgraphNode* dependencies, size_t count,                          \
     const CudaKernelNodeParams* params))                                                                       \
  X(cuGraphAddMemsetNode, "cuGraphAddMemsetNode",                                                               \
    (CUgraphNode * node, CUgraph graph, const CUgraphNode* dependencies, size_t count,                          \
     const CudaMemsetNodeParams* params, CUcontext context))                                                    \
  X(cuGraphAddMemcpyNode, "cuGraphAddMemcpyNode",                                                               \
    (CUgraphNode * node, CUgraph graph, const CUgraphNode* dependencies, size_t count, const CudaMemcpy3D* params, \
     CUcontext context))                                                                                        \
  X(cuGraphInstantiate, "cuGraphInstantiateWithFlags", (CUgraphExec * exec, CUgraph graph, unsigned long long flags)) \
  X(cuGraphExecDestroy, "cuGraphExecDestroy", (CUgraphExec exec))                                               \
  X(cuGraphLaunch, "cuGraphLaunch", (CUgraphExec exec, CUstream stream))                                        \
  X(cuGraphExecKernelNodeSetParams, "cuGraphExecKernelNodeSetParams_v2",                                       \
    (CUgraphExec exec, CUgraphNode node, const CudaKernelNodeParams* params))                                   \
  X(cuGraphExecMemsetNodeSetParams, "cuGraphExecMemsetNodeSetParams",                                           \
    (CUgraphExec exec, CUgraphNode node, const CudaMemsetNodeParams* params, CUcontext context))                \
  X(cuGraphExecMemcpyNodeSetParams, "cuGraphExecMemcpyNodeSetParams",                                           \
    (CUgraphExec exec, CUgraphNode node, const CudaMemcpy3D* params, CUcontext context))

}  // namespace hexir::hal::cuda
