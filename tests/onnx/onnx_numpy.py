"""A small reference evaluator of ONNX graphs in NumPy (PyTorch for convolutions only).

    run(model, feeds, outputs=None, bf16=False) -> {name: array}

`outputs` may name any tensor of the graph (a graph input, an initializer, any node's output),
not only the graph outputs: quantization calibration reads intermediate activations.
run_node(node, inputs, opset) evaluates one node (constant folding uses it).

Numerics: every tensor keeps its ONNX type (float32 stays float32). Element-wise arithmetic runs
in that type, as ONNX specifies and as NumPy rounds it; contractions (Conv, Gemm, MatMul),
pooling averages, reductions, normalizations and transcendental functions are computed in
float64 and rounded once to the output type, so this is a reference for kernels that accumulate
in float32, not a bit-exact copy of one. QuantizeLinear divides in float32 and rounds half to
even (as ONNX and ONNX Runtime do), then saturates; DequantizeLinear subtracts the zero point
exactly and multiplies in float32.

bf16=True evaluates the graph as `hexir-compile --precision bf16` specifies it (and as ONNX
Runtime's and oneDNN's bf16 modes do): a MatMul whose B is a constant matrix (rank 2), a Gemm
(transA 0, alpha 1) whose B is a constant, and a Conv (group 1) whose W is a constant multiply
the values of their activation and weight rounded to bf16 (nearest, ties to even: PyTorch's
conversion), still summed in float64; everything else is unchanged. A constant is an
initializer or what only constants compute (a transposed weight), as the compiler folds it.

Only the default domain is supported, and only the ops in OPS; any other op raises
NotImplementedError naming it (all of them, before anything runs). Known limits: MaxPool's
Indices output, block-wise Q/DQ (opset 21 block_size) and float8/int4 types are unsupported;
ceil_mode pooling drops a last window that would start in the end padding (as PyTorch does).
"""
import numpy as np
import torch
import torch.nn.functional as F
from onnx import helper, numpy_helper

__all__ = ["run", "run_node", "OPS", "np_dtype", "bf16_operands"]


def np_dtype(tensor_type):
    """NumPy dtype of an ONNX TensorProto data type (onnx 1.12 has no helper for it)."""
    if hasattr(helper, "tensor_dtype_to_np_dtype"):
        return np.dtype(helper.tensor_dtype_to_np_dtype(tensor_type))
    from onnx import mapping
    return np.dtype(mapping.TENSOR_TYPE_TO_NP_TYPE[tensor_type])


class Attrs(dict):
    """A node's attributes (name -> Python value) and the model's default-domain opset."""

    def __init__(self, attrs, opset):
        super().__init__(attrs)
        self.opset = opset


def _f64(x):
    return np.asarray(x, dtype=np.float64)


def _as(y, like):
    """`y` in the type of `like` (results computed in float64 go back to float32)."""
    return np.asarray(y).astype(like.dtype, copy=False)


def _axis(axis, rank):
    return axis + rank if axis < 0 else axis


def _ints(x):
    return [int(v) for v in np.asarray(x).reshape(-1)]


# ---------------------------------------------------------------------------------- element-wise


def _binary(fn):
    return lambda a, x, y: np.asarray(fn(x, y))


def _div(a, x, y):
    if np.issubdtype(x.dtype, np.integer):  # ONNX integer division truncates toward zero
        q = np.abs(x) // np.abs(y)
        return np.asarray(np.where((x < 0) != (y < 0), -q, q), dtype=x.dtype)
    return np.asarray(x / y)


def _pow(a, x, y):
    return _as(np.power(_f64(x), _f64(y)), x)


def _unary64(fn):
    """A function computed in float64 and rounded to the input's type."""
    return lambda a, x: _as(fn(_f64(x)), x)


def _erf(a, x):
    return _as(torch.erf(torch.from_numpy(_f64(x))).numpy(), x)


def _clip(a, x, lo=None, hi=None):
    if a.opset < 11:
        lo, hi = a.get("min"), a.get("max")
    y = x
    if lo is not None:
        y = np.maximum(y, np.asarray(lo, dtype=x.dtype))
    if hi is not None:
        y = np.minimum(y, np.asarray(hi, dtype=x.dtype))
    return np.asarray(y, dtype=x.dtype)


