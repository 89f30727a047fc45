//===- OutlineControlFlow.cpp - scf.if / scf.while to hexir.if / hexir.loop ===//
//
// MLIR inputs express control flow with scf; Hexir runs it as hexir.if and hexir.loop over body
// functions (what the ONNX importer makes of If and Loop), so everything after this pass sees
// one form. A region becomes a function marked hexir.body: its block arguments first, then
// the values it reads from outside (captures); constants are copied in instead of captured.
//
//===----------------------------------------------------------------------===//
#include "Transforms/Passes.h"

#include "Dialect/Functions.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::hexir {
#define GEN_PASS_DEF_OUTLINECONTROLFLOW
#include "Transforms/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;
using namespace mlir::hexir;

namespace {

bool isConstant(Value v) { return v.getDefiningOp() && isa<arith::ConstantOp, tosa::ConstOp>(v.getDefiningOp()); }

// The bool tensor an i1 condition was read from: `tensor.extract %t[...]` of a one-element
// tensor<i8>, then `arith.trunci` to i1 or `arith.cmpi ne` against 0.
FailureOr<Value> conditionTensor(Operation *user, Value condition) {
  Value byte;
  if (auto trunc = condition.getDefiningOp<arith::TruncIOp>())
    byte = trunc.getIn();
  else if (auto cmp = condition.getDefiningOp<arith::CmpIOp>();
           cmp && cmp.getPredicate() == arith::CmpIPredicate::ne && matchPattern(cmp.getRhs(), m_Zero()))
    byte = cmp.getLhs();
  auto extract = byte ? byte.getDefiningOp<tensor::ExtractOp>() : tensor::ExtractOp();
  auto type = extract ? dyn_cast<RankedTensorType>(extract.getTensor().getType()) : RankedTensorType();
  if (!type || type.getNumElements() != 1 || !type.getElementType().isSignlessInteger(8))
    return user->emitError() << "the condition must be read from a one-element tensor<i8> (a bool) by tensor.extract, "
                                "then arith.trunci to i1 or arith.cmpi ne against 0: Hexir's graphs pass tensors only";
  return extract.getTensor();
}

class Outliner {
public:
  Outliner(ModuleOp module) : module(module), symbols(module) {}

  // Outlines every scf.if and scf.while at the top of `fn` (and of the bodies it makes).
  LogicalResult run(func::FuncOp fn) {
    SmallVector<func::FuncOp> worklist = {fn};
    while (!worklist.empty()) {
      func::FuncOp current = worklist.pop_back_val();
      SmallVector<Operation *> ops;
      for (Operation &op : current.getBody().front())
        if (isa<scf::IfOp, scf::WhileOp>(op))
          ops.push_back(&op);
      for (Operation *op : ops) {
        LogicalResult done = isa<scf::IfOp>(op) ? outlineIf(cast<scf::IfOp>(op), current, worklist)
                                                : outlineWhile(cast<scf::WhileOp>(op), current, worklist);
        if (failed(done))
          return failure();
      }
    }
    return success();
  }

private:
  // A new body function named after `graph` and `kind`, taking `argTypes` then the captures:
  // the values `regions` read from outside (gathered in `captures`; constants are cloned into
  // its entry block instead). `map` maps those values into it; the caller fills the block.
  func::FuncOp makeBody(func::FuncOp graph, StringRef kind, TypeRange argTypes, ArrayRef<Region *> regions,
                        SmallVectorImpl<Value> &captures, IRMapping &map, Block *&entry) {
    llvm::SetVector<Value> outside;
    for (Region *r : regions)
      getUsedValuesDefinedAbove(*r, outside);
    OpBuilder b(module.getContext());
    b.setInsertionPointToEnd(module.getBody());
    auto fn = func::FuncOp::create(b, graph.getLoc(), (graph.getSymName() + "_" + kind).str(),
                                   b.getFunctionType(argTypes, {}));
    fn.setPrivate();
    fn->setAttr(kBodyAttrName, b.getUnitAttr());
    symbols.insert(fn);  // renames on a clash
    entry = fn.addEntryBlock();
    OpBuilder eb = OpBuilder::atBlockEnd(entry);
    for (Value v : outside) {
      if (isConstant(v)) {
        map.map(v, eb.clone(*v.getDefiningOp())->getResult(0));
      } else {
        captures.push_back(v);
        map.map(v, entry->addArgument(v.getType(), v.getLoc()));
      }
    }
    return fn;
  }

  // Clones `block`'s ops but its terminator after `at`, its arguments as `args`; the
  // terminator's operands, mapped.
  SmallVector<Value> inlineBlock(OpBuilder &at, Block &block, ValueRange args, IRMapping &map) {
    for (auto [arg, v] : llvm::zip(block.getArguments(), args))
      map.map(arg, v);
    for (Operation &op : block.without_terminator())
      at.clone(op, map);
    SmallVector<Value> out;
    for (Value v : block.getTerminator()->getOperands())
      out.push_back(map.lookupOrDefault(v));
    return out;
  }

