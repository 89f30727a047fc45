//===- RowKernel.cpp - kernels over rows: softmax, layer normalization ----===//
//
// A softmax is max(x) per row, e = exp(x - max), sum(e) per row, e / sum; a layer
// normalization is sum(x), d = x - mean, sum(d * d), d * rsqrt(var + eps) * g + b. As four
// dispatches, each full-size intermediate goes through memory twice and each kernel walks all
// rows; as one kernel, a workgroup takes a chunk of rows and runs the whole chain on it while
// the chunk is in cache. The full-size intermediates live in the kernel's output (each
// elementwise op overwrites the previous one in place), the per-row values (max, sum) in small
// stack buffers of the chunk's rows, so the kernel needs no memory beyond its operands. This
// file recognizes such a chain (dispatch formation groups it); the host tiles it
// (Target/Host/RowKernelTiling.cpp).
//
//===----------------------------------------------------------------------===//
#include "Transforms/RowKernel.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::hexir;

namespace {

bool isIdentityPrefix(AffineMap map, unsigned count) {
  if (map.getNumResults() != count)
    return false;
  for (unsigned i = 0; i < count; ++i)
    if (map.getDimPosition(i) != i)
      return false;
  return true;
}

// The op combining a reduction's accumulator with the value it reduces (it has a neutral
// element, which starts partial sums).
Operation *combinerOf(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Operation *combine = yield.getOperand(0).getDefiningOp();
  BlockArgument acc = body.getArguments().back();
  if (!combine || combine->getNumOperands() != 2 || combine->getNumResults() != 1 ||
      !isa<arith::AddFOp, arith::MulFOp, arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
           arith::MinNumFOp>(combine) ||
      (combine->getOperand(0) != acc && combine->getOperand(1) != acc) || !acc.hasOneUse())
    return nullptr;
  if (!arith::getNeutralElement(combine))
    return nullptr;
  return combine;
}

std::optional<RowOpKind> kindOf(linalg::GenericOp op, ArrayRef<int64_t> shape) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 || op->getNumResults() != 1)
    return std::nullopt;
  if (!llvm::all_of(op.getBody()->without_terminator(),
                    [](Operation &inner) { return isa<arith::ArithDialect, math::MathDialect>(inner.getDialect()); }))
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned rank = shape.size();
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (op.getNumParallelLoops() == op.getNumLoops() && out.isIdentity()) {
    if (ArrayRef<int64_t>(ranges) == shape)
      return RowOpKind::Full;
    if (rank > 1 && ArrayRef<int64_t>(ranges) == shape.drop_back())
      return RowOpKind::Row;
    return std::nullopt;
  }
  if (ArrayRef<int64_t>(ranges) != shape || op.getNumReductionLoops() != 1 ||
      op.getIteratorTypesArray().back() != utils::IteratorType::reduction || !isIdentityPrefix(out, rank - 1) ||
      !combinerOf(op))
    return std::nullopt;
  auto fill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  if (!fill || !fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>() ||
      !matchPattern(fill.getInputs()[0], m_Constant()))
    return std::nullopt;
  return RowOpKind::Reduce;
}

} // namespace

Operation *mlir::hexir::rowCombiner(linalg::GenericOp op) { return combinerOf(op); }

bool mlir::hexir::rowKernelNarrows(const RowKernel &k) {
  return !getElementTypeOrSelf(k.ops.back()->getResult(0).getType()).isF32() &&
         llvm::count(k.kinds, RowOpKind::Full) > 1;
}

int64_t mlir::hexir::rowTemporaryBytes(const RowKernel &k) {
  int64_t bytes = 0;
  for (auto [op, kind] : llvm::zip(k.ops, k.kinds)) {
    int64_t element = getElementTypeOrSelf(op->getResult(0).getType()).getIntOrFloatBitWidth() / 8;
    if (kind == RowOpKind::Reduce)
      bytes += element * (1 + kMaxRowPartial);
    else if (kind == RowOpKind::Row)
      bytes += element;
  }
  // The f32 full-shape values of a kernel whose output is narrower: one row of them.
  if (rowKernelNarrows(k))
    bytes += k.shape.back() * static_cast<int64_t>(sizeof(float));
  return bytes;
}

