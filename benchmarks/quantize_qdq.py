#!/usr/bin/python3
"""Static S8S8 QDQ quantization of a float32 ONNX model, as ONNX Runtime does it, without ONNX Runtime.

    quantize(model, calibration_feeds, keep_activations=False) -> ModelProto
    benchmarks/quantize_qdq.py IN.onnx OUT.onnx [--samples N] [--seed S] [--keep-activations]

The result is meant to be what onnxruntime.quantization.quantize_static(..., quant_format=QDQ,
activation_type=QInt8, weight_type=QInt8, per_channel=True, calibrate_method=MinMax) writes for
the ops below, computed with the `onnx` package, NumPy and tests/onnx/onnx_numpy.py (the
calibration runs). The CLI calibrates on --samples seeded random inputs: float inputs are
standard normal float32, integer inputs (token ids) uniform over the rows of the table a
Gather reads them from (0..1 when none does); symbolic dimensions are 1.

Rules (ORT's, with the numbers computed as ORT's quant_utils computes them):
- Constant subgraphs are folded into initializers first (ORT's quant_pre_process / old
  optimize_model step does this), so a weight reached through Transpose or Identity is a weight.
- Weights (a constant input 1 of Conv, Gemm, MatMul): int8, symmetric, per channel: Conv axis 0,
  Gemm axis 0 with transB=1 and 1 without, MatMul the last axis (the output column; 1 for a 2-D
  weight). scale = float32(float64(2 max|w|) / 254) per channel (1.0 for an all-zero channel),
  zero point 0, q = clip(rint(w / scale), -128, 127) in float32, so in [-127, 127]. Stored as an
  int8 initializer W_quantized + W_scale + W_zero_point -> DequantizeLinear(axis).
- Biases (a constant input 2 of Conv, and of Gemm when it is one value per output channel,
  whenever the weight is quantized as above and the input x is an activation):
  int32, scale = x_scale * w_scale (* Gemm's beta, which becomes 1) in float32, zero point 0,
  q = rint(b / scale) in float32 (ties to even), saturated to int32; DequantizeLinear(axis=0).
- Activations: int8 per tensor, asymmetric, from the min and max over all calibration samples:
  rmin = min(min, 0), rmax = max(max, 0), scale = float64(rmax - rmin) / 255 (1.0 and zero point
  0 below float32's smallest normal), zero_point = round_half_even(-128 - rmin / scale), scale
  stored as float32. --activations uint8 (U8S8, ORT's QUInt8): uint8, zero_point =
  round_half_even(-rmin / scale) in [0, 255]. One QuantizeLinear -> DequantizeLinear pair right after the producer (or
  the graph input), shared by all consumers.
  Quantized: every non-constant float input of Conv, Gemm, MatMul (both inputs of an activation
  x activation MatMul) and Add, and their outputs. Where an output's only consumer is a Relu, or
  a Clip whose min is a constant 0, the pair goes on that activation's output instead and the
  activation is removed (ORT's QDQRemovableActivation: the range [0, max] of the pair does the
  clamping; keep_activations=True keeps it, Conv -> Relu -> Q -> DQ, as ORT's
  QDQKeepRemovableActivations does less the extra pair before the Relu). A Softmax output's range
  is [0, 1] and a tensor read only by a Relu/Clip takes that node's output range (ORT's
  adjust_tensor_ranges).
- The opset stays (converted up to 13 if lower; per-axis Q/DQ needs 13); nodes stay in
  topological order; onnx.checker.check_model(full_check=True) passes on the result.

Deliberate differences from ORT:
- Only Conv, Gemm, MatMul and Add are quantized (ORT's default list also has MaxPool, Concat,
  Mul, Softmax, Gather, Transpose, Reshape, GlobalAveragePool, ...): closest to ORT with
  op_types_to_quantize=[Conv, Gemm, MatMul, Add, Relu, Clip].
- A constant input of Add (a bias added after a MatMul, LayerNorm's beta) stays float, and so
  does a constant first input of MatMul or Gemm; ORT quantizes them like weights.
- A MatMul weight of rank > 2 is quantized along its last axis; ORT uses axis 1 whatever the rank.
- Graph outputs stay float: a tensor that is a graph output gets a pair only for the nodes that
  read it, and a Relu whose output is a graph output is not removed. ORT puts the pair in front
  of the graph output.
- A Clip is removed only when its min is a constant 0 (ORT removes any Clip).
- Calibration ranges come from onnx_numpy, which rounds contractions once from float64: a range
  can differ from ORT's float32 kernels in its last bits, and so can a scale or zero point.
- Node and tensor names follow ORT's (T_QuantizeLinear_Output, T_DequantizeLinear_Output,
  W_quantized, W_scale, W_zero_point, B_quantized_scale, ...) except that a bias's
  DequantizeLinear writes B_DequantizeLinear_Output (ORT reuses the name B); the node order is
  producer, then its pair (ORT appends the pairs and sorts).
"""
import argparse
import copy
import os
import sys
import time

