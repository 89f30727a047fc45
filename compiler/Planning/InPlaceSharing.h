//===- InPlaceSharing.h - results written over dying inputs -----*- C++ -*-===//
//
// Step 2 of memory planning. With the kernels' own answer to "which inputs may result k be
// written into" (InPlaceAnalysis.h):
//  - in place: a result's buffer may take over an input buffer that dies at its dispatch and has
//    its size (a planner hint, may_share_with; the DISPATCH alias bit once the plan honours it);
//  - donation: a graph output whose dispatch could write it over a donated graph input that dies
//    there is tied to that input; the caller may then bind both to one buffer.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_PLANNING_INPLACESHARING_H
#define HEXIR_COMPILER_PLANNING_INPLACESHARING_H

#include "Planning/BufferLiveness.h"

#include "serializer/executable_spec.h"

namespace mlir::hexir {

// Per dispatch: for each result, the inputs its kernel may write it into.
using InPlaceCandidates = llvm::DenseMap<Operation *, SmallVector<SmallVector<unsigned>>>;
InPlaceCandidates findKernelCandidates(const BufferLiveness &live, ModuleOp module);

// Sets may_share_with on the buffers of `live.problem` that may take over an input's buffer.
void shareDyingInputs(BufferLiveness &live, const InPlaceCandidates &candidates);

// Dispatch -> (result, input) it writes in place over a donated graph input; sets tied_input
// on the outputs of `fn`, whose inputs must say which are donated. An output is also tied to a
// donated input of its size that every reader has read before the output's dispatch runs (no
// alias then: that dispatch does not read it).
using DonationTies = llvm::DenseMap<Operation *, std::pair<unsigned, unsigned>>;
DonationTies tieDonatedInputs(const BufferLiveness &live, const InPlaceCandidates &candidates,
                              ::hexir::serializer::Function &fn);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_PLANNING_INPLACESHARING_H
