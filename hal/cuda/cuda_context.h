// CudaContext: one GPU's primary context and the library that drives it, shared by the CUDA
// device, its allocator, queue and executables. Every call into the driver first makes the
// context current on the calling thread (sessions run on threads of the caller's choosing).
//
// Thread safety: thread-safe.
#pragma once

#include "hexir/status.h"
#include "hal/cuda/cuda_library.h"

namespace hexir::hal::cuda {

struct CudaContext {
  const CudaLibrary* api = nullptr;
  CUdevice device = 0;
  CUcontext context = nullptr;
  int ordinal = 0;
  int max_threads_per_block = 1024;
  int compute_capability = 0;  // major * 10 + minor

  Status MakeCurrent() const { return api->Check(api->cuCtxSetCurrent(context), "cuCtxSetCurrent"); }
};

inline CUdeviceptr ToCu(const void* p) { return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p)); }
inline void* FromCu(CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }

}  // namespace hexir::hal::cuda