std::optional<RowKernel> mlir::hexir::matchRowKernel(ArrayRef<linalg::GenericOp> ops, bool requireReduction) {
  if (ops.empty())
    return std::nullopt;
  // The result is f32, or narrower (a softmax or normalization requantized to int8, rounded to
  // bf16): the values before it stay f32.
  auto resultType = dyn_cast<RankedTensorType>(ops.back()->getResult(0).getType());
  if (!resultType || !resultType.hasStaticShape() || resultType.getRank() < 1 ||
      !resultType.getElementType().isIntOrFloat() || resultType.getElementType().getIntOrFloatBitWidth() > 32 ||
      resultType.getElementType().getIntOrFloatBitWidth() % 8 != 0)
    return std::nullopt;
  RowKernel k;
  k.shape.assign(resultType.getShape().begin(), resultType.getShape().end());
  if (llvm::any_of(k.shape, [](int64_t d) { return d < 1; }))
    return std::nullopt;
  unsigned rank = k.shape.size();
  llvm::DenseMap<Operation *, unsigned> index;
  for (auto [i, op] : llvm::enumerate(ops)) {
    std::optional<RowOpKind> kind = kindOf(op, k.shape);
    if (!kind || (i + 1 < ops.size() && !getElementTypeOrSelf(op->getResult(0).getType()).isF32()))
      return std::nullopt;
    index[op] = i;
    k.ops.push_back(op);
    k.kinds.push_back(*kind);
  }
  if (k.kinds.back() != RowOpKind::Full || (requireReduction && !llvm::is_contained(k.kinds, RowOpKind::Reduce)))
    return std::nullopt;
  for (auto [i, op] : llvm::enumerate(k.ops)) {
    unsigned loops = op.getNumLoops();
    for (OpOperand *in : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(in);
      if (!map.isProjectedPermutation())
        return std::nullopt;
      // Dimensions in order (no transposes): slices of a chunk of rows stay rows.
      for (unsigned r = 1; r < map.getNumResults(); ++r)
        if (map.getDimPosition(r) <= map.getDimPosition(r - 1))
          return std::nullopt;
      auto producer = in->get().getDefiningOp<linalg::GenericOp>();
      if (!producer || !index.count(producer))
        continue;
      unsigned p = index[producer];
      if (p >= i)
        return std::nullopt;
      // A full-shape value is read element for element, a per-row value per row.
      bool ok = k.kinds[p] == RowOpKind::Full ? map.isIdentity() && loops == rank : isIdentityPrefix(map, rank - 1);
      if (!ok)
        return std::nullopt;
    }
    // Every result but the last one is read only inside the kernel.
    if (i + 1 < k.ops.size() && llvm::any_of(op->getUsers(), [&](Operation *u) {
          auto g = dyn_cast<linalg::GenericOp>(u);
          return !g || !index.count(g) || index[g] <= i;
        }))
      return std::nullopt;
    // Full and per-row ops start from tensor.empty and do not read it.
    if (k.kinds[i] != RowOpKind::Reduce &&
        (!op.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>() || !op.getBody()->getArguments().back().use_empty()))
      return std::nullopt;
  }
  // Each full-shape result is overwritten by the next full-shape op: nothing reads it after.
  std::optional<unsigned> previous;
  for (auto [i, op] : llvm::enumerate(k.ops)) {
    if (k.kinds[i] != RowOpKind::Full)
      continue;
    if (previous)
      for (Operation *user : k.ops[*previous]->getUsers())
        if (index[cast<linalg::GenericOp>(user)] > i)
          return std::nullopt;
    previous = i;
  }
  // The rows that are not split into chunks must fit the stack with one row of the split one.
  int64_t otherRows = 1;
  for (unsigned d = 0; d + 1 < rank; ++d)
    otherRows *= k.shape[d];
  int64_t largest = rank > 1 ? *llvm::max_element(ArrayRef<int64_t>(k.shape).drop_back()) : 1;
  if (rowTemporaryBytes(k) * (otherRows / largest) > kRowStackBytes)
    return std::nullopt;
  return k;
}
