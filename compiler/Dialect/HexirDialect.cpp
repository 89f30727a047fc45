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