  void finish(func::FuncOp fn, Block *entry, ValueRange results) {
    OpBuilder eb = OpBuilder::atBlockEnd(entry);
    func::ReturnOp::create(eb, fn.getLoc(), results);
    fn.setType(FunctionType::get(fn.getContext(), entry->getArgumentTypes(), ValueRange(results).getTypes()));
  }

  LogicalResult outlineIf(scf::IfOp op, func::FuncOp graph, SmallVectorImpl<func::FuncOp> &worklist) {
    if (op.getNumResults() == 0) {  // computes nothing a graph can see
      op.erase();
      return success();
    }
    if (op.getElseRegion().empty())
      return op.emitError() << "an scf.if with results needs an else region";
    FailureOr<Value> condition = conditionTensor(op, op.getCondition());
    if (failed(condition))
      return failure();
    func::FuncOp bodies[2];
    SmallVector<Value> captures[2];
    Region *regions[2] = {&op.getThenRegion(), &op.getElseRegion()};
    for (int side = 0; side < 2; ++side) {
      IRMapping map;
      Block *entry;
      bodies[side] = makeBody(graph, side ? "else" : "then", {}, {regions[side]}, captures[side], map, entry);
      OpBuilder eb = OpBuilder::atBlockEnd(entry);
      finish(bodies[side], entry, inlineBlock(eb, regions[side]->front(), {}, map));
      worklist.push_back(bodies[side]);
    }
    OpBuilder b(op);
    auto replaced = IfOp::create(b, op.getLoc(), op.getResultTypes(), bodies[0].getSymName(), bodies[1].getSymName(),
                                 *condition, captures[0], captures[1]);
    op.replaceAllUsesWith(replaced.getResults());
    Value scalar = op.getCondition();
    op.erase();
    eraseCondition(scalar);
    return success();
  }

  // A while loop: `before` once on the initial values in the graph; then trips of `after`
  // followed by `before`, carrying the condition and the forwarded values.
  LogicalResult outlineWhile(scf::WhileOp op, func::FuncOp graph, SmallVectorImpl<func::FuncOp> &worklist) {
    auto condition = cast<scf::ConditionOp>(op.getBefore().front().getTerminator());
    if (failed(conditionTensor(op, condition.getCondition())))
      return failure();
    // The first condition and forwarded values, in the graph.
    OpBuilder b(op);
    IRMapping first;
    SmallVector<Value> start = inlineBlock(b, op.getBefore().front(), op.getInits(), first);
    Value startCondition = *conditionTensor(op, start[0]);
    // The body: (trip, condition, forwarded..., captures...) -> (condition, forwarded...).
    SmallVector<Type> argTypes = {RankedTensorType::get({}, b.getI64Type()), startCondition.getType()};
    llvm::append_range(argTypes, condition.getArgs().getTypes());
    IRMapping map;
    Block *entry;
    SmallVector<Value> captures;
    func::FuncOp body = makeBody(graph, "loop", argTypes, {&op.getBefore(), &op.getAfter()}, captures, map, entry);
    OpBuilder eb = OpBuilder::atBlockEnd(entry);
    ValueRange forwarded = entry->getArguments().slice(2, condition.getArgs().size());
    SmallVector<Value> next = inlineBlock(eb, op.getAfter().front(), forwarded, map);
    SmallVector<Value> again = inlineBlock(eb, op.getBefore().front(), next, map);
    SmallVector<Value> results = {*conditionTensor(op, again[0])};
    results.append(again.begin() + 1, again.end());
    finish(body, entry, results);
    eraseCondition(again[0]);
    worklist.push_back(body);
    SmallVector<Value> inits = {startCondition};
    inits.append(start.begin() + 1, start.end());
    auto loop = LoopOp::create(b, op.getLoc(), ValueRange(inits).getTypes(), body.getSymName(), 0, true, Value(), inits,
                               captures);
    op.replaceAllUsesWith(loop.getResults().drop_front());
    eraseCondition(start[0]);
    op.erase();
    return success();
  }

  // The scalar ops that read a condition (trunci or cmpi, then the extract), once the
  // condition is read as a tensor instead.
  static void eraseCondition(Value condition) {
    Operation *scalar = condition.getDefiningOp();
    Operation *extract = scalar ? scalar->getOperand(0).getDefiningOp() : nullptr;
    for (Operation *op : {scalar, extract})
      if (op && op->use_empty())
        op->erase();
  }

  ModuleOp module;
  SymbolTable symbols;
};

struct OutlineControlFlowPass : public mlir::hexir::impl::OutlineControlFlowBase<OutlineControlFlowPass> {
  void runOnOperation() override {
    Outliner outliner(getOperation());
    for (func::FuncOp fn : graphFunctions(getOperation()))
      if (failed(outliner.run(fn)))
        return signalPassFailure();
  }
};

} // namespace
