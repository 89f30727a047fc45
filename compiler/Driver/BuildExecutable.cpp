//===- BuildExecutable.cpp - call_tir graph to an executable spec ---------===//
#include "Driver/BuildExecutable.h"

#include "Dialect/HexirDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/AsmState.h"

#include "base/alignment.h"
#include "planner/best_fit.h"
#include "planner/verifier.h"

#include <map>

using namespace mlir;
using namespace mlir::hexir;
namespace ser = ::hexir::serializer;

namespace {

constexpr uint64_t kBufferAlignment = 64;

bool isView(Operation *op) { return isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op); }

uint64_t byteSize(Type type) {
  auto t = cast<RankedTensorType>(type);
  return static_cast<uint64_t>(t.getNumElements()) * (t.getElementTypeBitWidth() / 8);
}

// The value whose memory `v` reinterprets (reshapes are views of their source).
Value rootOf(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (!isView(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

// Raw little-endian bytes of a constant tensor.
FailureOr<std::vector<uint8_t>> constantBytes(arith::ConstantOp op) {
  auto type = cast<RankedTensorType>(op.getType());
  uint64_t size = byteSize(type);
  std::vector<uint8_t> bytes(size);
  if (auto dense = dyn_cast<DenseElementsAttr>(op.getValue())) {
    ArrayRef<char> raw = dense.getRawData();
    if (dense.isSplat()) {
      uint64_t elem = type.getElementTypeBitWidth() / 8;
      for (uint64_t i = 0; i < size; i += elem)
        std::memcpy(bytes.data() + i, raw.data(), elem);
    } else {
      if (raw.size() != size)
        return op.emitError() << "constant holds " << raw.size() << " bytes, expected " << size;
      std::memcpy(bytes.data(), raw.data(), size);
    }
    return bytes;
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(op.getValue())) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return op.emitError() << "constant refers to a resource without data";
    ArrayRef<char> raw = blob->getData();
    if (raw.size() != size)
      return op.emitError() << "constant resource holds " << raw.size() << " bytes, expected " << size;
    std::memcpy(bytes.data(), raw.data(), size);
    return bytes;
  }
  return op.emitError() << "unsupported constant attribute kind; use dense<...> or dense_resource";
}

// Appends constants to the pool, each aligned, identical ones stored once.
class ConstantPool {
public:
  explicit ConstantPool(std::vector<uint8_t> &pool) : pool_(pool) {}
  uint64_t add(const std::vector<uint8_t> &bytes) {
    auto key = std::make_pair(bytes.size(), std::hash<std::string_view>()(
                                                std::string_view(reinterpret_cast<const char *>(bytes.data()), bytes.size())));
    for (uint64_t offset : seen_[key])
      if (std::memcmp(pool_.data() + offset, bytes.data(), bytes.size()) == 0)
        return offset;
    uint64_t offset = ::hexir::AlignUp(pool_.size(), kBufferAlignment);
    pool_.resize(offset + bytes.size());
    std::memcpy(pool_.data() + offset, bytes.data(), bytes.size());
    seen_[key].push_back(offset);
    return offset;
  }

private:
  std::vector<uint8_t> &pool_;
  std::map<std::pair<size_t, size_t>, std::vector<uint64_t>> seen_;
};

std::string nameOf(func::FuncOp fn, unsigned index, bool isResult) {
  auto attr = isResult ? fn.getResultAttrOfType<StringAttr>(index, kNameAttrName)
                       : fn.getArgAttrOfType<StringAttr>(index, kNameAttrName);
  if (attr)
    return attr.str();
  return (isResult ? "output" : "input") + std::to_string(index);
}

FailureOr<ser::TensorSignature> signature(func::FuncOp fn, Type type, unsigned index, bool isResult) {
  auto t = cast<RankedTensorType>(type);
  if (!t.getElementType().isF32())
    return fn.emitError() << "only f32 signatures are supported, got " << type;
  ser::TensorSignature sig;
  sig.name = nameOf(fn, index, isResult);
  sig.element_type = ser::ElementType::F32;
  sig.shape.assign(t.getShape().begin(), t.getShape().end());
  return sig;
}

} // namespace

FailureOr<ser::Function> mlir::hexir::buildFunction(func::FuncOp graph,
                                                    const llvm::StringMap<unsigned> &entryIndex,
                                                    std::vector<uint8_t> &constantPool,
                                                    const BuildExecutableOptions &options) {
  ser::Function fn;
  fn.name = graph.getSymName().str();
  FunctionType type = graph.getFunctionType();
  for (unsigned i = 0; i < type.getNumInputs(); ++i) {
    auto sig = signature(graph, type.getInput(i), i, false);
    if (failed(sig))
      return failure();
    fn.inputs.push_back(*sig);
  }
  for (unsigned i = 0; i < type.getNumResults(); ++i) {
    auto sig = signature(graph, type.getResult(i), i, true);
    if (failed(sig))
      return failure();
    fn.outputs.push_back(*sig);
  }

  Block &body = graph.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<CallTirOp> dispatches;
  for (Operation &op : body) {
    if (auto call = dyn_cast<CallTirOp>(op))
      dispatches.push_back(call);
    else if (!isView(&op) && !isa<arith::ConstantOp, func::ReturnOp>(op))
      return op.emitError() << "'" << op.getName()
                            << "' survived dispatch formation; Hexir cannot run it";
  }

  // Graph outputs: the dispatch producing a returned value writes into the output buffer; any
  // other returned value (an input, a constant, a value returned twice) is copied at the end.
  llvm::DenseMap<Value, unsigned> outputOf;
  SmallVector<std::pair<Value, unsigned>> copies;
  for (auto [k, v] : llvm::enumerate(ret.getOperands())) {
    Value root = rootOf(v);
    if (root.getDefiningOp<CallTirOp>() && !outputOf.count(root))
      outputOf[root] = k;
    else
      copies.push_back({v, k});
  }

  // Schedule steps: dispatch i runs at step i, the final copies after all dispatches.
  llvm::DenseMap<Operation *, int64_t> stepOf;
  for (auto [i, d] : llvm::enumerate(dispatches))
    stepOf[d] = i;
  int64_t copyStep = static_cast<int64_t>(dispatches.size());

  // Arena buffers: every dispatch result that is not an output.
  ::hexir::planner::Problem problem;
  llvm::DenseMap<Value, unsigned> bufferOf;
  for (CallTirOp d : dispatches) {
    for (Value result : d.getResults()) {
      if (outputOf.count(result))
        continue;
      int64_t last = stepOf[d];
      SmallVector<Value> worklist = {result};
      while (!worklist.empty()) {
        Value v = worklist.pop_back_val();
        for (Operation *user : v.getUsers()) {
          if (isView(user))
            worklist.push_back(user->getResult(0));
          else if (isa<func::ReturnOp>(user))
            last = std::max(last, copyStep);
          else
            last = std::max(last, stepOf.lookup(user));
        }
      }
      ::hexir::planner::BufferRequest request;
      request.size = byteSize(result.getType());
      request.alignment = kBufferAlignment;
      request.first = stepOf[d];
      request.last = last;
      request.name = d.getCallee().str() + "#" + std::to_string(cast<OpResult>(result).getResultNumber());
      bufferOf[result] = problem.buffers.size();
      problem.buffers.push_back(request);
    }
  }
  auto plan = ::hexir::planner::SolveBestFit(problem);
  if (!plan.ok())
    return graph.emitError() << "memory planning failed: " << plan.status().message();
  if (options.verifyPlan) {
    ::hexir::Status verified = ::hexir::planner::Verify(problem, *plan);
    if (!verified.ok())
      return graph.emitError() << "memory plan failed verification (compiler bug): "
                               << verified.message();
  }
  fn.arena_bytes = plan->space_sizes.empty() ? 0 : plan->space_sizes[0];
  fn.arena_alignment = kBufferAlignment;

  ConstantPool pool(constantPool);
  llvm::DenseMap<Value, uint64_t> constantOffset;
  for (Operation &op : body) {
    if (auto c = dyn_cast<arith::ConstantOp>(op)) {
      if (!isa<RankedTensorType>(c.getType()) || c->use_empty())
        continue;
      auto bytes = constantBytes(c);
      if (failed(bytes))
        return failure();
      constantOffset[c.getResult()] = pool.add(*bytes);
    }
  }

  auto slotOf = [&](Value v) -> ser::Slot {
    Value root = rootOf(v);
    ser::Slot slot;
    slot.length = byteSize(v.getType());
    if (auto arg = dyn_cast<BlockArgument>(root)) {
      slot.space = ser::MemorySpace::Input;
      slot.index = arg.getArgNumber();
    } else if (constantOffset.count(root)) {
      slot.space = ser::MemorySpace::Constant;
      slot.offset = constantOffset[root];
    } else if (outputOf.count(root)) {
      slot.space = ser::MemorySpace::Output;
      slot.index = outputOf[root];
    } else {
      slot.space = ser::MemorySpace::Arena;
      slot.offset = plan->offsets[bufferOf[root]];
    }
    return slot;
  };

  if (fn.arena_bytes > 0)
    fn.commands.push_back(ser::AllocCommand{ser::MemorySpace::Arena, fn.arena_bytes,
                                            static_cast<uint32_t>(kBufferAlignment)});
  for (CallTirOp d : dispatches) {
    auto it = entryIndex.find(d.getCallee());
    if (it == entryIndex.end())
      return d.emitError() << "kernel " << d.getCalleeAttr() << " was not compiled";
    ser::DispatchCommand cmd;
    cmd.entry = it->second;
    for (Value v : d.getInputs())
      cmd.bindings.push_back(slotOf(v));
    for (Value v : d.getResults())
      cmd.bindings.push_back(slotOf(v));
    cmd.num_inputs = d.getInputs().size();
    cmd.aliases.assign(d.getNumResults(), -1);
    fn.commands.push_back(cmd);
  }
  for (auto [v, k] : copies) {
    ser::Slot target;
    target.space = ser::MemorySpace::Output;
    target.index = k;
    target.length = byteSize(v.getType());
    fn.commands.push_back(ser::CopyCommand{slotOf(v), target});
  }
  return fn;
}
