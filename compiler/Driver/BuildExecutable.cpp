//===- BuildExecutable.cpp - call_tir graph to an executable spec ---------===//
#include "Driver/BuildExecutable.h"

#include "Dialect/HexirDialect.h"
#include "Planning/BufferLiveness.h"
#include "Planning/CheckPlacement.h"
#include "Planning/EmitCommands.h"
#include "Planning/InPlaceSharing.h"
#include "Planning/MoveValues.h"
#include "Planning/PlanMemory.h"

#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::hexir;
namespace ser = ::hexir::serializer;

namespace {

uint64_t byteCount(const ser::TensorSignature &sig) {
  uint64_t n = ser::ElementTypeSize(sig.element_type);
  for (int64_t d : sig.shape)
    n *= static_cast<uint64_t>(d);
  return n;
}

std::string nameOf(func::FuncOp fn, unsigned index, bool isResult) {
  auto attr = isResult ? fn.getResultAttrOfType<StringAttr>(index, kNameAttrName)
                       : fn.getArgAttrOfType<StringAttr>(index, kNameAttrName);
  if (attr)
    return attr.str();
  return (isResult ? "output" : "input") + std::to_string(index);
}

FailureOr<ser::TensorSignature> signature(func::FuncOp fn, Type type, unsigned index, bool isResult) {
  auto declared = isResult ? fn.getResultAttrOfType<StringAttr>(index, kElementTypeAttrName)
                           : fn.getArgAttrOfType<StringAttr>(index, kElementTypeAttrName);
  auto t = cast<RankedTensorType>(type);
  Type et = t.getElementType();
  ser::TensorSignature sig;
  // An integer the importer declares otherwise: unsigned, or the bits of a 16-bit float.
  StringRef as = declared ? declared.getValue() : StringRef();
  if (et.isF32())
    sig.element_type = ser::ElementType::F32;
  else if (et.isF64())
    sig.element_type = ser::ElementType::F64;
  else if (et.isSignlessInteger(64))
    sig.element_type = as == "u64" ? ser::ElementType::U64 : ser::ElementType::I64;
  else if (et.isSignlessInteger(32))
    sig.element_type = as == "u32" ? ser::ElementType::U32 : ser::ElementType::I32;
  else if (et.isSignlessInteger(16))
    sig.element_type = as == "u16"    ? ser::ElementType::U16
                       : as == "f16"  ? ser::ElementType::F16
                       : as == "bf16" ? ser::ElementType::BF16
                                      : ser::ElementType::I16;
  else if (et.isSignlessInteger(8) && declared && declared.getValue() == "u8")
    sig.element_type = ser::ElementType::U8;
  else if (et.isSignlessInteger(8) && declared && declared.getValue() == "i8")
    sig.element_type = ser::ElementType::I8;
  else if (et.isSignlessInteger(8))
    sig.element_type = ser::ElementType::BOOL;  // an undeclared i8 is a bool (0 or 1 in a byte)
  else
    return fn.emitError() << "only f32, f64, i64, i32, i16 (int16, uint16, float16 and bfloat16 bits), i8 (bool, int8, "
                             "uint8) inputs and outputs are supported, got " << type;
  sig.name = nameOf(fn, index, isResult);
  sig.shape.assign(t.getShape().begin(), t.getShape().end());
  return sig;
}

} // namespace

