//===- ExpandCopies.cpp - memref.copy to linalg.copy ----------------------===//
//
// finalize-memref-to-llvm lowers a copy between strided memrefs (a pad's interior, a slice)
// to a call of `memrefCopy` from MLIR's C runner utils, which kernels do not link. As
// linalg.copy the copy becomes loops like every other kernel body.
//
//===----------------------------------------------------------------------===//
#include "Target/Host/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::hexir {
#define GEN_PASS_DEF_EXPANDCOPIES
#include "Target/Host/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;

namespace {

struct ExpandCopiesPass : public mlir::hexir::impl::ExpandCopiesBase<ExpandCopiesPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp op) { copies.push_back(op); });
    for (memref::CopyOp copy : copies) {
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(), copy.getTarget());
      copy.erase();
    }
  }
};

} // namespace