import numpy as np
import onnx
import onnx.version_converter
from onnx import helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "onnx"))
import onnx_numpy  # noqa: E402

QUANTIZED_OPS = ("Conv", "Gemm", "MatMul", "Add")
NOT_FOLDED = {"QuantizeLinear", "DequantizeLinear"}
F32_TINY = np.finfo(np.float32).tiny


def _opset(model):
    return next(e.version for e in model.opset_import if e.domain in ("", "ai.onnx"))


def fold_constants(model):
    """A copy of `model` whose nodes with only constant inputs are initializers (Constant nodes
    included); initializers nothing reads any longer are dropped."""
    model = copy.deepcopy(model)
    g, opset = model.graph, _opset(model)
    inputs = {v.name for v in g.input}
    values = {t.name: numpy_helper.to_array(t) for t in g.initializer if t.name not in inputs}
    outputs = {v.name for v in g.output}
    kept, folded = [], set()
    for node in g.node:
        if (node.domain in ("", "ai.onnx") and node.op_type in onnx_numpy.OPS and node.op_type not in NOT_FOLDED
                and all(not name or name in values for name in node.input)
                and not any(name in outputs for name in node.output)
                and not any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute)):
            args = [values[name] if name else None for name in node.input]
            for name, value in zip(node.output, onnx_numpy.run_node(node, args, opset)):
                values[name] = value
                folded.add(name)
        else:
            kept.append(node)
    used = {name for node in kept for name in node.input} | outputs
    initializers = [t for t in g.initializer if t.name in used or t.name in inputs]
    initializers += [numpy_helper.from_array(values[name], name) for name in sorted(folded & used)]
    _replace_graph(g, kept, initializers)
    return model


def _replace_graph(g, nodes, initializers):
    """Sets the graph's nodes and initializers, keeping the value_info of what the nodes produce."""
    del g.node[:]
    g.node.extend(nodes)
    del g.initializer[:]
    g.initializer.extend(initializers)
    produced = {name for node in nodes for name in node.output}
    vi = [v for v in g.value_info if v.name in produced]
    del g.value_info[:]
    g.value_info.extend(vi)


def calibrate(model, calibration_feeds, names):
    """{name: [min, max] (float32)} over all samples for the float tensors among `names`, and
    {name: dtype} for all of them."""
    ranges, dtypes = {}, {}
    for feeds in calibration_feeds:
        values = onnx_numpy.run(model, feeds, names)
        for name, value in values.items():
            dtypes[name] = value.dtype
            if value.dtype != np.float32 or value.size == 0:
                continue
            lo, hi = value.min(), value.max()
            if name in ranges:
                lo, hi = min(lo, ranges[name][0]), max(hi, ranges[name][1])
            ranges[name] = [np.float32(lo), np.float32(hi)]
    return ranges, dtypes


