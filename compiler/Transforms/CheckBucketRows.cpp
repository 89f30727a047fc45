//===- CheckBucketRows.cpp - which shape buckets may be padded or batched --===//
//
// A session pads a request of 3 rows to the 4-row bucket, and hexir-serve --max-batch runs
// several clients' rows as one batch. Both are exact only where each output row depends on
// its own input row alone. That is proved here op by op, following where the rows lie; where
// it cannot be proved the bucket is marked, and the runtime runs it at its exact size only.
// Proving rather than assuming matters: a Softmax over the batch is silently wrong when padded
// and leaks one client's input into another's answer when batched.
//
//===----------------------------------------------------------------------===//
#include "Transforms/Passes.h"

#include "Dialect/Functions.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

namespace mlir::hexir {
#define GEN_PASS_DEF_CHECKBUCKETROWS
#include "Transforms/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;
using namespace mlir::hexir;

namespace {

// Where a value's rows lie: along `axis`, index i belongs to row ((i mod span) / block). A
// value fresh from the model has block 1 and span the axis's size. Merging the row axis with
// the axes after it (B x S x H -> B*S x H) makes blocks; merging it with the axes before it
// (S x B x H -> S*B*H, as PyTorch's attention reshapes) makes the rows repeat with period span.
struct Rows {
  int64_t axis = 0;
  int64_t block = 1;
  int64_t span = 1;
  bool sameLayout(const Rows &o) const { return axis == o.axis && block == o.block && span == o.span; }
};

// The ONNX node `op` came from (the importer's NameLoc), if any.
std::optional<std::string> nodeName(Operation *op) {
  std::optional<std::string> name;
  op->getLoc()->walk([&](Location loc) {
    if (auto named = dyn_cast<NameLoc>(loc)) {
      name = named.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return name;
}

// "node 'sm'" from the ONNX importer's location, else the op's name and location.
std::string describe(Operation *op) {
  if (std::optional<std::string> name = nodeName(op))
    return "node '" + *name + "'";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "'" << op->getName() << "' at " << op->getLoc();
  return text;
}

// The ONNX node to name for `op`: its own, else that of the nearest op reading its results (a
// folded constant has no node; the node computing with it, or the output it is, is what the
// user wrote).
std::string describeNear(Operation *op) {
  SmallVector<std::pair<Operation *, Value>> queue{{op, Value()}};
  llvm::SmallPtrSet<Operation *, 16> seen{op};
  for (size_t i = 0; i < queue.size() && i < 1000; ++i) {
    auto [at, from] = queue[i];
    if (auto ret = dyn_cast<func::ReturnOp>(at)) {
      auto fn = ret->getParentOfType<func::FuncOp>();
      for (OpOperand &use : ret->getOpOperands())
        if (use.get() == from)
          if (auto name = fn.getResultAttrOfType<StringAttr>(use.getOperandNumber(), kNameAttrName))
            return "output '" + name.str() + "'";
      continue;
    }
    if (nodeName(at))
      return describe(at);
    for (Value result : at->getResults())
      for (Operation *user : result.getUsers())
        if (seen.insert(user).second)
          queue.push_back({user, result});
  }
  return describe(op);
}

int64_t product(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

// Follows the rows of one dimension through one bucket function.
class RowFlow {
public:
  explicit RowFlow(StringRef dim) : dim_(dim.str()) {}

  // Why rows interact ("" when they are proved independent). `rowArgs`/`rowResults`: which
  // arguments and results carry the dimension on their leading axis.
  std::string check(func::FuncOp fn, ArrayRef<bool> rowArgs, ArrayRef<bool> rowResults, int64_t size) {
    for (auto [arg, rows] : llvm::zip(fn.getArguments(), rowArgs))
      if (rows)
        rows_[arg] = Rows{0, 1, size};
    size_ = size;
    for (Operation &op : fn.getBody().front()) {
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        checkResults(fn, ret, rowResults);
        break;
      }
      if (!visit(&op))
        break;
    }
    return reason_;
  }

  // Where `v`'s rows lie after check (nullopt: it has none).
  std::optional<Rows> rowsOf(Value v) const {
    auto it = rows_.find(v);
    return it == rows_.end() ? std::nullopt : std::optional<Rows>(it->second);
  }

private:
  std::string dim_;
  int64_t size_ = 1;  // the dimension's size in this bucket
  llvm::DenseMap<Value, Rows> rows_;
  std::string reason_;
  bool mixed(Operation *op, const Twine &why) {
    if (reason_.empty())
      reason_ = "dimension '" + dim_ + "': " + describe(op) + " " + why.str();
    return false;
  }
  bool anyRows(Operation *op) const {
    return llvm::any_of(op->getOperands(), [&](Value v) { return rows_.count(v); });
  }

  bool visit(Operation *op) {
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      return visitLinalg(linalgOp);
    if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::ReshapeOp>(op))
      return visitReshape(op);
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op))
      return visitExtractSlice(slice);
    if (auto insert = dyn_cast<tensor::InsertSliceOp>(op))
      return visitInsertSlice(insert);
    if (auto pad = dyn_cast<tensor::PadOp>(op))
      return visitPad(pad);
    if (auto concat = dyn_cast<tensor::ConcatOp>(op))
      return visitConcat(concat);
    if (isa<tensor::CastOp, tensor::BitcastOp>(op) || (op->hasTrait<OpTrait::Elementwise>() && op->getNumResults() == 1 &&
                                                       isa<RankedTensorType>(op->getResult(0).getType())))
      return visitSameShape(op);
    if (!anyRows(op))
      return true;
    if (isa<tensor::ExtractOp>(op))
      return mixed(op, "reads one element of the rows as a scalar");
    return mixed(op, "is not known to keep rows apart (" + op->getName().getStringRef() + ")");
  }

  // Whether every row of `v` laid out as `rows` is the same (a value without rows that a row
  // loop reads by its position must be, or an answer would depend on where its row sits in a
  // batch): splats, broadcasts of what has no row axis, constants whose rows are equal.
  bool uniform(Value v, Rows rows, int depth = 0) const {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || rows.axis >= type.getRank() || rows.span <= rows.block)
      return true;
    if (depth > 16 || !v.getDefiningOp())
      return false;
    Operation *def = v.getDefiningOp();
    if (isa<tensor::EmptyOp>(def))
      return true;
    if (auto cast = dyn_cast<tensor::CastOp>(def))
      return uniform(cast.getSource(), rows, depth + 1);
    if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::ReshapeOp>(def)) {
      std::optional<Rows> source = throughReshape(def, rows, false);
      return source && uniform(def->getOperand(0), *source, depth + 1);
    }
    ElementsAttr constant;
    if (matchPattern(v, m_Constant(&constant)))
      return uniformConstant(constant, rows);
    auto linalgOp = dyn_cast<linalg::LinalgOp>(def);
    if (!linalgOp)
      return false;
    auto dim = dyn_cast<AffineDimExpr>(linalgOp.getIndexingMapMatchingResult(cast<OpResult>(v)).getResult(rows.axis));
    if (!dim)
      return false;
    unsigned loop = dim.getPosition();
    bool positional = false;
    linalgOp->walk([&](linalg::IndexOp index) { positional |= index.getDim() == loop; });
    if (positional)
      return false;
    for (OpOperand &operand : linalgOp->getOpOperands()) {
      if (linalgOp.isDpsInit(&operand) && !linalgOp.payloadUsesValueFromOperand(&operand))
        continue;
      AffineMap map = linalgOp.getMatchingIndexingMap(&operand);
      for (unsigned a = 0; a < map.getNumResults(); ++a)
        if (map.getResult(a).isFunctionOfDim(loop) &&
            (!isa<AffineDimExpr>(map.getResult(a)) ||
             !uniform(operand.get(), Rows{a, rows.block, rows.span}, depth + 1)))
          return false;
    }
    return true;
  }

