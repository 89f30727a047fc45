//===- ExpandCopies.cpp - memref.copy to linalg.copy ----------------------===//
//
// finalize-memref-to-llvm lowers a copy between strided memrefs (a pad's interior, a slice)
// to a call of `memrefCopy` from MLIR's C runner utils, which kernels do not link. As
// linalg.copy the copy becomes loops like every other kernel body.
//
// A copy of a whole kernel input into a whole kernel output of the same type is how an update
// in place starts (tensor.insert_slice into a donated KV cache, a concatenation's chain of
// slice writers): bufferization copies the input into the result before the update. When the
// memory plan gives both one buffer (InPlaceAnalysis), that copy would read and write the
// whole tensor onto itself on every run; it runs only when the two buffers differ.
//
//===----------------------------------------------------------------------===//
#include "Target/Host/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

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

struct ExpandCopiesPass : public mlir::hexir::impl::ExpandCopiesBase<ExpandCopiesPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp op) { copies.push_back(op); });
    for (memref::CopyOp copy : copies) {
      OpBuilder b(copy);
      Location loc = copy.getLoc();
      Value source = copy.getSource(), target = copy.getTarget();
      if (isWholeArgument(source) && isWholeArgument(target) && source.getType() == target.getType()) {
        Value from = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, source);
        Value to = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, target);
        Value differ = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, from, to);
        auto guard = scf::IfOp::create(b, loc, differ, /*withElseRegion=*/false);
        b.setInsertionPointToStart(guard.thenBlock());
      }
      linalg::CopyOp::create(b, loc, source, target);
      copy.erase();
    }
  }
};

} // namespace
