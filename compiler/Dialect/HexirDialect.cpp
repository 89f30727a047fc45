//===- HexirDialect.cpp - the Hexir dialect and its ops -------------------===//
#include "Dialect/HexirDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::hexir;

#include "Dialect/HexirDialect.cpp.inc"

void HexirDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "Dialect/HexirOps.cpp.inc"
      >();
}

LogicalResult CallTirOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto fn = symbolTable.lookupNearestSymbolFrom<func::FuncOp>(*this, getCalleeAttr());
  if (!fn)
    return emitOpError() << "callee " << getCalleeAttr() << " is not a func.func in scope";
  if (!fn->hasAttr(kKernelAttrName))
    return emitOpError() << "callee " << getCalleeAttr() << " is not marked '" << kKernelAttrName
                         << "'";
  FunctionType type = fn.getFunctionType();
  if (TypeRange(type.getInputs()) != getInputs().getTypes())
    return emitOpError() << "operand types do not match the inputs of " << getCalleeAttr();
  if (TypeRange(type.getResults()) != getResults().getTypes())
    return emitOpError() << "result types do not match the results of " << getCalleeAttr();
  return success();
}

namespace {

// The body function `name` of `op`: a graph function marked hexir.body, taking `inputs` and
// returning `results`.
FailureOr<func::FuncOp> lookupBody(Operation *op, SymbolTableCollection &symbolTable, FlatSymbolRefAttr name,
                                   TypeRange inputs, TypeRange results) {
  auto fn = symbolTable.lookupNearestSymbolFrom<func::FuncOp>(op, name);
  if (!fn || fn.isDeclaration())
    return op->emitOpError() << "body " << name << " is not a func.func with a body in scope";
  if (!fn->hasAttr(kBodyAttrName))
    return op->emitOpError() << "body " << name << " is not marked '" << kBodyAttrName << "'";
  FunctionType type = fn.getFunctionType();
  if (TypeRange(type.getInputs()) != inputs)
    return op->emitOpError() << "operand types do not match the inputs of " << name;
  if (TypeRange(type.getResults()) != results)
    return op->emitOpError() << "result types do not match the results of " << name;
  return fn;
}

bool isBool(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  return t && t.getNumElements() == 1 && t.getElementType().isSignlessInteger(8);
}

} // namespace

LogicalResult LoopOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  MLIRContext *ctx = getContext();
  auto counter = RankedTensorType::get({}, IntegerType::get(ctx, 64));
  SmallVector<Type> inputs = {counter};
  llvm::append_range(inputs, getInits().getTypes());
  llvm::append_range(inputs, getCaptures().getTypes());
  if (getNumResults() < getInits().size())
    return emitOpError() << "has fewer results than carried values";
  TypeRange resultTypes = getResultTypes();
  if (resultTypes.take_front(getInits().size()) != TypeRange(getInits().getTypes()))
    return emitOpError() << "carried results do not match the carried values' types";
  SmallVector<Type> results(getInits().getTypes());
  for (Type scan : resultTypes.drop_front(getInits().size())) {
    auto stacked = cast<RankedTensorType>(scan);
    if (stacked.getRank() == 0 || stacked.getDimSize(0) != static_cast<int64_t>(getMaxTrips()))
      return emitOpError() << "scan output type " << scan << " does not stack " << getMaxTrips() << " trips";
    results.push_back(RankedTensorType::get(stacked.getShape().drop_front(), stacked.getElementType()));
  }
  if (getMaxTrips() < 0)
    return emitOpError() << "max_trips is negative";
  if (getMaxTrips() == 0 && !getTripCount() && !getHasCondition())
    return emitOpError() << "has no bound: no max_trips, trip count or condition";
  if (getNumScans() > 0 && (getTripCount() || getHasCondition()))
    return emitOpError() << "has scan outputs but no static trip count (a trip count operand or a condition "
                            "makes their length known only at run time)";
  if (getTripCount() && !(cast<RankedTensorType>(getTripCount().getType()).getNumElements() == 1 &&
                          cast<RankedTensorType>(getTripCount().getType()).getElementType().isSignlessInteger(64)))
    return emitOpError() << "trip count must be one i64";
  if (getHasCondition() && (getInits().empty() || !isBool(getInits()[0].getType())))
    return emitOpError() << "with a condition, carried value 0 must be a bool (tensor<i8> of one element)";
  return lookupBody(*this, symbolTable, getBodyAttr(), inputs, results);
}

LogicalResult IfOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  if (!isBool(getCondition().getType()))
    return emitOpError() << "condition must be a bool (tensor<i8> of one element)";
  if (failed(lookupBody(*this, symbolTable, getThenBodyAttr(), getThenCaptures().getTypes(), getResultTypes())) ||
      failed(lookupBody(*this, symbolTable, getElseBodyAttr(), getElseCaptures().getTypes(), getResultTypes())))
    return failure();
  return success();
}

LogicalResult WarpMmaOp::verify() {
  if (getAcc().size() != 4 || getResults().size() != 4)
    return emitOpError("takes and gives a lane's 4 accumulators");
  for (Region *region : {&getA(), &getB()}) {
    Block &block = region->front();
    if (block.getNumArguments() != 2 || !llvm::all_of(block.getArgumentTypes(), [](Type t) { return t.isIndex(); }))
      return emitOpError("regions take a row and a column (index)");
    auto yield = dyn_cast<YieldOp>(block.getTerminator());
    if (!yield || !yield.getValue().getType().isF32())
      return emitOpError("regions yield an f32 element");
  }
  return success();
}

#define GET_OP_CLASSES
#include "Dialect/HexirOps.cpp.inc"