FailureOr<BuiltFunction> mlir::hexir::buildFunction(func::FuncOp graph, const TargetDescription &target,
                                                    ser::ExecutableSpec &spec, ConstantPool &pool,
                                                    const BuildExecutableOptions &options) {
  BuiltFunction built;
  ser::Function &fn = built.function;
  ::hexir::planner::PlanReport &report = built.report;
  fn.name = graph.getSymName().str();
  if (auto of = graph->getAttrOfType<StringAttr>(kBucketOfAttrName)) {
    fn.bucket_of = of.str();
    auto names = graph->getAttrOfType<ArrayAttr>(kBucketDimNamesAttrName);
    auto values = graph->getAttrOfType<DenseI64ArrayAttr>(kBucketDimValuesAttrName);
    for (auto [name, value] : llvm::zip(names.getAsValueRange<StringAttr>(), values.asArrayRef()))
      fn.bucket_dims.push_back({name.str(), value});
    if (auto mixed = graph->getAttrOfType<StringAttr>(kRowsMixedByAttrName))
      fn.rows_mixed_by = mixed.str();
    if (auto padsFrom = graph->getAttrOfType<DenseI64ArrayAttr>(kBucketPadsFromAttrName))
      fn.bucket_pads_from.assign(padsFrom.asArrayRef().begin(), padsFrom.asArrayRef().end());
  }
  report.function = fn.name;
  FunctionType type = graph.getFunctionType();
  for (unsigned i = 0; i < type.getNumInputs(); ++i) {
    auto sig = signature(graph, type.getInput(i), i, false);
    if (failed(sig))
      return failure();
    sig->donated = graph.getArgAttr(i, kDonateAttrName) != nullptr;
    fn.inputs.push_back(*sig);
  }
  for (unsigned i = 0; i < type.getNumResults(); ++i) {
    auto sig = signature(graph, type.getResult(i), i, true);
    if (failed(sig))
      return failure();
    fn.outputs.push_back(*sig);
  }

  FailureOr<BufferLiveness> live = computeBufferLiveness(graph, target, options.schedule, report);
  if (failed(live) || failed(checkPlacement(graph, *live, target)))
    return failure();
  InPlaceCandidates candidates = findKernelCandidates(*live, graph->getParentOfType<ModuleOp>());
  if (options.inPlace)
    shareDyingInputs(*live, candidates);
  DonationTies ties = tieDonatedInputs(*live, candidates, fn);
  PlanMemoryOptions planOptions;
  planOptions.verify = options.verifyPlan;
  planOptions.timeLimit = options.planTimeLimit;
  planOptions.searchNodes = options.planSearchNodes;
  // Constants first: in a memory space that also holds the arena, they take part of its capacity.
  SmallVector<func::FuncOp> graphs = {graph};
  llvm::append_range(graphs, live->bodies);
  auto constants = poolConstants(graphs, pool, spec, report);
  if (failed(constants))
    return failure();
  // A full arena space with a larger one behind it: values move out and back (copy commands).
  // (Not across loops and branches: a value moved out inside a trip would need moving back in
  // every trip; such a graph that does not fit is refused with the reason.)
  if (!live->hasControlFlow())
    moveValuesToFit(*live, target, report.constant_bytes + report.filled_constant_bytes, planOptions, report);
  FailureOr<MemoryPlan> plan = planMemory(graph, *live, target, planOptions, report);
  if (failed(plan))
    return failure();
  // An arena the host cannot address: the runtime's copies to and from it, reported.
  if (!target.memorySpaces[target.arenaSpace].hostVisible) {
    const TargetDescription::HostLink &link = target.hostLink;
    auto seconds = [](uint64_t bytes, double rate, double latency) {
      return rate > 0 && bytes > 0 ? bytes / rate + latency : 0.0;
    };
    report.host_link_space = target.memorySpaces[target.arenaSpace].name;
    report.upload_once_bytes = report.constant_bytes;
    for (const ser::TensorSignature &in : fn.inputs)
      report.upload_per_run_bytes += byteCount(in);
    for (const ser::TensorSignature &out : fn.outputs)
      report.download_per_run_bytes += byteCount(out);
    report.upload_once_seconds = seconds(report.upload_once_bytes, link.uploadBytesPerSecond, link.uploadLatencySeconds);
    report.per_run_transfer_seconds =
        seconds(report.upload_per_run_bytes, link.uploadBytesPerSecond, link.uploadLatencySeconds) +
        seconds(report.download_per_run_bytes, link.downloadBytesPerSecond, link.downloadLatencySeconds);
  }
  if (failed(emitCommands(graph, *live, ties, *plan, *constants, locateKernels(spec.libraries), fn)))
    return failure();
  return built;
}
