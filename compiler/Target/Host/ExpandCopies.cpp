//===- ExpandCopies.cpp - memref.copy to linalg.copy ----------------------===//
//
// finalize-memref-to-llvm lowers a copy between strided memrefs (a pad's interior, a slice)
// to a call of `memrefCopy` from MLIR's C runner utils, which kernels do not link. As
// linalg.copy the copy becomes loops like every other kernel body.
//
// A copy of a whole kernel input into a whole kernel output of the same type is how an update
// in place starts (tensor.insert_slice into a donated KV cache): bufferization copies the input
// into the result before the update; a concatenation's slice writer copies the same regions
// around its slice (sliceInPlace). When the memory plan gives both one buffer
// (InPlaceAnalysis), such a copy would read and write the tensor onto itself on every run; it
// runs only when the two buffers differ.
//
//===----------------------------------------------------------------------===//
#include "Target/Host/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir::hexir {
#define GEN_PASS_DEF_EXPANDCOPIES
#include "Target/Host/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;

namespace {

// An argument of the kernel (its entry block) with an identity layout.
bool isWholeArgument(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  auto type = dyn_cast<MemRefType>(v.getType());
  return arg && type && type.getLayout().isIdentity() && isa<func::FuncOp>(arg.getOwner()->getParentOp()) &&
         arg.getOwner()->isEntryBlock();
}

// The kernel arguments whose same region `source` and `target` are (the arguments themselves
// of one type, or subviews of them at the same offsets, sizes and strides), if they are.
std::optional<std::pair<Value, Value>> sameRegionOfArguments(Value source, Value target) {
  if (isWholeArgument(source) && isWholeArgument(target) && source.getType() == target.getType())
    return std::pair(source, target);
  auto from = source.getDefiningOp<memref::SubViewOp>(), to = target.getDefiningOp<memref::SubViewOp>();
  if (!from || !to || !isWholeArgument(from.getSource()) || !isWholeArgument(to.getSource()) ||
      from.getSource().getType() != to.getSource().getType() || from.getType() != to.getType() ||
      !from.isSameAs(to, isEqualConstantIntOrValue))
    return std::nullopt;
  return std::pair(from.getSource(), to.getSource());
}

struct ExpandCopiesPass : public mlir::hexir::impl::ExpandCopiesBase<ExpandCopiesPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp op) { copies.push_back(op); });
    for (memref::CopyOp copy : copies) {
      OpBuilder b(copy);
      Location loc = copy.getLoc();
      Value source = copy.getSource(), target = copy.getTarget();
      bool guarded = false;
      if (std::optional<std::pair<Value, Value>> args = sameRegionOfArguments(source, target)) {
        Value from = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, args->first);
        Value to = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, args->second);
        Value differ = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, from, to);
        auto guard = scf::IfOp::create(b, loc, differ, /*withElseRegion=*/false);
        b.setInsertionPointToStart(guard.thenBlock());
        guarded = true;
      }
      auto expanded = linalg::CopyOp::create(b, loc, source, target);
      copy.erase();
      if (!guarded)
        continue;
      // A guarded copy as loops now: their loads and stores fold the subviews away
      // (LowerVectorTiles), which would otherwise keep the output's register tiles from being
      // hoisted (MLIR hoists no transfer of a buffer that a view reads).
      IRRewriter rewriter(b);
      rewriter.setInsertionPoint(expanded);
      if (failed(linalg::linalgOpToLoops(rewriter, expanded)))
        return signalPassFailure();
      rewriter.eraseOp(expanded);
    }
  }
};

} // namespace