def _hard_sigmoid(a, x):
    return _as(np.clip(a.get("alpha", 0.2) * _f64(x) + a.get("beta", 0.5), 0, 1), x)


def _hard_swish(a, x):
    x64 = _f64(x)
    return _as(x64 * np.clip(x64 / 6 + 0.5, 0, 1), x)


def _variadic(fn):
    def op(a, *xs):
        y = xs[0]
        for x in xs[1:]:
            y = fn(y, x)
        return np.asarray(y)
    return op


def _cast(a, x):
    return x.astype(np_dtype(a["to"]))


# ---------------------------------------------------------------------------------- contractions


def _matmul(a, x, y):
    return _as(np.matmul(_f64(x), _f64(y)), x)


def _gemm(a, x, w, c=None):
    x64, w64 = _f64(x), _f64(w)
    if a.get("transA", 0):
        x64 = x64.T
    if a.get("transB", 0):
        w64 = w64.T
    y = a.get("alpha", 1.0) * (x64 @ w64)
    if c is not None:
        y = y + a.get("beta", 1.0) * _f64(c)
    return _as(y, x)


def _pads(a, spatial_in, kernel, strides, dilations):
    """ONNX pads (auto_pad resolved) as (begin list, end list)."""
    n = len(kernel)
    auto = a.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        begin, end = [], []
        for size, k, s, d in zip(spatial_in, kernel, strides, dilations):
            out = -(-size // s)
            total = max(0, (out - 1) * s + (k - 1) * d + 1 - size)
            small = total // 2
            begin.append(small if auto == "SAME_UPPER" else total - small)
            end.append(total - begin[-1])
        return begin, end
    if auto == "VALID":
        return [0] * n, [0] * n
    pads = list(a.get("pads", [0] * (2 * n)))
    return pads[:n], pads[n:]


def _conv(a, x, w, b=None):
    n = x.ndim - 2
    kernel = list(a.get("kernel_shape", w.shape[2:]))
    strides = list(a.get("strides", [1] * n))
    dilations = list(a.get("dilations", [1] * n))
    begin, end = _pads(a, x.shape[2:], kernel, strides, dilations)
    xt = torch.from_numpy(_f64(x))
    if any(begin) or any(end):
        torch_pads = []
        for i in reversed(range(n)):  # F.pad takes the last dimension first
            torch_pads += [begin[i], end[i]]
        xt = F.pad(xt, torch_pads)
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[n]
    y = conv(xt, torch.from_numpy(_f64(w)), None if b is None else torch.from_numpy(_f64(b)),
             stride=strides, dilation=dilations, groups=a.get("group", 1))
    return _as(y.numpy(), x)


# ---------------------------------------------------------------------------------- pooling


def _pool(a, x, kind):
    """Max or average pooling by looping over the kernel's offsets (any rank, pads, dilations,
    ceil_mode, count_include_pad)."""
    n = x.ndim - 2
    kernel = list(a["kernel_shape"])
    strides = list(a.get("strides", [1] * n))
    dilations = list(a.get("dilations", [1] * n))
    begin, end = _pads(a, x.shape[2:], kernel, strides, dilations)
    ceil = a.get("ceil_mode", 0)
    outs, extra = [], []
    for i in range(n):
        size = x.shape[2 + i]
        span = (kernel[i] - 1) * dilations[i] + 1
        room = size + begin[i] + end[i] - span
        o = (-(-room // strides[i]) if ceil else room // strides[i]) + 1
        if ceil and (o - 1) * strides[i] >= size + begin[i]:
            o -= 1  # the last window would start in the end padding
        outs.append(o)
        extra.append(max(0, (o - 1) * strides[i] + span - (size + begin[i] + end[i])))
    fill = -np.inf if kind == "max" else 0.0
    width = [(0, 0), (0, 0)] + [(begin[i], end[i] + extra[i]) for i in range(n)]
    xp = np.pad(_f64(x), width, constant_values=fill)
    # Which padded positions an average counts: the input, plus the explicit pads when
    # count_include_pad (never the ceil_mode overhang).
    if a.get("count_include_pad", 0):
        counted = np.pad(np.ones([x.shape[2 + i] + begin[i] + end[i] for i in range(n)]),
                         [(0, extra[i]) for i in range(n)])
    else:
        counted = np.pad(np.ones(x.shape[2:]), [(begin[i], end[i] + extra[i]) for i in range(n)])
    acc = np.full(x.shape[:2] + tuple(outs), fill)
    count = np.zeros(outs)
    for offset in np.ndindex(*kernel):
        window = tuple(slice(offset[i] * dilations[i], offset[i] * dilations[i] + (outs[i] - 1) * strides[i] + 1,
                             strides[i]) for i in range(n))
        part = xp[(slice(None), slice(None)) + window]
        if kind == "max":
            acc = np.maximum(acc, part)
        else:
            acc = acc + part
            count = count + counted[window]
    return _as(acc if kind == "max" else acc / count, x)


def _max_pool(a, x):
    if len(a.outputs) > 1 and a.outputs[1]:
        raise NotImplementedError("onnx_numpy: MaxPool's Indices output")
    return _pool(a, x, "max")


def _global_pool(fn):
    return lambda a, x: _as(fn(_f64(x), axis=tuple(range(2, x.ndim)), keepdims=True), x)


# ---------------------------------------------------------------------------------- normalization


def _softmax(a, x):
    x64 = _f64(x)
    if a.opset < 13:  # coerced to 2-D at `axis` (default 1)
        axis = _axis(a.get("axis", 1), x.ndim)
        flat = x64.reshape(int(np.prod(x.shape[:axis])), -1)
        e = np.exp(flat - flat.max(axis=1, keepdims=True))
        return _as((e / e.sum(axis=1, keepdims=True)).reshape(x.shape), x)
    axis = a.get("axis", -1)
    e = np.exp(x64 - x64.max(axis=axis, keepdims=True))
    return _as(e / e.sum(axis=axis, keepdims=True), x)


def _layer_norm(a, x, scale, b=None):
    axes = tuple(range(_axis(a.get("axis", -1), x.ndim), x.ndim))
    x64 = _f64(x)
    mean = x64.mean(axis=axes, keepdims=True)
    inv_std = 1.0 / np.sqrt(((x64 - mean) ** 2).mean(axis=axes, keepdims=True) + a.get("epsilon", 1e-5))
    y = (x64 - mean) * inv_std * _f64(scale)
    if b is not None:
        y = y + _f64(b)
    return _as(y, x), _as(mean, x), _as(inv_std, x)


def _batch_norm(a, x, scale, b, mean, var):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    y = (_f64(x) - _f64(mean).reshape(shape)) / np.sqrt(_f64(var).reshape(shape) + a.get("epsilon", 1e-5))
    return _as(y * _f64(scale).reshape(shape) + _f64(b).reshape(shape), x)


def _reduce(fn, axes_input_since):
    def op(a, x, axes=None):
        if a.opset < axes_input_since:
            axes = a.get("axes")
        if axes is None or len(np.asarray(axes).reshape(-1)) == 0:
            if a.get("noop_with_empty_axes", 0):
                return x
            axes = range(x.ndim)
        axes = tuple(_axis(v, x.ndim) for v in _ints(axes))
        xin = _f64(x) if np.issubdtype(x.dtype, np.floating) else x
        y = fn(xin, axis=axes, keepdims=bool(a.get("keepdims", 1)))
        return _as(y, x)
    return op


# ---------------------------------------------------------------------------------- shapes


def _constant(a):
    if "value" in a:
        return numpy_helper.to_array(a["value"])
    for key, dtype in (("value_float", np.float32), ("value_floats", np.float32), ("value_int", np.int64),
                       ("value_ints", np.int64)):
        if key in a:
            return np.array(a[key], dtype=dtype)
    raise NotImplementedError(f"onnx_numpy: Constant with attributes {sorted(a)}")


def _constant_of_shape(a, shape):
    value = numpy_helper.to_array(a["value"]) if "value" in a else np.zeros(1, np.float32)
    return np.full(_ints(shape), value.reshape(-1)[0], dtype=value.dtype)


def _shape(a, x):
    dims = np.array(x.shape, dtype=np.int64)
    return dims[a.get("start", 0):a.get("end", None)]


def _reshape(a, x, shape):
    shape = _ints(shape)
    if not a.get("allowzero", 0):
        shape = [x.shape[i] if v == 0 else v for i, v in enumerate(shape)]
    return x.reshape(shape)


def _flatten(a, x):
    axis = _axis(a.get("axis", 1), x.ndim)
    return x.reshape(int(np.prod(x.shape[:axis])), -1)


def _transpose(a, x):
    return np.transpose(x, a.get("perm", list(reversed(range(x.ndim)))))


def _unsqueeze(a, x, axes=None):
    axes = _ints(a["axes"] if a.opset < 13 else axes)
    rank = x.ndim + len(axes)
    shape = list(x.shape)
    for axis in sorted(_axis(v, rank) for v in axes):
        shape.insert(axis, 1)
    return x.reshape(shape)


def _squeeze(a, x, axes=None):
    axes = a.get("axes") if a.opset < 13 else axes
    if axes is None:
        return np.squeeze(x)
    return np.squeeze(x, axis=tuple(_axis(v, x.ndim) for v in _ints(axes)))


def _slice(a, x, starts=None, ends=None, axes=None, steps=None):
    if a.opset < 10:
        starts, ends, axes = a["starts"], a["ends"], a.get("axes")
    starts, ends = _ints(starts), _ints(ends)
    axes = list(range(len(starts))) if axes is None else [_axis(v, x.ndim) for v in _ints(axes)]
    steps = [1] * len(starts) if steps is None else _ints(steps)
    index = [slice(None)] * x.ndim
    for axis, start, end, step in zip(axes, starts, ends, steps):
        size = x.shape[axis]
        # ONNX clamps to [0, size] going forward and [-1, size - 1] going backward; Python's
        # slice does the same once huge values (INT64_MAX / INT64_MIN) are brought in range.
        start, end = max(min(start, size), -size - 1), max(min(end, size), -size - 1)
        if step < 0 and end < -size:
            end = None
        index[axis] = slice(start, end, step)
    return x[tuple(index)]


def _gather(a, x, indices):
    axis = _axis(a.get("axis", 0), x.ndim)
    indices = np.where(indices < 0, indices + x.shape[axis], indices)
    return np.take(x, indices, axis=axis)


def _concat(a, *xs):
    return np.concatenate(xs, axis=a["axis"])


def _split(a, x, split=None):
    axis = _axis(a.get("axis", 0), x.ndim)
    if a.opset < 13:
        split = a.get("split")
    if split is None:
        parts = a.get("num_outputs") or len(a.outputs)
        size = -(-x.shape[axis] // parts)
        split = [min(size, x.shape[axis] - i * size) for i in range(parts)]
    return tuple(np.split(x, np.cumsum(_ints(split))[:-1], axis=axis))


def _expand(a, x, shape):
    shape = np.broadcast_shapes(x.shape, tuple(_ints(shape)))
    return np.array(np.broadcast_to(x, shape))


def _range(a, start, limit, delta):
    return np.arange(start, limit, delta).astype(np.asarray(start).dtype)


def _where(a, cond, x, y):
    return np.where(cond, x, y)


# ---------------------------------------------------------------------------------- quantization


def _per_axis(a, x, *params):
    """Q/DQ parameters broadcast against `x`: a scalar (or one-element vector) per tensor, a
    vector along `axis` (default 1) per axis."""
    if a.get("block_size", 0):
        raise NotImplementedError("onnx_numpy: blocked QuantizeLinear/DequantizeLinear (block_size)")
    scale = params[0]
    if scale.ndim == 1 and scale.size > 1:
        shape = [1] * x.ndim
        shape[_axis(a.get("axis", 1), x.ndim)] = -1
        return [None if p is None else p.reshape(shape) for p in params]
    return [None if p is None else p.reshape(()) for p in params]


_QTYPES = (np.int8, np.uint8, np.int16, np.uint16, np.int32)


def _quantize_linear(a, x, scale, zero_point=None):
    qtype = np.uint8 if zero_point is None else zero_point.dtype.type
    if a.get("output_dtype", 0):
        qtype = np_dtype(a["output_dtype"]).type
    if qtype not in _QTYPES:
        raise NotImplementedError(f"onnx_numpy: QuantizeLinear to {np.dtype(qtype)}")
    scale, zero_point = _per_axis(a, x, scale, zero_point)
    q = np.rint(x.astype(np.float32) / scale.astype(np.float32)).astype(np.float64)  # half to even
    if zero_point is not None:
        q = q + zero_point.astype(np.float64)
    info = np.iinfo(qtype)
    return np.clip(q, info.min, info.max).astype(qtype)


def _dequantize_linear(a, x, scale, zero_point=None):
    if x.dtype.type not in _QTYPES:
        raise NotImplementedError(f"onnx_numpy: DequantizeLinear of {x.dtype}")
    scale, zero_point = _per_axis(a, x, scale, zero_point)
    diff = x.astype(np.int64)
    if zero_point is not None:
        diff = diff - zero_point.astype(np.int64)
    return (diff.astype(np.float32) * scale.astype(np.float32)).astype(scale.dtype)


# ---------------------------------------------------------------------------------- the table

OPS = {
    # element-wise
    "Add": _binary(np.add), "Sub": _binary(np.subtract), "Mul": _binary(np.multiply), "Div": _div,
    "Pow": _pow, "Max": _variadic(np.maximum), "Min": _variadic(np.minimum), "Sum": _variadic(np.add),
    "Equal": _binary(np.equal), "Less": _binary(np.less), "Greater": _binary(np.greater),
    "LessOrEqual": _binary(np.less_equal), "GreaterOrEqual": _binary(np.greater_equal),
    "And": _binary(np.logical_and), "Or": _binary(np.logical_or), "Not": lambda a, x: np.logical_not(x),
    "Neg": lambda a, x: np.negative(x), "Abs": lambda a, x: np.abs(x), "Identity": lambda a, x: x,
    "Floor": lambda a, x: np.floor(x), "Ceil": lambda a, x: np.ceil(x),
    "Relu": lambda a, x: np.maximum(x, np.zeros((), x.dtype)),
    "LeakyRelu": lambda a, x: _as(np.where(x >= 0, _f64(x), a.get("alpha", 0.01) * _f64(x)), x),
    "Sqrt": _unary64(np.sqrt), "Exp": _unary64(np.exp), "Log": _unary64(np.log), "Tanh": _unary64(np.tanh),
    "Reciprocal": _unary64(lambda x: 1.0 / x), "Sigmoid": _unary64(lambda x: 1.0 / (1.0 + np.exp(-x))),
    "Erf": _erf, "Clip": _clip, "HardSigmoid": _hard_sigmoid, "HardSwish": _hard_swish, "Cast": _cast,
    "Where": _where,
    # contractions, pooling, normalization
    "MatMul": _matmul, "Gemm": _gemm, "Conv": _conv,
    "MaxPool": _max_pool, "AveragePool": lambda a, x: _pool(a, x, "avg"),
    "GlobalAveragePool": _global_pool(np.mean), "GlobalMaxPool": _global_pool(np.max),
    "Softmax": _softmax, "LayerNormalization": _layer_norm, "BatchNormalization": _batch_norm,
    "ReduceMean": _reduce(np.mean, 18), "ReduceSum": _reduce(np.sum, 13), "ReduceMax": _reduce(np.max, 18),
    "ReduceMin": _reduce(np.min, 18),
    # shapes and data movement
    "Constant": _constant, "ConstantOfShape": _constant_of_shape, "Shape": _shape, "Reshape": _reshape,
    "Flatten": _flatten, "Transpose": _transpose, "Unsqueeze": _unsqueeze, "Squeeze": _squeeze,
    "Slice": _slice, "Gather": _gather, "Concat": _concat, "Split": _split, "Expand": _expand,
    "Range": _range,
    # quantization
    "QuantizeLinear": _quantize_linear, "DequantizeLinear": _dequantize_linear,
}


def _opset(model):
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return entry.version
    raise ValueError("onnx_numpy: the model imports no default-domain opset")


def _check_supported(nodes):
    bad = sorted({f"{n.domain + '::' if n.domain not in ('', 'ai.onnx') else ''}{n.op_type}" for n in nodes
                  if n.domain not in ("", "ai.onnx") or n.op_type not in OPS})
    if bad:
        raise NotImplementedError(f"onnx_numpy: unsupported op(s): {', '.join(bad)}")


def run_node(node, inputs, opset):
    """Evaluates one NodeProto on a list of arrays (None for an omitted optional input);
    returns the list of its outputs."""
    _check_supported([node])
    attrs = Attrs({a.name: helper.get_attribute_value(a) for a in node.attribute}, opset)
    attrs.outputs = list(node.output)
    while inputs and inputs[-1] is None:  # trailing omitted inputs take the functions' defaults
        inputs = inputs[:-1]
    try:
        result = OPS[node.op_type](attrs, *inputs)
    except NotImplementedError:
        raise
    except Exception as e:  # noqa: BLE001 - name the node that failed
        raise RuntimeError(f"onnx_numpy: {node.op_type} node {node.name!r} failed: {type(e).__name__}: {e}") from e
    result = list(result) if isinstance(result, tuple) else [result]
    return [np.asarray(r) for r in result]


def _round_bf16(x):
    """float32 values rounded to the nearest bf16 (ties to even), as float32."""
    return torch.from_numpy(np.ascontiguousarray(x, np.float32)).to(torch.bfloat16).to(torch.float32).numpy()


def bf16_operands(node, constants, weight_rank):
    """The input positions rounded to bf16 under bf16=True (activation and weight), or ().
    `constants`: the names of the graph's constants; `weight_rank`: the rank of input 1."""
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    if node.op_type not in ("MatMul", "Gemm", "Conv") or len(node.input) < 2 or node.input[1] not in constants:
        return ()
    if (node.op_type == "MatMul" and weight_rank != 2) or \
            (node.op_type == "Gemm" and (attrs.get("transA", 0) or attrs.get("alpha", 1.0) != 1.0)) or \
            (node.op_type == "Conv" and attrs.get("group", 1) != 1):
        return ()  # (a batched weight, [1, K, N] too, stays f32)
    return (0, 1)


def run(model, feeds, outputs=None, bf16=False):
    """Evaluates `model` (ModelProto) on `feeds` ({graph input name: array}); returns {name:
    array} for `outputs` (any tensor names; default: the graph outputs). `bf16`: see above."""
    graph = model.graph
    opset = _opset(model)
    _check_supported(graph.node)
    env = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    for value in graph.input:
        if value.name in feeds:
            env[value.name] = np.asarray(feeds[value.name])
        elif value.name not in env:
            raise KeyError(f"onnx_numpy: no feed for graph input {value.name!r}")
    wanted = [o.name for o in graph.output] if outputs is None else list(outputs)
    keep = set(wanted)
    last_use = {}
    for i, node in enumerate(graph.node):
        for name in node.input:
            last_use[name] = i
    # Constants: initializers and what only constants compute (a transposed or sliced weight),
    # as the compiler folds them.
    constants = {t.name for t in graph.initializer}
    for node in graph.node:
        if all(not name or name in constants for name in node.input):
            constants.update(node.output)
    for i, node in enumerate(graph.node):
        args = [env[name] if name else None for name in node.input]
        if bf16:
            for j in bf16_operands(node, constants, args[1].ndim if len(args) > 1 and args[1] is not None else 0):
                if args[j] is not None and args[j].dtype == np.float32:
                    args[j] = _round_bf16(args[j])
        for name, value in zip(node.output, run_node(node, args, opset)):
            if name and (name in keep or name in last_use):  # an output nothing reads is dropped
                env[name] = value
        for name in set(node.input):  # free what no later node reads
            if name and last_use.get(name) == i and name not in keep:
                env.pop(name, None)
    missing = [name for name in wanted if name not in env]
    if missing:
        raise KeyError(f"onnx_numpy: no tensor named {', '.join(map(repr, missing))} in the graph")
    return {name: env[name] for name in wanted}