  static bool uniformConstant(ElementsAttr constant, Rows rows) {
    auto dense = dyn_cast<DenseElementsAttr>(constant);
    if (dense && dense.isSplat())
      return true;
    // Constants laid out along a row axis are rare (positions, per-row tables); a large one is
    // taken as varying rather than compared element by element.
    if (!dense || dense.getNumElements() > (int64_t{1} << 20))
      return false;
    ArrayRef<int64_t> shape = dense.getType().getShape();
    int64_t inner = product(shape.drop_front(rows.axis + 1)), size = shape[rows.axis];
    SmallVector<Attribute> values(dense.getValues<Attribute>());
    for (int64_t i = 0; i < static_cast<int64_t>(values.size()); ++i) {
      int64_t at = (i / inner) % size, row = (at % rows.span) / rows.block;
      if (row != 0 && values[i] != values[i - row * rows.block * inner])
        return false;
    }
    return true;
  }

  bool visitLinalg(linalg::LinalgOp op) {
    // The loop that runs over the rows: the one indexing the row axis of every operand with
    // rows and of every tensor with rows the body reads by tensor.extract, all laid out alike.
    std::optional<unsigned> loop;
    Rows layout;
    auto agree = [&](unsigned d, Rows r) {
      if (!loop) {
        loop = d;
        layout = r;
        return true;
      }
      return *loop == d && layout.block == r.block && layout.span == r.span;
    };
    for (OpOperand &operand : op->getOpOperands()) {
      std::optional<Rows> rows = rowsOf(operand.get());
      if (!rows)
        continue;
      auto d = dyn_cast<AffineDimExpr>(op.getMatchingIndexingMap(&operand).getResult(rows->axis));
      if (!d || !agree(d.getPosition(), *rows))
        return mixed(op, "moves data between rows");
    }
    bool readsOthers = false;
    op->getRegion(0).walk([&](tensor::ExtractOp extract) {
      std::optional<Rows> rows = rowsOf(extract.getTensor());
      if (!rows)
        return;
      auto index = extract.getIndices()[rows->axis].getDefiningOp<linalg::IndexOp>();
      if (!index || index->getParentOfType<linalg::LinalgOp>() != op || !agree(index.getDim(), *rows))
        readsOthers = true;
    });
    if (readsOthers)
      return mixed(op, "reads rows other than its own (a gather along them)");
    bool readsWhole = false;
    op->getRegion(0).walk([&](Operation *inner) {
      if (!isa<tensor::ExtractOp>(inner))
        readsWhole |= llvm::any_of(inner->getOperands(), [&](Value v) { return rows_.count(v) != 0; });
    });
    if (readsWhole)
      return mixed(op, "is not known to keep rows apart (its body reads them)");
    if (!loop)
      return true;  // no rows in, no rows out
    if (op.getIteratorTypesArray()[*loop] != utils::IteratorType::parallel)
      return mixed(op, "combines rows (a reduction or contraction over them)");
    // The row loop indexes the row axis alone: another axis of a tensor with rows read along
    // it (a diagonal, `(d0, d1) -> (d0, d1, d0)`) is a position or another row.
    for (OpOperand &operand : op->getOpOperands()) {
      std::optional<Rows> rows = rowsOf(operand.get());
      if (!rows)
        continue;
      AffineMap map = op.getMatchingIndexingMap(&operand);
      for (unsigned a = 0; a < map.getNumResults(); ++a)
        if (a != rows->axis && map.getResult(a).isFunctionOfDim(*loop))
          return mixed(op, "moves data between rows");
    }
    // The row loop's index may only pick a row of a tensor with rows.
    bool positional = false;
    op->getRegion(0).walk([&](linalg::IndexOp index) {
      if (index.getDim() != *loop || index->getParentOfType<linalg::LinalgOp>() != op)
        return;
      for (OpOperand &use : index->getUses()) {
        auto extract = dyn_cast<tensor::ExtractOp>(use.getOwner());
        std::optional<Rows> rows = extract ? rowsOf(extract.getTensor()) : std::nullopt;
        positional |= !rows || use.getOperandNumber() != 1 + rows->axis;
      }
    });
    if (positional)
      return mixed(op, "depends on a row's position in the batch");
    for (OpOperand &operand : op->getOpOperands()) {
      if (rows_.count(operand.get()) || (op.isDpsInit(&operand) && !op.payloadUsesValueFromOperand(&operand)))
        continue;
      AffineMap map = op.getMatchingIndexingMap(&operand);
      for (unsigned a = 0; a < map.getNumResults(); ++a)
        if (map.getResult(a).isFunctionOfDim(*loop) &&
            (!isa<AffineDimExpr>(map.getResult(a)) || !uniform(operand.get(), Rows{a, layout.block, layout.span})))
          return mixed(op, "depends on a row's position in the batch (it reads a tensor that varies along the rows)");
    }
    for (OpResult result : op->getResults()) {
      AffineMap map = op.getIndexingMapMatchingResult(result);
      std::optional<int64_t> axis;
      for (unsigned a = 0; a < map.getNumResults() && !axis; ++a)
        if (map.getResult(a) == getAffineDimExpr(*loop, op->getContext()))
          axis = a;
      if (!axis)
        return mixed(op, "combines rows (a reduction or contraction over them)");
      for (unsigned a = 0; a < map.getNumResults(); ++a)
        if (a != *axis && map.getResult(a).isFunctionOfDim(*loop))
          return mixed(op, "moves data between rows");
      rows_[result] = Rows{*axis, layout.block, layout.span};
    }
    return true;
  }

