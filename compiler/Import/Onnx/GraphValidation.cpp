//===- GraphValidation.cpp - the ONNX graph rules the importer relies on --===//
#include "Import/Onnx/GraphValidation.h"

#include <map>
#include <set>

namespace hexir::onnx_import {

std::string nodeName(const onnx::NodeProto &node, int index) {
  return node.name().empty() ? node.op_type() + "_" + std::to_string(index) : node.name();
}

std::string validateGraph(const onnx::GraphProto &graph) {
  auto quote = [](const std::string &s) { return "'" + s + "'"; };
  std::set<std::string> initializers, inputs;
  for (const auto &init : graph.initializer())
    if (!initializers.insert(init.name()).second)
      return "two initializers are named " + quote(init.name());
  for (const auto &input : graph.input())
    if (!inputs.insert(input.name()).second)
      return "two inputs are named " + quote(input.name());
  // Where each node output is produced, to tell "defined later" from "never defined".
  std::map<std::string, int> producer;
  for (int n = 0; n < graph.node_size(); ++n) {
    const onnx::NodeProto &node = graph.node(n);
    for (const std::string &out : node.output()) {
      if (out.empty())
        continue;
      std::string who = "node " + quote(nodeName(node, n));
      if (inputs.count(out))
        return who + " writes " + quote(out) + ", which is a graph input";
      if (initializers.count(out))
        return who + " writes " + quote(out) + ", which is an initializer";
      auto [it, added] = producer.emplace(out, n);
      if (!added)
        return it->second == n ? who + " names its output " + quote(out) + " twice"
                               : "nodes " + quote(nodeName(graph.node(it->second), it->second)) + " and " +
                                     quote(nodeName(node, n)) + " both write " + quote(out);
    }
  }
  for (int n = 0; n < graph.node_size(); ++n) {
    const onnx::NodeProto &node = graph.node(n);
    for (const std::string &in : node.input()) {
      if (in.empty() || inputs.count(in) || initializers.count(in))
        continue;
      auto it = producer.find(in);
      if (it == producer.end())
        return "node " + quote(nodeName(node, n)) + " reads " + quote(in) +
               ", which no node, input or initializer defines";
      if (it->second >= n)
        return "node " + quote(nodeName(node, n)) + " reads " + quote(in) + " before node " +
               quote(nodeName(graph.node(it->second), it->second)) +
               " computes it (nodes must be in topological order)";
    }
  }
  std::set<std::string> outputs;
  for (const auto &output : graph.output()) {
    if (!outputs.insert(output.name()).second)
      return "graph output " + quote(output.name()) + " is listed twice";
    if (!producer.count(output.name()) && !inputs.count(output.name()) && !initializers.count(output.name()))
      return "graph output " + quote(output.name()) + " is not computed by any node";
  }
  return "";
}

} // namespace hexir::onnx_import
