#include "planner/problem.h"

#include <algorithm>

namespace hexir::planner {

uint32_t Problem::num_spaces() const {
  uint32_t n = static_cast<uint32_t>(capacities.size());
  for (const BufferRequest& b : buffers) n = std::max(n, b.space + 1);
  return n;
}

}  // namespace hexir::planner
