//===- RowKernel.h - kernels over rows: softmax, layer normalization ------===//
//
// A row kernel computes a chain of ops over the rows of its result's innermost dimension:
// reductions along that dimension (a row's max or sum) and elementwise ops that read the row
// and its reductions (softmax, layer normalization, log-softmax, RMS normalization). Dispatch
// formation groups such a chain into one kernel (OutlineDispatches); the host's tiling
// (Target/Host/RowKernelTiling.cpp) splits it into workgroups of rows, each running the whole
// chain on its rows.
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
// least one reduction, the last op elementwise over the full shape (f32 or narrower, every
// other op f32), each full-shape result overwritable by the next full-shape op (so that all of
// them live in one buffer: the output, or a stack buffer when the result narrows), and the
// per-row temporaries of one row fitting the stack.
// With `requireReduction` false, a chain without a reduction yet also matches (dispatch
// formation grows a group op by op).
std::optional<RowKernel> matchRowKernel(ArrayRef<linalg::GenericOp> ops, bool requireReduction = true);

// Bytes of per-row stack buffers a row kernel may use for one chunk of rows, and the widest
// partial sum of a reduction (four vectors of 16 lanes): the stack a kernel's tiling needs.
constexpr int64_t kRowStackBytes = 32 * 1024;
constexpr int64_t kMaxRowPartial = 64;
// Whether the kernel's result is of another type than its f32 values (narrower: a softmax
// requantized to int8) and it has full-shape values before it: those then live in a stack
// buffer of the chunk's rows instead of the output.
bool rowKernelNarrows(const RowKernel &k);
// Stack bytes of one row's temporaries: a value per row op and reduction, a reduction's partial
// sums, and the row of full-shape values of a narrowing kernel.
int64_t rowTemporaryBytes(const RowKernel &k);
// The op combining a reduction's accumulator with the value it reduces, when it has a neutral
// element (which starts partial sums); null otherwise.
Operation *rowCombiner(linalg::GenericOp op);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_TRANSFORMS_ROWKERNEL_H
