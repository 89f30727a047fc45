#include "hal/cuda/cuda_executable.h"

#include <string>

#include "base/log.h"

namespace hexir::hal::cuda {

Status CheckComputeCapability(uint32_t required, int device, const std::string& device_name) {
  if (required == 0 || static_cast<int>(required) <= device) return Status::Ok();
  return FailedPreconditionError("the kernels were compiled for sm_", required, " (compute capability ", required / 10,
                                 ".", required % 10, "); device ", device_name, " has compute capability ",
                                 device / 10, ".", device % 10, ": recompile with hexir-compile --target cuda ",
                                 "--cuda-arch sm_", device);
}

StatusOr<std::unique_ptr<CudaExecutable>> CudaExecutable::Load(const CudaContext& context,
                                                               const ExecutableSource& source) {
  if (source.format != ExecutableFormat::kCudaPtx)
    return InvalidArgumentError("a CUDA device runs CUDA PTX kernels, not ", ExecutableFormatName(source.format));
  if (!source.cpu_features.empty())
    return FailedPreconditionError("the kernel library needs CPU extensions; it was compiled for the host");
  HEXIR_RETURN_IF_ERROR(CheckComputeCapability(source.compute_capability, context.compute_capability,
                                               "cuda:" + std::to_string(context.ordinal)));
  if (!source.workgroup_sizes.empty() && source.workgroup_sizes.size() != source.entry_names.size())
    return InvalidArgumentError("the kernel library gives ", source.workgroup_sizes.size(), " block shapes for ",
                                source.entry_names.size(), " entries");
  HEXIR_RETURN_IF_ERROR(context.MakeCurrent());
  // The driver reads PTX as a NUL-terminated string.
  std::string ptx(reinterpret_cast<const char*>(source.code.data()), source.code.size());
  char log[8192] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log, reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof(log)))};
  CUmodule module = nullptr;
  CUresult loaded = context.api->cuModuleLoadDataEx(&module, ptx.c_str(), 2, options, values);
  if (loaded != CUDA_SUCCESS) {
    Status s = context.api->Check(loaded, "cuModuleLoadDataEx");
    return DataLossError("the CUDA driver cannot load the kernel library: ", s.message(),
                         log[0] ? std::string("; JIT log: ") + log : std::string());
  }
  std::unique_ptr<CudaExecutable> exe(new CudaExecutable(context, module));
  for (size_t i = 0; i < source.entry_names.size(); ++i) {
    CUfunction fn = nullptr;
    if (context.api->cuModuleGetFunction(&fn, module, source.entry_names[i].c_str()) != CUDA_SUCCESS)
      return NotFoundError("kernel '", source.entry_names[i], "' is missing from the CUDA kernel library");
    std::array<uint32_t, 3> block = source.workgroup_sizes.empty() ? std::array<uint32_t, 3>{1, 1, 1}
                                                                   : source.workgroup_sizes[i];
    uint64_t threads = uint64_t{block[0]} * block[1] * block[2];
    if (threads == 0 || threads > static_cast<uint64_t>(context.max_threads_per_block))
      return InvalidArgumentError("kernel '", source.entry_names[i], "' runs blocks of ", threads,
                                  " threads; this GPU allows 1 to ", context.max_threads_per_block);
    exe->functions_.push_back(fn);
    exe->blocks_.push_back(block);
  }
  return exe;
}

CudaExecutable::~CudaExecutable() {
  Status s = context_.MakeCurrent();
  if (s.ok()) s = context_.api->Check(context_.api->cuModuleUnload(module_), "cuModuleUnload");
  if (!s.ok()) Log(LogSeverity::kError, s.message());
}

}  // namespace hexir::hal::cuda
