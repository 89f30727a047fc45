//===- ControlFlowOps.cpp - ONNX Loop and If ------------------------------===//
#include "Import/Onnx/ControlFlowOps.h"

#include "Dialect/HexirDialect.h"
#include "Import/Onnx/Emit.h"
#include "Import/Onnx/OpRegistry.h"

using namespace mlir;

namespace hexir::onnx_import {
namespace {

bool isTrue(const OnnxValue &v) { return v.isConstant() && !v.constant->ints().empty() && v.constant->ints()[0] != 0; }

OnnxValue runTime(DType type, std::vector<int64_t> shape) {
  OnnxValue v;
  v.type = type;
  v.shape = std::move(shape);
  return v;
}

const onnx::GraphProto *subgraph(NodeContext &ctx, const char *name) {
  const onnx::AttributeProto *a = ctx.attr(name);
  return a && a->has_g() ? &a->g() : nullptr;
}

// The body's result `index` (a Loop's condition) as rank 0 where the body gives it as [1].
void scalarResult(func::FuncOp fn, unsigned index) {
  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  Value v = ret.getOperand(index);
  if (cast<RankedTensorType>(v.getType()).getRank() == 0)
    return;
  OpBuilder b(ret);
  ret.setOperand(index, reshapeView(b, ret.getLoc(), v, {}));
  fn.setType(FunctionType::get(fn.getContext(), fn.getArgumentTypes(), ret.getOperandTypes()));
}

// The body's results without output `index` (a Loop's condition when it is always true).
void dropResult(func::FuncOp fn, unsigned index) {
  auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  ret->eraseOperand(index);
  fn.setType(FunctionType::get(fn.getContext(), fn.getArgumentTypes(), ret.getOperandTypes()));
}

} // namespace

LogicalResult convertLoop(NodeContext &ctx, SubgraphImporter &importer) {
  const onnx::GraphProto *graph = subgraph(ctx, "body");
  if (!graph)
    return ctx.error() << "has no 'body' graph attribute";
  if (ctx.numInputs() < 2)
    return ctx.error() << "takes a trip count and a condition (either may be empty) before its carried values";
  size_t carried = ctx.numInputs() - 2;
  if (graph->input_size() != static_cast<int>(carried) + 2)
    return ctx.error() << "its body takes " << graph->input_size() << " inputs; the Loop gives it " << carried + 2
                       << " (the trip number, the condition and " << carried << " carried values)";
  if (graph->output_size() < static_cast<int>(carried) + 1)
    return ctx.error() << "its body gives " << graph->output_size() << " outputs; it must give the condition and "
                       << carried << " carried values, then its scan outputs";
  size_t scans = graph->output_size() - 1 - carried;
  if (ctx.numOutputs() > carried + scans)
    return ctx.error() << "has " << ctx.numOutputs() << " outputs; its body gives " << carried
                       << " carried values and " << scans << " scan outputs";
  for (size_t k = 0; k < carried; ++k)
    if (!ctx.hasInput(2 + k))
      return ctx.error() << "carried value " << k << " is missing";

  // The trip count: known (a static bound), computed (read at run time), or none.
  int64_t maxTrips = 0;
  Value tripCount;
  bool bounded = false;
  if (ctx.hasInput(0)) {
    const OnnxValue &m = ctx.input(0);
    if (m.type != DType::kInt64 || m.numElements() != 1)
      return ctx.error() << "trip count must be one int64, got " << shapeString(m.shape);
    if (m.isConstant()) {
      maxTrips = std::max<int64_t>(0, m.constant->ints()[0]);
      bounded = true;
    } else {
      tripCount = m.value;
    }
  }
  // The condition: known true, known false (no trip), or computed.
  bool neverRuns = bounded && maxTrips == 0;
  bool condition = false;
  if (ctx.hasInput(1)) {
    const OnnxValue &c = ctx.input(1);
    if (c.type != DType::kBool || c.numElements() != 1)
      return ctx.error() << "condition must be one bool, got " << shapeString(c.shape);
    if (!c.isConstant())
      condition = true;
    else if (!isTrue(c))
      neverRuns = true;
  }

  std::vector<OnnxValue> formals = {runTime(DType::kInt64, {}),
                                    OnnxValue::ofConstant(HostTensor::fromInts({1}, {}, DType::kBool))};
  for (size_t k = 0; k < carried; ++k)
    formals.push_back(runTime(ctx.input(2 + k).type, ctx.input(2 + k).shape));
  if (condition)
    formals[1] = runTime(DType::kBool, {});
  FailureOr<SubgraphImporter::Body> body = importer.importBody(*graph, "loop", formals);
  if (failed(body))
    return failure();
  // A body that computes its condition from a condition known true at first: import it
  // again with the condition carried.
  if (!condition && !neverRuns && !body->outputs[0].isConstant()) {
    body->fn.erase();
    condition = true;
    formals[1] = runTime(DType::kBool, {});
    body = importer.importBody(*graph, "loop", formals);
    if (failed(body))
      return failure();
  }
  if (body->outputs[0].type != DType::kBool || body->outputs[0].numElements() != 1)
    return ctx.error() << "its body's condition output must be one bool";
  // A body that always says stop runs once.
  if (!condition && !isTrue(body->outputs[0])) {
    maxTrips = bounded ? std::min<int64_t>(maxTrips, 1) : 1;
    bounded = true;
  }
  for (size_t k = 0; k < carried; ++k) {
    const OnnxValue &in = ctx.input(2 + k), &out = body->outputs[1 + k];
    if (in.type != out.type || in.shape != out.shape)
      return ctx.error() << "carried value " << k << " ('" << graph->output(1 + k).name() << "') changes from "
                         << shapeString(in.shape) << " to " << shapeString(out.shape)
                         << (in.type != out.type ? " and changes its element type" : "")
                         << " across a trip; Hexir plans static shapes";
  }
  if (!bounded && !tripCount && !condition)
    return ctx.error() << "has neither a trip count nor a condition: it never ends";
  if (scans > 0 && (tripCount || condition) && !neverRuns)
    return ctx.error() << "has " << scans << " scan outputs whose length is known only at run time ("
                       << (condition ? "its condition is computed" : "its trip count is computed")
                       << "); Hexir plans static shapes: give the Loop a constant trip count and an always-true "
                          "condition";

  if (neverRuns) {
    // No trip: the carried values as they came in, and empty scans.
    body->fn.erase();
    for (size_t k = 0; k < carried; ++k)
      if (ctx.hasOutput(k))
        ctx.setOutput(k, ctx.input(2 + k));
    for (size_t s = 0; s < scans; ++s) {
      const OnnxValue &row = body->outputs[1 + carried + s];
      std::vector<int64_t> shape = {0};
      shape.insert(shape.end(), row.shape.begin(), row.shape.end());
      if (ctx.hasOutput(carried + s))
        ctx.setOutput(carried + s, OnnxValue::ofConstant(HostTensor::zeros(row.type, shape)));
    }
    return success();
  }

  SmallVector<Value> inits;
  if (condition) {
    // Carried as one bool of rank 0 whatever shape the graph gives it ([1] or scalar); an
    // omitted condition starts true, as ONNX Runtime and the reference run it.
    OnnxValue start = ctx.hasInput(1) ? ctx.input(1) : OnnxValue::ofConstant(HostTensor::fromInts({1}, {}, DType::kBool));
    inits.push_back(materialize(ctx, reshaped(ctx, start, {})));
    scalarResult(body->fn, 0);
  } else {
    dropResult(body->fn, 0);
  }
  for (size_t k = 0; k < carried; ++k)
    inits.push_back(materialize(ctx, ctx.input(2 + k)));
  SmallVector<Type> resultTypes;
  for (Value v : inits)
    resultTypes.push_back(v.getType());
  for (size_t s = 0; s < scans; ++s) {
    const OnnxValue &row = body->outputs[1 + carried + s];
    std::vector<int64_t> shape = {maxTrips};
    shape.insert(shape.end(), row.shape.begin(), row.shape.end());
    std::string size = sizeProblem(shape, row.type);
    if (!size.empty())
      return ctx.error() << "scan output " << s << " of shape " << shapeString(shape) << " " << size;
    resultTypes.push_back(tensorType(ctx.b.getContext(), shape, row.type));
  }
  auto loop = mlir::hexir::LoopOp::create(ctx.b, ctx.loc, resultTypes, body->fn.getSymName(), maxTrips, condition,
                                          tripCount, inits, body->captures);
  size_t first = condition ? 1 : 0;
  for (size_t k = 0; k < carried; ++k)
    if (ctx.hasOutput(k))
      ctx.setOutput(k, OnnxValue::ofValue(loop.getResult(first + k), ctx.input(2 + k).type));
  for (size_t s = 0; s < scans; ++s)
    if (ctx.hasOutput(carried + s))
      ctx.setOutput(carried + s, OnnxValue::ofValue(loop.getResult(inits.size() + s), body->outputs[1 + carried + s].type));
  return success();
}

LogicalResult convertIf(NodeContext &ctx, SubgraphImporter &importer) {
  const onnx::GraphProto *thenGraph = subgraph(ctx, "then_branch"), *elseGraph = subgraph(ctx, "else_branch");
  if (!thenGraph || !elseGraph)
    return ctx.error() << "needs 'then_branch' and 'else_branch' graph attributes";
  const OnnxValue &c = ctx.input(0);
  if (c.type != DType::kBool || c.numElements() != 1)
    return ctx.error() << "condition must be one bool, got " << shapeString(c.shape);
  for (const onnx::GraphProto *g : {thenGraph, elseGraph})
    if (g->input_size() != 0 || g->output_size() != static_cast<int>(ctx.numOutputs()))
      return ctx.error() << "its branches must take no inputs and give its " << ctx.numOutputs() << " outputs";
  // Known at import: the branch taken, inlined.
  if (c.isConstant()) {
    FailureOr<std::vector<OnnxValue>> outputs = importer.importInline(ctx.b, isTrue(c) ? *thenGraph : *elseGraph);
    if (failed(outputs))
      return failure();
    for (size_t k = 0; k < outputs->size(); ++k)
      if (ctx.hasOutput(k))
        ctx.setOutput(k, (*outputs)[k]);
    return success();
  }
  FailureOr<SubgraphImporter::Body> thenBody = importer.importBody(*thenGraph, "then", {});
  if (failed(thenBody))
    return failure();
  FailureOr<SubgraphImporter::Body> elseBody = importer.importBody(*elseGraph, "else", {});
  if (failed(elseBody))
    return failure();
  SmallVector<Type> resultTypes;
  for (size_t k = 0; k < ctx.numOutputs(); ++k) {
    const OnnxValue &t = thenBody->outputs[k], &e = elseBody->outputs[k];
    if (t.type != e.type || t.shape != e.shape)
      return ctx.error() << "output " << k << " is " << shapeString(t.shape) << " from the then branch and "
                         << shapeString(e.shape) << (t.type != e.type ? " of another element type" : "")
                         << " from the else branch; Hexir plans static shapes, so both must agree";
    resultTypes.push_back(thenBody->fn.getFunctionType().getResult(k));
  }
  auto op = mlir::hexir::IfOp::create(ctx.b, ctx.loc, resultTypes, thenBody->fn.getSymName(),
                                      elseBody->fn.getSymName(), materialize(ctx, c), thenBody->captures,
                                      elseBody->captures);
  for (size_t k = 0; k < ctx.numOutputs(); ++k)
    if (ctx.hasOutput(k))
      ctx.setOutput(k, OnnxValue::ofValue(op.getResult(k), thenBody->outputs[k].type));
  return success();
}

void addControlFlowOps(std::vector<OpSupport> &ops) {
  // Converted with the importer's subgraphs.
  ops.insert(ops.end(), {
      {"If", 13, 21, nullptr, "both branches give the same shapes", "then_branch else_branch", 1, convertIf, true},
      {"Loop", 13, 21, nullptr,
       "carried values keep their shapes; scan outputs need a constant trip count and no computed condition",
       "body", 0, convertLoop, true},
  });
}

} // namespace hexir::onnx_import