  // Rows through a reshape, `forward` from source to result or back (uniform() asks the
  // source of a result's rows). Reassociation groups pair the axes of the two sides; within
  // the pair holding the row axis, the rows are merged into one axis and split again.
  static std::optional<Rows> throughReshape(Operation *op, Rows rows, bool forward) {
    auto srcType = cast<RankedTensorType>(op->getOperand(0).getType());
    auto resType = cast<RankedTensorType>(op->getResult(0).getType());
    if (!srcType.hasStaticShape() || !resType.hasStaticShape())
      return std::nullopt;
    SmallVector<std::pair<SmallVector<int64_t>, SmallVector<int64_t>>> pairs;  // (source axes, result axes)
    auto seq = [](int64_t from, int64_t to) { return llvm::to_vector(llvm::seq<int64_t>(from, to)); };
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
      for (auto [g, group] : llvm::enumerate(collapse.getReassociationIndices()))
        pairs.push_back({SmallVector<int64_t>(group.begin(), group.end()), {static_cast<int64_t>(g)}});
    } else if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
      for (auto [g, group] : llvm::enumerate(expand.getReassociationIndices()))
        pairs.push_back({{static_cast<int64_t>(g)}, SmallVector<int64_t>(group.begin(), group.end())});
    } else {
      pairs.push_back({seq(0, srcType.getRank()), seq(0, resType.getRank())});
    }
    ArrayRef<int64_t> from = forward ? srcType.getShape() : resType.getShape();
    ArrayRef<int64_t> to = forward ? resType.getShape() : srcType.getShape();
    for (auto &[srcAxes, resAxes] : pairs) {
      ArrayRef<int64_t> fromAxes = forward ? srcAxes : resAxes, toAxes = forward ? resAxes : srcAxes;
      if (llvm::is_contained(fromAxes, rows.axis))
        return split(merge(rows, from, fromAxes), to, toAxes);
    }
    return std::nullopt;
  }

  // The rows of `axes` (holding rows.axis) merged into one axis: an index of the merged axis is
  // (outer * size + i) * after + t with i the row axis's index, so the block and the span
  // grow by `after`, and the axes before do not matter (the span takes the index modulo).
  static Rows merge(Rows rows, ArrayRef<int64_t> shape, ArrayRef<int64_t> axes) {
    int64_t after = 1;
    for (int64_t a : axes)
      if (a > rows.axis)
        after *= shape[a];
    return Rows{-1, rows.block * after, rows.span * after};
  }

  // One merged axis of rows split into `axes`: the rows lie along axis j when the elements
  // after it (inner) divide the block, and a whole number of spans fits in j and after it
  // (so the axes before j only repeat the pattern).
  static std::optional<Rows> split(Rows merged, ArrayRef<int64_t> shape, ArrayRef<int64_t> axes) {
    for (size_t j = axes.size(); j-- > 0;) {
      int64_t inner = 1;
      for (size_t k = j + 1; k < axes.size(); ++k)
        inner *= shape[axes[k]];
      if (merged.block % inner == 0 && (shape[axes[j]] * inner) % merged.span == 0)
        return Rows{axes[j], merged.block / inner, merged.span / inner};
    }
    return std::nullopt;
  }

  bool visitReshape(Operation *op) {
    std::optional<Rows> rows = rowsOf(op->getOperand(0));
    if (!rows)
      return true;
    std::optional<Rows> moved = throughReshape(op, *rows, true);
    if (!moved)
      return mixed(op, "reshapes the row axis so that rows interleave");
    rows_[op->getResult(0)] = *moved;
    return true;
  }

  // A slice keeps rows when it takes every index of the row axis.
  static bool whole(OffsetSizeAndStrideOpInterface op, int64_t axis, int64_t size) {
    return op.isDynamicOffset(axis) == false && op.getStaticOffset(axis) == 0 && !op.isDynamicSize(axis) &&
           op.getStaticSize(axis) == size && !op.isDynamicStride(axis) && op.getStaticStride(axis) == 1;
  }

  bool visitExtractSlice(tensor::ExtractSliceOp op) {
    std::optional<Rows> rows = rowsOf(op.getSource());
    if (!rows)
      return true;
    llvm::SmallBitVector dropped = op.getDroppedDims();
    if (!whole(op, rows->axis, op.getSourceType().getDimSize(rows->axis)) || dropped.test(rows->axis))
      return mixed(op, "takes some rows only");
    int64_t axis = rows->axis;
    for (int64_t a = 0; a < rows->axis; ++a)
      axis -= dropped.test(a) ? 1 : 0;
    rows_[op.getResult()] = Rows{axis, rows->block, rows->span};
    return true;
  }

  bool visitInsertSlice(tensor::InsertSliceOp op) {
    std::optional<Rows> src = rowsOf(op.getSource()), dest = rowsOf(op.getDest());
    if (!src && !dest)
      return true;
    // Source axes are the destination's axes less the dropped ones.
    llvm::SmallBitVector dropped = op.getDroppedDims();
    SmallVector<int64_t> destAxisOf;
    for (int64_t a = 0; a < op.getDestType().getRank(); ++a)
      if (!dropped.test(a))
        destAxisOf.push_back(a);
    Rows rows = src ? Rows{destAxisOf[src->axis], src->block, src->span} : *dest;
    if (src && dest && !rows.sameLayout(*dest))
      return mixed(op, "moves data between rows");
    if (!whole(op, rows.axis, op.getDestType().getDimSize(rows.axis)))
      return mixed(op, "writes some rows only");
    if (!src) {
      auto at = llvm::find(destAxisOf, rows.axis);
      if (at != destAxisOf.end() && !uniform(op.getSource(), Rows{at - destAxisOf.begin(), rows.block, rows.span}))
        return mixed(op, "depends on a row's position in the batch");
    }
    if (!dest && !uniform(op.getDest(), rows))
      return mixed(op, "depends on a row's position in the batch");
    rows_[op.getResult()] = rows;
    return true;
  }

  bool visitPad(tensor::PadOp op) {
    std::optional<Rows> rows = rowsOf(op.getSource());
    if (!rows)
      return true;
    ArrayRef<int64_t> low = op.getStaticLow(), high = op.getStaticHigh();
    if (low[rows->axis] != 0 || high[rows->axis] != 0)
      return mixed(op, "pads along the rows");
    rows_[op.getResult()] = *rows;
    return true;
  }

  // Tensors read at the same indices as the result (a concatenation's off its axis, an
  // elementwise op's): those with rows must lay them out alike, the others be the same in
  // every row. The result's rows, or nullopt (none has rows, or `op` mixes them: see reason_).
  std::optional<Rows> alignedRows(Operation *op, ValueRange values) {
    std::optional<Rows> rows;
    for (Value v : values)
      if (std::optional<Rows> r = rowsOf(v)) {
        if (rows && !rows->sameLayout(*r)) {
          mixed(op, "moves data between rows");
          return std::nullopt;
        }
        rows = r;
      }
    for (Value v : values)
      if (rows && !rows_.count(v) && isa<RankedTensorType>(v.getType()) && !uniform(v, *rows)) {
        mixed(op, "depends on a row's position in the batch");
        return std::nullopt;
      }
    return rows;
  }

  bool visitConcat(tensor::ConcatOp op) {
    std::optional<Rows> rows = alignedRows(op, op.getInputs());
    if (rows && static_cast<int64_t>(op.getDim()) == rows->axis)
      return mixed(op, "joins tensors along the rows");
    if (rows)
      rows_[op.getResult()] = *rows;
    return reason_.empty();
  }

  // Ops whose result has its operands' shape, element by element (tensor.cast, arith on tensors).
  bool visitSameShape(Operation *op) {
    std::optional<Rows> rows = alignedRows(op, op->getOperands());
    if (rows)
      rows_[op->getResult(0)] = *rows;
    return reason_.empty();
  }

  void checkResults(func::FuncOp fn, func::ReturnOp ret, ArrayRef<bool> rowResults) {
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      if (!reason_.empty())
        return;
      std::string name = "output " + std::to_string(i);
      if (auto attr = fn.getResultAttrOfType<StringAttr>(i, kNameAttrName))
        name = "output '" + attr.str() + "'";
      std::optional<Rows> rows = rowsOf(v);
      if (rowResults[i] && rows && !rows->sameLayout(Rows{0, 1, size_}))
        reason_ = "dimension '" + dim_ + "': " + name + " holds its rows along another axis";
      else if (rowResults[i] && !rows && !uniform(v, Rows{0, 1, size_}))
        reason_ = "dimension '" + dim_ + "': " + name + " depends on a row's position in the batch";
      else if (!rowResults[i] && rows)
        reason_ = "dimension '" + dim_ + "': " + name + " has no '" + dim_ + "' axis but is computed from the rows";
    }
  }
};

