//===- RowKernel.h - kernels over rows: softmax, layer normalization ------===//
//
// A row kernel computes a chain of ops over the rows of its result's innermost dimension:
// reductions along that dimension (a row's max or sum) and elementwise ops that read the row
// and its reductions (softmax, layer normalization, log-softmax, RMS normalization). Dispatch
// formation groups such a chain into one kernel (OutlineDispatches); TileAndVectorize splits it
// into workgroups of rows, each running the whole chain on its rows.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_TRANSFORMS_ROWKERNEL_H
#define HEXIR_COMPILER_TRANSFORMS_ROWKERNEL_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace mlir::hexir {

// What each op of a row kernel computes; the result has shape [rows..., n].
enum class RowOpKind {
  Full,   // elementwise over [rows..., n]
  Reduce, // [rows..., n] -> [rows...], reducing n, accumulating onto a constant fill
  Row,    // elementwise over [rows...]
};

struct RowKernel {
  SmallVector<linalg::GenericOp> ops; // program order; the last one is the kernel's result
  SmallVector<RowOpKind> kinds;
  SmallVector<int64_t> shape; // [rows..., n]
};

// Whether `ops` (in program order; the last one's result leaves the kernel, the others are
// read only by later ops of the list) form a row kernel that TileAndVectorize compiles: at
// least one reduction, the last op elementwise over the full shape, each full-shape result
// overwritable by the next full-shape op (so that all of them live in the output), and the
// per-row temporaries of one row fitting the stack.
// With `requireReduction` false, a chain without a reduction yet also matches (dispatch
// formation grows a group op by op).
std::optional<RowKernel> matchRowKernel(ArrayRef<linalg::GenericOp> ops, bool requireReduction = true);

// A tile of a row kernel's op, with the register tile sizes it gets (0: not tiled) before it
// is vectorized.
struct RowTile {
  Operation *op;
  SmallVector<int64_t> registers;
};

// Splits the row kernel `k` into workgroups: one loop over workgroups [begin, end), each a
// chunk of rows of its longest row dimension on which every op runs in program order. Full-shape
// ops write the output's chunk in place; per-row values go to stack buffers of the chunk's rows;
// reductions become partial sums up to four vectors wide (the fixed order of a row's sum does
// not depend on the thread count) and their combination. Appends the tiles left to register-tile
// and vectorize; returns the number of workgroups.
FailureOr<int64_t> tileRowKernel(RewriterBase &rewriter, RowKernel &k, Value begin, Value end, int64_t lanes,
                                 int64_t minWork, int64_t maxWorkgroups, SmallVectorImpl<RowTile> &tiles);

// `op` (elementwise, its accumulator unused) rewritten in destination-passing style on `value`:
// what it read of `value` it reads from its accumulator, which is `value`, so it updates it in
// place. `value` must have the type of op's result and be read element for element.
linalg::GenericOp inPlaceOn(RewriterBase &rewriter, linalg::GenericOp op, Value value);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_TRANSFORMS_ROWKERNEL_H
