// Honouring may_share_with hints: buffers that hand their memory on (an elementwise kernel
// writing its output into a dying input) are merged into one block before solving, and the
// block's offset is given back to each member after.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "planner/plan.h"
#include "planner/problem.h"

namespace hexir::planner {

struct CoalescedProblem {
  Problem blocks;                   // one request per group of buffers sharing memory
  std::vector<size_t> block_of;     // buffer -> block
  std::vector<int64_t> shared_with;  // buffer -> honoured hint target, or -1
};

// Accepts a hint from Y to X when X dies at the step Y is born (X.last == Y.first), both have
// the same size and space, and no other buffer already took X over. Blocks have the union
// lifetime and the largest alignment. O(n α(n)).
CoalescedProblem Coalesce(const Problem& problem);

// The plan for the original buffers from a plan for the blocks.
Plan Expand(const CoalescedProblem& coalesced, const Plan& block_plan);

}  // namespace hexir::planner