// Two imports of one model at two sizes of a dimension (a bucket, and the same model at the
// smallest size padded into it) compute the same thing, row by row, only if they are one graph
// whose shapes scale with the size: the same ops in the same order on corresponding operands,
// equal attributes and constants, every extent equal or in the sizes' ratio, and the rows of
// every value laid out alike. What the model derives from the size (x / Shape(x)[0], a Reshape
// to [4, -1], a Loop counted by the batch, a branch taken on it) differs between the two.
class SameModel {
public:
  SameModel(int64_t sizeA, int64_t sizeB, const RowFlow &rowsA, const RowFlow &rowsB)
      : a_(sizeA), b_(sizeB), rowsA_(rowsA), rowsB_(rowsB) {}

  // The first op of `a` that differs from `b` (nullptr: none).
  Operation *firstDifference(func::FuncOp a, func::FuncOp b) {
    if (a.getNumArguments() != b.getNumArguments())
      return a;
    for (auto [x, y] : llvm::zip(a.getArguments(), b.getArguments()))
      values_[x] = y;
    return blocks(a.getBody().front(), b.getBody().front());
  }

private:
  int64_t a_, b_;
  const RowFlow &rowsA_, &rowsB_;
  llvm::DenseMap<Value, Value> values_;

  bool extent(int64_t x, int64_t y) const {
    return x == y || (!ShapedType::isDynamic(x) && !ShapedType::isDynamic(y) && x * b_ == y * a_);
  }
  bool type(Type x, Type y) const {
    auto tx = dyn_cast<RankedTensorType>(x), ty = dyn_cast<RankedTensorType>(y);
    if (!tx || !ty)
      return x == y;
    if (tx.getRank() != ty.getRank() || tx.getElementType() != ty.getElementType() ||
        tx.getEncoding() != ty.getEncoding())
      return false;
    return llvm::all_of(llvm::seq<int64_t>(0, tx.getRank()),
                        [&](int64_t d) { return extent(tx.getDimSize(d), ty.getDimSize(d)); });
  }
  bool attribute(Attribute x, Attribute y) const {
    if (x == y)
      return true;
    if (auto ix = dyn_cast<DenseI64ArrayAttr>(x))
      if (auto iy = dyn_cast<DenseI64ArrayAttr>(y))
        return ix.size() == iy.size() &&
               llvm::all_of(llvm::zip(ix.asArrayRef(), iy.asArrayRef()),
                            [&](auto p) { return extent(std::get<0>(p), std::get<1>(p)); });
    if (auto tx = dyn_cast<TypeAttr>(x))
      if (auto ty = dyn_cast<TypeAttr>(y))
        return type(tx.getValue(), ty.getValue());
    // A splat of one value in both shapes (zeros to fill, a broadcast scalar).
    if (auto dx = dyn_cast<DenseElementsAttr>(x))
      if (auto dy = dyn_cast<DenseElementsAttr>(y))
        return dx.isSplat() && dy.isSplat() && type(dx.getType(), dy.getType()) &&
               dx.getSplatValue<Attribute>() == dy.getSplatValue<Attribute>();
    return false;
  }
  bool sameRows(Value x, Value y) const {
    std::optional<Rows> rx = rowsA_.rowsOf(x), ry = rowsB_.rowsOf(y);
    if (!rx || !ry)
      return !rx && !ry;
    return rx->axis == ry->axis && rx->block == ry->block && rx->span * b_ == ry->span * a_;
  }
  bool operation(Operation *x, Operation *y) {
    if (x->getName() != y->getName() || x->getNumOperands() != y->getNumOperands() ||
        x->getNumResults() != y->getNumResults() || x->getNumRegions() != y->getNumRegions())
      return false;
    // A reduction over an extent that follows the size (a sum of ConstantOfShape(Shape(x)[0])
    // ones is the batch size) computes something else at each size, even on splats.
    if (auto lx = dyn_cast<linalg::LinalgOp>(x)) {
      auto ly = cast<linalg::LinalgOp>(y);
      SmallVector<int64_t> rx = lx.getStaticLoopRanges(), ry = ly.getStaticLoopRanges();
      SmallVector<utils::IteratorType> kinds = lx.getIteratorTypesArray();
      if (rx.size() != ry.size())
        return false;
      for (size_t l = 0; l < rx.size(); ++l)
        if (kinds[l] != utils::IteratorType::parallel && rx[l] != ry[l])
          return false;
    }
    for (auto [u, v] : llvm::zip(x->getOperands(), y->getOperands())) {
      auto it = values_.find(u);
      if (it == values_.end() || it->second != v)
        return false;
    }
    DictionaryAttr ax = x->getAttrDictionary(), ay = y->getAttrDictionary();
    if (ax.size() != ay.size())
      return false;
    for (NamedAttribute attr : ax) {
      Attribute other = ay.get(attr.getName());
      if (!other || !attribute(attr.getValue(), other))
        return false;
    }
    for (auto [u, v] : llvm::zip(x->getResults(), y->getResults())) {
      if (!type(u.getType(), v.getType()) || !sameRows(u, v))
        return false;
      values_[u] = v;
    }
    for (auto [rx, ry] : llvm::zip(x->getRegions(), y->getRegions())) {
      if (rx.getBlocks().size() != ry.getBlocks().size())
        return false;
      for (auto [bx, by] : llvm::zip(rx, ry))
        if (blocks(bx, by))
          return false;
    }
    return true;
  }
  Operation *blocks(Block &x, Block &y) {
    if (x.getNumArguments() != y.getNumArguments())
      return x.getParentOp();
    for (auto [u, v] : llvm::zip(x.getArguments(), y.getArguments())) {
      if (!type(u.getType(), v.getType()))
        return x.getParentOp();
      values_[u] = v;
    }
    auto ix = x.begin(), iy = y.begin();
    for (; ix != x.end() && iy != y.end(); ++ix, ++iy)
      if (!operation(&*ix, &*iy))
        return &*ix;
    if (ix != x.end())
      return &*ix;
    return iy != y.end() ? x.getParentOp() : nullptr;
  }
};