def activation_params(rmin, rmax, dtype=np.int8):
    """(scale float32, zero point of `dtype`) of an asymmetric int8 (or uint8) tensor over
    [rmin, rmax]."""
    qmin, qmax = np.iinfo(dtype).min, np.iinfo(dtype).max
    rmin = np.minimum(np.float32(rmin), np.float32(0))
    rmax = np.maximum(np.float32(rmax), np.float32(0))
    scale = np.float64(rmax - rmin) / 255.0  # the difference in float32, as ORT
    if scale < F32_TINY:
        return np.float32(1.0), dtype(0)
    zero_point = np.round(qmin - np.float64(rmin) / scale)
    return np.float32(scale), dtype(np.clip(zero_point, qmin, qmax))


def quantize_weight(w, axis):
    """(int8 weight, float32 scale per channel along `axis`), symmetric, zero point 0."""
    w = np.asarray(w, dtype=np.float32)
    rows = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
    rmin = np.minimum(rows.min(axis=1), np.float32(0))
    rmax = np.maximum(rows.max(axis=1), np.float32(0))
    absmax = np.maximum(np.abs(rmin), np.abs(rmax))
    scale = (absmax - (-absmax)).astype(np.float64) / 254.0
    scale = np.where(scale < F32_TINY, 1.0, scale).astype(np.float32)
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.rint(w / scale.reshape(shape))  # float32 division, as ORT
    return np.clip(q, -128, 127).astype(np.int8), scale


def quantize_bias(b, x_scale, w_scale, beta=1.0):
    """(int32 bias, float32 scale per channel) with scale = x_scale * w_scale * beta."""
    scale = (np.float32(x_scale) * w_scale.astype(np.float32) * np.float32(beta)).astype(np.float32)
    q = np.rint(np.asarray(b, dtype=np.float32).reshape(-1) / scale).astype(np.float64)
    info = np.iinfo(np.int32)
    return np.clip(q, info.min, info.max).astype(np.int32), scale


def _clip_min_is_zero(node, consts, opset):
    if opset < 11:
        return any(a.name == "min" and a.f == 0.0 for a in node.attribute)
    return len(node.input) > 1 and node.input[1] in consts and float(consts[node.input[1]]) == 0.0


