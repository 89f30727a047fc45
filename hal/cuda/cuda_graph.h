// CudaGraph: a session's run as a CUDA graph, built node by node from the recording
// (hal/command_graph.h) rather than by stream capture, so that each command knows its nodes:
// a kernel node per dispatch, a memcpy node per copy, one memset node per fill (two for an
// 8-byte pattern: its 32-bit halves, each every 8 bytes), chained in issue order. A pass whose
// pointers changed updates those nodes in the instance (cuGraphExec*SetParams); launching is
// one cuGraphLaunch on the session's stream.
//
// Ownership: destroys its graph and instance. Thread safety: as hal::CommandGraph.
#pragma once

#include <vector>

#include "hal/command_graph.h"
#include "hal/cuda/cuda_context.h"

namespace hexir::hal::cuda {

class CudaGraph final : public CommandGraph {
 public:
  explicit CudaGraph(const CudaContext& context) : context_(context) {}
  ~CudaGraph() override;

 protected:
  Status Instantiate() override;
  Status UpdateCommand(size_t index) override;
  Status LaunchInstance(CommandQueue& queue) override;

 private:
  // Destroys the instance and the graph, if any.
  Status Release();
  // Adds command `index`'s nodes after `*last` (the chain's end; null for none) and moves `*last`.
  Status AddNodes(size_t index, CUgraphNode* last);

  const CudaContext& context_;
  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
  // Command i's nodes: nodes_[first_node_[i], first_node_[i + 1]).
  std::vector<CUgraphNode> nodes_;
  std::vector<uint32_t> first_node_;
};

}  // namespace hexir::hal::cuda
