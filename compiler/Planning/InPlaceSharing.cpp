//===- InPlaceSharing.cpp - results written over dying inputs -------------===//
#include "Planning/InPlaceSharing.h"

#include "Planning/GraphValues.h"
#include "Planning/InPlaceAnalysis.h"

using namespace mlir;
using namespace mlir::hexir;

InPlaceCandidates mlir::hexir::findKernelCandidates(const BufferLiveness &live, ModuleOp module) {
  InPlaceCandidates candidates;
  for (CallTirOp d : live.dispatches) {
    auto kernel = module.lookupSymbol<func::FuncOp>(d.getCallee());
    candidates[d] = kernel ? findInPlaceCandidates(kernel) : SmallVector<SmallVector<unsigned>>(d.getNumResults());
  }
  return candidates;
}

void mlir::hexir::shareDyingInputs(BufferLiveness &live, const InPlaceCandidates &candidates) {
  llvm::DenseSet<size_t> takenOver;
  for (CallTirOp d : live.dispatches) {
    const SmallVector<SmallVector<unsigned>> &forResult = candidates.find(d)->second;
    for (auto [k, result] : llvm::enumerate(d.getResults())) {
      auto own = live.bufferOf.find(result);
      if (own == live.bufferOf.end())
        continue;  // an output: written straight into the caller's buffer
      for (unsigned i : forResult[k]) {
        Value root = live.resolve(d.getInputs()[i]);
        auto input = live.bufferOf.find(root);
        if (input == live.bufferOf.end() || takenOver.contains(input->second))
          continue;
        const ::hexir::planner::BufferRequest &in = live.problem.buffers[input->second];
        if (in.last != live.stepOf.lookup(d) || in.size != live.problem.buffers[own->second].size)
          continue;
        // Any other operand reading the same memory must be an identity read too.
        bool safe = true;
        for (auto [j, other] : llvm::enumerate(d.getInputs()))
          if (j != i && live.resolve(other) == root && !llvm::is_contained(forResult[k], j))
            safe = false;
        if (!safe)
          continue;
        live.problem.buffers[own->second].may_share_with = static_cast<int64_t>(input->second);
        takenOver.insert(input->second);
        break;
      }
    }
  }
  // A loop's first carried value that dies where the loop starts: the carried value takes
  // over its buffer, and the first copy disappears.
  for (Operation *op : live.controlOps) {
    auto loop = dyn_cast<LoopOp>(op);
    if (!loop)
      continue;
    int64_t begin = live.regions.lookup(op).begin;
    for (unsigned k = 0; k < loop.getInits().size(); ++k) {
      Value init = live.resolve(loop.getInits()[k]);
      auto input = live.bufferOf.find(init);
      auto result = live.bufferOf.find(loop.getResult(k));
      if (input == live.bufferOf.end() || result == live.bufferOf.end() || takenOver.contains(input->second))
        continue;
      size_t own = result->second;
      const ::hexir::planner::BufferRequest &in = live.problem.buffers[input->second];
      if (in.last != begin || in.size != live.problem.buffers[own].size)
        continue;
      // Read once there: the same value may not also be another carried value's first.
      if (llvm::count_if(loop.getInits(), [&](Value v) { return live.resolve(v) == init; }) != 1)
        continue;
      live.problem.buffers[own].may_share_with = static_cast<int64_t>(input->second);
      takenOver.insert(input->second);
    }
  }
}

DonationTies mlir::hexir::tieDonatedInputs(const BufferLiveness &live, const InPlaceCandidates &candidates,
                                           ::hexir::serializer::Function &fn) {
  DonationTies ties;
  llvm::DenseSet<unsigned> tiedInputs;
  for (CallTirOp d : live.dispatches) {
    const SmallVector<SmallVector<unsigned>> &forResult = candidates.find(d)->second;
    for (auto [k, result] : llvm::enumerate(d.getResults())) {
      auto out = live.outputOf.find(result);
      if (out == live.outputOf.end())
        continue;
      for (unsigned i : forResult[k]) {
        Value root = live.resolve(d.getInputs()[i]);
        auto arg = dyn_cast<BlockArgument>(root);
        if (!live.isInput(root) || !fn.inputs[arg.getArgNumber()].donated || tiedInputs.contains(arg.getArgNumber()) ||
            byteSize(arg.getType()) != byteSize(result.getType()))
          continue;
        // The input must die here: no other reader, and not returned.
        bool dies = true;
        forEachReader(arg, [&](Operation *user) { dies &= user == d.getOperation(); });
        unsigned reads = 0;
        for (Value v : d.getInputs())
          reads += live.resolve(v) == arg;
        if (!dies || reads != 1)
          continue;
        fn.outputs[out->second].tied_input = static_cast<int32_t>(arg.getArgNumber());
        tiedInputs.insert(arg.getArgNumber());
        ties[d] = {static_cast<unsigned>(k), i};
        break;
      }
      if (fn.outputs[out->second].tied_input >= 0)
        continue;
      // Or an output whose dispatch runs after every reader of a donated input of its size
      // (a KV cache read slab by slab, its new slabs concatenated at the end): dispatches run in
      // order, so writing the output over that input's buffer overwrites nothing still to be
      // read. The dispatch itself does not read it: no alias.
      int64_t step = live.stepOf.lookup(d);
      for (auto [a, signature] : llvm::enumerate(fn.inputs)) {
        if (!signature.donated || tiedInputs.contains(a))
          continue;
        BlockArgument arg = d->getParentOfType<func::FuncOp>().getArgument(a);
        if (byteSize(arg.getType()) != byteSize(result.getType()))
          continue;
        bool before = true;
        forEachReader(arg, [&](Operation *user) {
          auto reader = dyn_cast<CallTirOp>(user);
          before &= reader && live.stepOf.count(reader) && live.stepOf.lookup(reader) < step;
        });
        if (!before)
          continue;
        fn.outputs[out->second].tied_input = static_cast<int32_t>(a);
        tiedInputs.insert(a);
        break;
      }
    }
  }
  return ties;
}
