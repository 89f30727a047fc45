// CudaLibrary: libcuda.so.1 opened with dlopen and every function of cuda_api.h resolved, once
// per process. A machine without the driver library gets FAILED_PRECONDITION saying so, never
// a crash; Check() turns a CUresult into a Status naming the call and the driver's own name and
// text for the error.
//
// Ownership: the library stays loaded for the life of the process (unloading a driver with
// live contexts is not safe). Thread safety: immutable after Load().
#pragma once

#include <string>

#include "hexir/status.h"
#include "hal/cuda/cuda_api.h"

namespace hexir::hal::cuda {

struct CudaLibrary {
#define HEXIR_CUDA_MEMBER(member, symbol, params) CUresult (*member) params = nullptr;
  HEXIR_CUDA_FUNCTIONS(HEXIR_CUDA_MEMBER)
  HEXIR_CUDA_GRAPH_FUNCTIONS(HEXIR_CUDA_MEMBER)
#undef HEXIR_CUDA_MEMBER
  // Whether every function of HEXIR_CUDA_GRAPH_FUNCTIONS resolved.
  bool has_graphs = false;

  // The process's library, loaded and initialized (cuInit) on first use. `path` overrides the
  // library's name (tests); the first successful load is kept.
  static StatusOr<const CudaLibrary*> Get(const char* path = "libcuda.so.1");

  // OK for CUDA_SUCCESS; otherwise "CALL failed: CUDA_ERROR_X (driver's text)" with a code
  // that says what kind of failure it is (out of memory: RESOURCE_EXHAUSTED, ...).
  Status Check(CUresult result, const char* call) const;
};

}  // namespace hexir::hal::cuda