// The bucket functions of one model function, as vm/buckets.h groups them, and the imports at
// other sizes made to check them (hexir.bucket_probe, see the driver's importShapeBuckets).
struct BucketGroup {
  SmallVector<func::FuncOp> members;
  SmallVector<std::string> dims;
  SmallVector<SmallVector<int64_t>> values;  // per member, per dimension
  SmallVector<func::FuncOp> probes;
};

SmallVector<int64_t> valuesOf(func::FuncOp fn) {
  return SmallVector<int64_t>(fn->getAttrOfType<DenseI64ArrayAttr>(kBucketDimValuesAttrName).asArrayRef());
}

// Per tensor of the signature (arguments, then results), per axis: the dimension whose value
// is its size in every member, and which varies among them (-1: none). vm/buckets.cc reads the
// same off the file; the two must agree.
SmallVector<SmallVector<int>> carriedDims(ArrayRef<func::FuncOp> members) {
  FunctionType first = func::FuncOp(members.front()).getFunctionType();
  size_t numDims = valuesOf(members.front()).size();
  SmallVector<Type> tensors(first.getInputs());
  llvm::append_range(tensors, first.getResults());
  SmallVector<SmallVector<int>> carried;
  for (size_t t = 0; t < tensors.size(); ++t) {
    auto type = dyn_cast<RankedTensorType>(tensors[t]);
    carried.emplace_back(type ? type.getRank() : 0, -1);
    for (int64_t a = 0; type && a < type.getRank(); ++a)
      for (size_t d = 0; d < numDims && carried[t][a] < 0; ++d) {
        bool follows = true, varies = false;
        int64_t firstValue = valuesOf(members.front())[d];
        for (func::FuncOp member : members) {
          FunctionType ft = member.getFunctionType();
          int64_t value = valuesOf(member)[d];
          Type mt = t < ft.getNumInputs() ? ft.getInput(t) : ft.getResult(t - ft.getNumInputs());
          auto shaped = dyn_cast<RankedTensorType>(mt);
          follows &= shaped && shaped.getRank() == type.getRank() && shaped.getDimSize(a) == value;
          varies |= value != firstValue;
        }
        if (follows && varies)
          carried[t][a] = static_cast<int>(d);
      }
  }
  return carried;
}

