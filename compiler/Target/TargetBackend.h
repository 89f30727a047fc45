//===- TargetBackend.h - what the compiler needs to know of a target -*- C++ -*-===//
//
// A target is a kind of processor Hexir generates kernels for (the host CPU, CUDA GPUs).
// Everything target-specific sits behind this interface, one folder per target (Target/Host/,
// Target/Cuda/): its description (the format of its kernels, the memory spaces its buffers can
// live in, its panel and packing rules), which ops root kernels it fuses into, its kernel
// pipeline on tensors with its own tile rules, and the serialization of its kernels into a
// kernel library of the executable. The graph passes, dispatch formation and memory planning
// are shared; they ask the target, never test its name.
//
// Adding a target: a folder Target/<Name>/ with a TargetBackend subclass and a factory, and one
// line in TargetRegistry.cpp naming it. See docs/architecture.md.
//
// Thread safety: a TargetBackend is immutable once made; one compilation uses it at a time.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_TARGET_TARGETBACKEND_H
#define HEXIR_COMPILER_TARGET_TARGETBACKEND_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Pass/PassManager.h"

#include "Transforms/KernelClassification.h"
#include "serializer/executable_spec.h"

#include <string>
#include <vector>

namespace mlir::hexir {

// One memory space of a target: where bytes live, how much there is, and who sees it.
struct MemorySpaceDescription {
  std::string name;         // "host"; "device" on a GPU
  uint64_t capacity = 0;    // bytes; 0: bounded only by the machine (host RAM)
  uint64_t alignment = 64;  // every buffer in it starts at a multiple of this
  bool hostVisible = true;    // the CPU reads and writes it directly
  bool kernelVisible = true;  // the target's kernels read and write it
};

// Copying bytes from one memory space to another (indices into TargetDescription::memorySpaces),
// as a machine file describes it: what moving a value out of a full space and back costs.
struct SpaceTransfer {
  uint32_t from = 0, to = 0;
  double bytesPerSecond = 0;
  double latencySeconds = 0;
};

struct TargetDescription {
  std::string name;  // what --target selects: "host"
  // The kind of processor its kernels run on, as machine files name it ("host", "cuda").
  std::string processorKind = "host";
  // The machine file's name for that processor ("gpu"); empty without a machine file.
  std::string processorName;
  ::hexir::serializer::KernelFormat kernelFormat = ::hexir::serializer::KernelFormat::HostElf;
  // Numbered by position: an executable's arenas and slots name spaces by these numbers.
  std::vector<MemorySpaceDescription> memorySpaces;
  // The space intermediates (the arena of every function) are planned in.
  uint32_t arenaSpace = 0;
  // The space the constant pool is made resident in.
  uint32_t constantSpace = 0;
  // Whether its kernel pipeline writes the producer of a pad straight into the padded
  // tensor's interior (dispatch formation then puts both in one kernel); a target that reads
  // pads with clamped indices keeps them apart.
  bool padProducersInKernel = true;
  // Whether its kernels pack a run-time matmul B into panels themselves, block by block where
  // they read it (dispatch formation then puts the packing into the matmul's kernel): for
  // readers of at most this many rows (more rows would each pack B again); 0: never, the
  // packing runs as a kernel of its own.
  int64_t maxRowsPackedInKernel = 0;
  // The widest panel (floats) constant weights are packed into: the kernels' register tile of
  // two vectors, so each reduction step reads whole cache lines of one panel (a 32-wide panel
  // under a 16-wide AVX2 tile doubled the L1 footprint of a cache block).
  int64_t maxPanel = 32;
  // The int8 values its kernels multiply and sum per 32-bit lane: 4 (x86 VNNI's vpdpbusd), 2
  // (vpmaddwd on pairs widened to int16: x86 without VNNI, SSE2, AVX2 or AVX512BW), 0 (none:
  // products widened to int32). int8 weights are packed in groups of that size along the reduction
  // (PackMatmulWeights, PackConvFilters).
  int64_t int8DotGroup = 0;
  // Whether they compute bf16 products as dot products of pairs into f32 (AVX512-BF16): with
  // --precision bf16, contractions then run on bf16 tensors with their weights packed in pairs;
  // without, their operands are only rounded to bf16 (Transforms/ReducePrecision.cpp).
  bool bf16DotGroups = false;
  // Whether a contraction's or convolution's kernel takes an epilogue of another element type
  // (int32 accumulators requantized to int8), narrowing each register tile: dispatch formation
  // then fuses it, and the wide tensor never exists.
  bool narrowingEpilogues = false;
  // Copies the runtime can make between spaces (from a machine file; none by default). With
  // one out of the arena space and one back, values that do not fit are moved out and back.
  std::vector<SpaceTransfer> transfers;
  // Between the host's memory and the arena's space when the host cannot address the latter (a
  // GPU's): the runtime uploads constants once and copies inputs in and outputs out every run.
  // Rates from the machine file; 0: unknown.
  struct HostLink {
    double uploadBytesPerSecond = 0, uploadLatencySeconds = 0;
    double downloadBytesPerSecond = 0, downloadLatencySeconds = 0;
  } hostLink;
  // How fast the target's processor computes and streams memory (from the machine file): the
  // planner's cost of running a dispatch again to free memory, against moving a value out and
  // back. 0: unknown, counted at the defaults below (a few cores of a server CPU).
  struct Compute {
    double flopsPerSecond = 0, bytesPerSecond = 0;
    static constexpr double kDefaultFlopsPerSecond = 1e11, kDefaultBytesPerSecond = 2e10;
    double effectiveFlopsPerSecond() const { return flopsPerSecond > 0 ? flopsPerSecond : kDefaultFlopsPerSecond; }
    double effectiveBytesPerSecond() const { return bytesPerSecond > 0 ? bytesPerSecond : kDefaultBytesPerSecond; }
  } compute;
};

// Bytes each binding of a kernel function (tensor arguments, then results) holds: what the
// executable records per entry so the loader can refuse a dispatch of other sizes.
inline std::vector<uint64_t> kernelBindingBytes(FunctionType type) {
  std::vector<uint64_t> bytes;
  for (TypeRange types : {TypeRange(type.getInputs()), TypeRange(type.getResults())})
    for (Type t : types) {
      auto tensor = cast<RankedTensorType>(t);
      bytes.push_back(static_cast<uint64_t>(tensor.getNumElements()) * ((tensor.getElementTypeBitWidth() + 7) / 8));
    }
  return bytes;
}

class TargetBackend {
public:
  virtual ~TargetBackend() = default;

  virtual const TargetDescription &description() const = 0;

  // Whether its kernel generator compiles a kernel rooted at `op` with other ops fused in
  // (an epilogue, a producer computed into a pad or a slice): dispatch formation asks before
  // fusing. By default, an op of a kind every target's kernels handle (classifyKernel).
  virtual bool fusesIntoKernel(linalg::LinalgOp op) const { return classifyKernel(op).has_value(); }

  // The kernel pipeline: kernel functions on tensors (func.func marked hexir.kernel, as
  // dispatch formation made them) down to the target's lowest dialect.
  virtual void buildKernelPipeline(OpPassManager &pm) const = 0;

  // Compiles every kernel of `module` (left unchanged) into one kernel library in the
  // target's format: code, entries (name, arity, workgroups, binding sizes) and requirements.
  // A kernel that runs as several launches has entries `<kernel>`, `<kernel>__1`, ... which
  // every dispatch of it launches in that order with the same bindings.
  virtual FailureOr<::hexir::serializer::KernelLibrary> compileKernels(ModuleOp module) const = 0;
};

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_TARGET_TARGETBACKEND_H
