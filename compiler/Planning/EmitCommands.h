//===- EmitCommands.h - the command list of a function ----------*- C++ -*-===//
//
// Step 4 of memory planning: every value gets its slot (an arena offset from the plan, the
// constant pool, a caller's input or output) and the function its commands: ALLOC of each
// arena, a DISPATCH per call_tir in schedule order (its kernel library and entry, workgroups,
// bindings, and the alias bits of results written in place or over a donated input), then the
// COPY of each returned value that no dispatch writes. Constants go to the executable's pool.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_PLANNING_EMITCOMMANDS_H
#define HEXIR_COMPILER_PLANNING_EMITCOMMANDS_H

#include "Planning/ConstantPool.h"
#include "Planning/InPlaceSharing.h"
#include "Planning/PlanMemory.h"

#include "llvm/ADT/StringMap.h"

namespace mlir::hexir {

// Where a kernel is: its library (index into ExecutableSpec::libraries) and entry.
struct KernelLocation {
  uint32_t library = 0;
  uint32_t entry = 0;
  uint32_t workgroups = 1;
  // Further launches of the same kernel, in order: a target that runs a kernel's loop nests
  // as separate launches names them `<kernel>__1`, `<kernel>__2`, ... (TargetBackend.h).
  std::vector<KernelLocation> parts;
};
llvm::StringMap<KernelLocation> locateKernels(ArrayRef<::hexir::serializer::KernelLibrary> libraries);

// The graph's constants in the executable's pool (stored, or filled at load): their slots.
// One pool serves every function of an executable, so a constant two functions share is
// stored once. Fills the report's constant bytes: the whole pool's, all resident at load.
FailureOr<llvm::DenseMap<Value, ::hexir::serializer::Slot>>
poolConstants(ArrayRef<func::FuncOp> graphs, ConstantPool &pool, const ::hexir::serializer::ExecutableSpec &spec,
              ::hexir::planner::PlanReport &report);

// Adds the commands to `fn`.
LogicalResult emitCommands(func::FuncOp graph, const BufferLiveness &live, const DonationTies &ties,
                           const MemoryPlan &plan, const llvm::DenseMap<Value, ::hexir::serializer::Slot> &constants,
                           const llvm::StringMap<KernelLocation> &kernels, ::hexir::serializer::Function &fn);

} // namespace mlir::hexir

#endif // HEXIR_COMPILER_PLANNING_EMITCOMMANDS_H