// Per dimension, per tensor of the signature: whether its leading axis carries the dimension,
// for the dimensions that are padded (the leading axis of every tensor that carries them).
SmallVector<std::pair<size_t, SmallVector<bool>>> paddedDims(ArrayRef<func::FuncOp> members) {
  SmallVector<SmallVector<int>> carried = carriedDims(members);
  SmallVector<std::pair<size_t, SmallVector<bool>>> padded;
  for (size_t d = 0; d < valuesOf(members.front()).size(); ++d) {
    SmallVector<bool> leading;
    bool anywhere = false, paddable = true;
    for (const SmallVector<int> &axes : carried) {
      leading.push_back(!axes.empty() && axes[0] == static_cast<int>(d));
      for (size_t a = 0; a < axes.size(); ++a)
        if (axes[a] == static_cast<int>(d)) {
          anywhere = true;
          paddable &= a == 0;
        }
    }
    if (anywhere && paddable)
      padded.push_back({d, std::move(leading)});
  }
  return padded;
}

struct CheckBucketRowsPass : public mlir::hexir::impl::CheckBucketRowsBase<CheckBucketRowsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::MapVector<StringRef, BucketGroup> groups;
    llvm::StringMap<func::FuncOp> byName;
    for (auto fn : module.getOps<func::FuncOp>())
      byName[fn.getSymName()] = fn;
    for (auto fn : module.getOps<func::FuncOp>()) {
      auto of = fn->getAttrOfType<StringAttr>(kBucketOfAttrName);
      if (!of || isBody(fn))
        continue;
      BucketGroup &group = groups[of.getValue()];
      if (fn->hasAttr(kBucketProbeAttrName)) {
        group.probes.push_back(fn);
        continue;
      }
      if (group.members.empty())
        for (StringRef name : fn->getAttrOfType<ArrayAttr>(kBucketDimNamesAttrName).getAsValueRange<StringAttr>())
          group.dims.push_back(name.str());
      group.members.push_back(fn);
      group.values.push_back(valuesOf(fn));
    }
    for (auto &[name, group] : groups) {
      if (group.members.empty())
        continue;
      unsigned numArgs = group.members.front().getNumArguments();
      for (auto &[d, leading] : paddedDims(group.members)) {
        ArrayRef<bool> rowArgs = ArrayRef<bool>(leading).take_front(numArgs);
        ArrayRef<bool> rowResults = ArrayRef<bool>(leading).drop_front(numArgs);
        StringRef dim = group.dims[d];
        std::string reason;
        for (auto [m, fn] : llvm::enumerate(group.members)) {
          int64_t size = group.values[m][d];
          // One row cannot interact with another.
          if (size <= 1)
            continue;
          RowFlow rows(dim);
          reason = rows.check(fn, rowArgs, rowResults, size);
          if (!reason.empty())
            break;
          // The same model at the smallest size padded into this bucket (the driver's probe).
          for (func::FuncOp probe : group.probes) {
            auto probeDim = probe->getAttrOfType<IntegerAttr>(kBucketProbeDimAttrName);
            if (probe->getAttrOfType<StringAttr>(kBucketProbeAttrName).getValue() != fn.getSymName() ||
                !probeDim || probeDim.getInt() != static_cast<int64_t>(d))
              continue;
            int64_t probeSize = valuesOf(probe)[d];
            RowFlow probeRows(dim);
            reason = probeRows.check(probe, rowArgs, rowResults, probeSize);
            if (!reason.empty())
              break;
            SameModel same(size, probeSize, rows, probeRows);
            if (Operation *op = same.firstDifference(fn, probe)) {
              reason = "dimension '" + dim.str() + "': " + describeNear(op) + " depends on the size of '" + dim.str() +
                       "' (the model differs between " + std::to_string(size) + " and " +
                       std::to_string(probeSize) + " rows)";
              break;
            }
          }
          if (!reason.empty())
            break;
        }
        if (reason.empty())
          continue;
        // Every bucket a request may be padded into: the model is one, and padding into any
        // bucket stands for running it at the caller's size.
        for (auto [m, fn] : llvm::enumerate(group.members))
          if (group.values[m][d] > 1 && !fn->hasAttr(kRowsMixedByAttrName))
            fn->setAttr(kRowsMixedByAttrName, StringAttr::get(fn.getContext(), reason));
      }
    }
    // The probes (and their loop and branch bodies) only served the check.
    for (auto fn : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (fn->hasAttr(kBucketProbeAttrName))
        fn.erase();
  }
};

} // namespace

SmallVector<size_t> mlir::hexir::paddedBucketDims(ArrayRef<func::FuncOp> buckets) {
  SmallVector<size_t> dims;
  for (auto &[d, leading] : paddedDims(buckets))
    dims.push_back(d);
  return dims;
}