def quantize(model, calibration_feeds, keep_activations=False, activation_type=np.int8):
    """An S8S8 QDQ copy of the float32 `model` (ModelProto), calibrated on `calibration_feeds`
    (a list of {graph input name: array}); U8S8 with activation_type=np.uint8 (ORT's QUInt8
    activations). See the module's docstring for the rules."""
    if not calibration_feeds:
        raise ValueError("quantize: no calibration samples")
    if _opset(model) < 13:
        model = onnx.version_converter.convert_version(model, 13)
    model = fold_constants(model)
    g, opset = model.graph, _opset(model)
    graph_inputs = [v.name for v in g.input]
    consts = {t.name: numpy_helper.to_array(t) for t in g.initializer if t.name not in graph_inputs}
    graph_outputs = {v.name for v in g.output}
    nodes = [copy.deepcopy(n) for n in g.node]

    names = [n for n in graph_inputs if n not in consts] + [o for n in nodes for o in n.output if o]
    ranges, dtypes = calibrate(model, calibration_feeds, names)

    consumers = {}
    for i, node in enumerate(nodes):
        for name in node.input:
            if name:
                consumers.setdefault(name, []).append(i)
    producer = {o: i for i, n in enumerate(nodes) for o in n.output}

    def is_activation(t):
        return bool(t) and t not in consts and dtypes.get(t) == np.float32

    def is_removable(node, t):
        return node.input[0] == t and (node.op_type == "Relu" or (
            node.op_type == "Clip" and _clip_min_is_zero(node, consts, opset)))

    acts = {}          # activation -> None, in the order found
    weights = {}       # (node, input index) -> axis
    biases = {}        # node -> (input index, x, weight, axis, beta)
    removed = set()    # Relu/Clip nodes folded into the pair before them

    def mark(t):
        if is_activation(t):
            acts.setdefault(t, None)

    def mark_output(i):
        t = nodes[i].output[0]
        if not is_activation(t):
            return
        readers = consumers.get(t, [])
        if len(readers) == 1 and t not in graph_outputs and is_removable(nodes[readers[0]], t):
            out = nodes[readers[0]].output[0]
            if out not in graph_outputs and consumers.get(out):
                if not keep_activations:
                    removed.add(readers[0])
                    nodes[i].output[0] = out
                mark(out)
                return
        mark(t)

    for i, node in enumerate(nodes):
        if node.domain not in ("", "ai.onnx") or node.op_type not in QUANTIZED_OPS:
            continue
        ins = list(node.input)
        if node.op_type == "Add":
            for t in ins:
                mark(t)
        else:
            x, w = ins[0], ins[1]
            mark(x)
            weight = consts.get(w)
            if weight is not None and weight.dtype == np.float32 and weight.ndim >= 2:
                if node.op_type == "Conv":
                    axis = 0
                elif node.op_type == "Gemm":
                    trans_b = next((a.i for a in node.attribute if a.name == "transB"), 0)
                    axis = 0 if trans_b else 1
                else:
                    axis = weight.ndim - 1
                weights[(i, 1)] = axis
                bias = consts.get(ins[2]) if len(ins) > 2 and ins[2] else None
                if (node.op_type != "MatMul" and bias is not None and x in acts and bias.dtype == np.float32
                        and bias.size == weight.shape[axis] and bias.ndim <= 1 + (node.op_type == "Gemm")):
                    beta = next((a.f for a in node.attribute if a.name == "beta"), 1.0)
                    biases[i] = (2, x, w, axis, beta)
            else:
                mark(w)
        mark_output(i)

    def range_of(t):
        p = producer.get(t)
        if p is not None and nodes[p].op_type == "Softmax":
            return np.float32(0.0), np.float32(1.0)
        readers = consumers.get(t, [])
        if len(readers) == 1 and nodes[readers[0]].op_type in ("Relu", "Clip") and readers[0] not in removed:
            out = nodes[readers[0]].output[0]
            if nodes[readers[0]].input[0] == t and out in ranges:
                return ranges[out]
        return ranges[t]

    new_inits, front, after = [], [], {}

    def add_init(array, name):
        new_inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    # Weights and biases: DequantizeLinear of int8 / int32 initializers, at the front.
    weight_dq = {}  # (weight, axis) -> (DequantizeLinear output, scale)
    for (i, k), axis in weights.items():
        w = nodes[i].input[k]
        if (w, axis) not in weight_dq:
            base = w if not any(key[0] == w for key in weight_dq) else f"{w}_axis{axis}"
            q, scale = quantize_weight(consts[w], axis)
            args = [add_init(q, base + "_quantized"), add_init(scale, base + "_scale"),
                    add_init(np.zeros(scale.shape, np.int8), base + "_zero_point")]
            out = base + "_DequantizeLinear_Output"
            front.append(helper.make_node("DequantizeLinear", args, [out], base + "_DequantizeLinear", axis=axis))
            weight_dq[(w, axis)] = (out, scale)
        nodes[i].input[k] = weight_dq[(w, axis)][0]

    params = {t: activation_params(*range_of(t), activation_type) for t in acts}
    bias_dq = {}
    for i, (k, x, w, axis, beta) in biases.items():
        b = nodes[i].input[k]
        w_scale = weight_dq[(w, axis)][1]
        key = (b, x, w, axis, beta)
        if key not in bias_dq:
            base = b if not any(other[0] == b for other in bias_dq) else f"{b}_{len(bias_dq)}"
            q, scale = quantize_bias(consts[b], params[x][0], w_scale, beta)
            args = [add_init(q, base + "_quantized"), add_init(scale, base + "_quantized_scale"),
                    add_init(np.zeros(scale.shape, np.int32), base + "_quantized_zero_point")]
            out = base + "_DequantizeLinear_Output"
            front.append(helper.make_node("DequantizeLinear", args, [out], base + "_DequantizeLinear", axis=0))
            bias_dq[key] = out
        nodes[i].input[k] = bias_dq[key]
        if nodes[i].op_type == "Gemm":
            for a in nodes[i].attribute:
                if a.name == "beta":
                    a.f = 1.0

    # Activations: a shared Q -> DQ pair after the producer, read by every node that read it.
    kept = [n for i, n in enumerate(nodes) if i not in removed]
    for t in acts:
        readers = [n for n in kept if t in n.input]
        if not readers:  # only a graph output: stays float
            continue
        scale, zero_point = params[t]
        args = [t, add_init(scale, t + "_scale"), add_init(zero_point, t + "_zero_point")]
        q_out, dq_out = t + "_QuantizeLinear_Output", t + "_DequantizeLinear_Output"
        pair = [helper.make_node("QuantizeLinear", args, [q_out], t + "_QuantizeLinear"),
                helper.make_node("DequantizeLinear", [q_out] + args[1:], [dq_out], t + "_DequantizeLinear")]
        for n in readers:
            for k, name in enumerate(n.input):
                if name == t:
                    n.input[k] = dq_out
        after.setdefault(t, []).extend(pair)

    order = list(front)
    for name in graph_inputs:
        order += after.pop(name, [])
    for n in kept:
        order.append(n)
        for o in n.output:
            order += after.pop(o, [])
    assert not after, f"unplaced pairs: {sorted(after)}"

    used = {name for n in order for name in n.input} | graph_outputs
    _replace_graph(g, order, [t for t in g.initializer if t.name in used] + new_inits)
    onnx.checker.check_model(model, full_check=True)
    return model


def random_feeds(model, samples, seed):
    """`samples` seeded random feeds for `model`'s graph inputs (see the module's docstring)."""
    rng = np.random.default_rng(seed)
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    rows = {}
    for node in g.node:  # integer inputs used as Gather indices: in range of the table's axis
        if node.op_type == "Gather" and len(node.input) > 1 and node.input[0] in inits:
            axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
            dims = inits[node.input[0]].dims
            rows[node.input[1]] = min(rows.get(node.input[1], dims[axis]), dims[axis])
    specs = []
    for v in g.input:
        if v.name in inits:
            continue
        t = v.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else 1 for d in t.shape.dim]
        specs.append((v.name, shape, onnx_numpy.np_dtype(t.elem_type)))
    feeds = []
    for _ in range(samples):
        feed = {}
        for name, shape, dtype in specs:
            if np.issubdtype(dtype, np.floating):
                feed[name] = rng.standard_normal(shape).astype(dtype)
            else:
                feed[name] = rng.integers(0, rows.get(name, 2), size=shape).astype(dtype)
        feeds.append(feed)
    return feeds


def summary(model):
    ops = {}
    for n in model.graph.node:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    return ", ".join(f"{k} {v}" for k, v in sorted(ops.items()))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--samples", type=int, default=8, help="calibration samples (default 8)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random calibration inputs (default 0)")
    p.add_argument("--activations", choices=["int8", "uint8"], default="int8",
                   help="activation type: int8 (S8S8, the default) or uint8 (U8S8)")
    p.add_argument("--keep-activations", action="store_true",
                   help="keep a Relu/Clip after a quantized output (pair after it) instead of removing it")
    args = p.parse_args()
    t0 = time.monotonic()
    model = onnx.load(args.input)
    q = quantize(model, random_feeds(model, args.samples, args.seed), keep_activations=args.keep_activations,
                 activation_type=np.uint8 if args.activations == "uint8" else np.int8)
    onnx.save(q, args.output)
    print(f"{args.output}: {summary(q)} ({time.monotonic() - t0:.1f}s)")


if __name__ == "__main__":
    main()
