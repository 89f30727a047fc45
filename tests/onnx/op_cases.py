#!/usr/bin/python3
"""ONNX op cases through hexir-compile and hexir-run, against NumPy and PyTorch references.

Each case is a small graph built with onnx.helper that exercises one op and its attributes
(groups, dilations, asymmetric pads, ceil_mode, broadcasting, negative steps ...). Error cases
check that what Hexir cannot compile is refused with a message naming the node and op.
Kernel-shape cases run the vectorized matmul, convolution and pooling kernels at sizes no tile
divides. --target-cpu compiles everything for another CPU level (x86-64 to AVX-512).
Usage: op_cases.py --bin BUILD/tools [--python BUILD/python] [--only NAME] [--target-cpu CPU] [--target TARGET]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import zlib

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

import bf16_cases
import control_flow_cases
import quantize_cases

RTOL, ATOL = 1e-4, 1e-5
rng = np.random.default_rng(0)
CASES = {}


def rnd(*shape, low=-1.0, high=1.0):
    return rng.uniform(low, high, size=shape).astype(np.float32)


def onnx_type(a):
    return {np.float32: TensorProto.FLOAT, np.int64: TensorProto.INT64, np.int32: TensorProto.INT32,
            np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8, np.bool_: TensorProto.BOOL,
            np.float64: TensorProto.DOUBLE, np.float16: TensorProto.FLOAT16, np.int16: TensorProto.INT16,
            np.uint16: TensorProto.UINT16, np.uint32: TensorProto.UINT32, np.uint64: TensorProto.UINT64}[a.dtype.type]


def model(nodes, inputs, outputs, inits=None, opset=13, input_dims=None):
    """inputs/outputs: {name: array}; input_dims overrides declared input dims (symbolic)."""
    vin = []
    for k, v in inputs.items():
        dims = (input_dims or {}).get(k, list(v.shape))
        vin.append(helper.make_tensor_value_info(k, onnx_type(v), dims))
    vout = [helper.make_tensor_value_info(k, onnx_type(v), list(v.shape)) for k, v in outputs.items()]
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in (inits or {}).items()]
    for i, n in enumerate(nodes):
        if not n.name:
            n.name = f"n{i}"
    graph = helper.make_graph(nodes, "case", vin, vout, initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def t(a):
    return torch.from_numpy(np.asarray(a))


# Each case returns (model, inputs, expected outputs) or, for error cases,
# (model, inputs, None, expected message) with optional extra hexir-compile args last.

# --- Conv ------------------------------------------------------------------------------

@case
def conv_remainder_tiles():
    # 67 output columns: prime, so no block tile but 1 divides it; the CUDA target's blocks take
    # 16 and the last one is shifted back over its neighbour's (both write the same values).
    x, w, b = rnd(1, 16, 5, 67), rnd(32, 16, 3, 3), rnd(32)
    ref = F.relu(F.conv2d(t(x), t(w), t(b), padding=1)).numpy()
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["y"])]
    return model(nodes, {"x": x}, {"y": ref}, {"w": w, "b": b}), {"x": x}, {"y": ref}


@case
def conv_prime_channels():
    # 17 input channels: no reduction step from 4 to 16 divides them; the CUDA target stages the
    # convolution with all 17 (times the 3x3 window) in one step.
    x, w, b = rnd(1, 17, 12, 12), rnd(32, 17, 3, 3), rnd(32)
    ref = F.conv2d(t(x), t(w), t(b), padding=1).numpy()
    n = helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1])
    return model([n], {"x": x}, {"y": ref}, {"w": w, "b": b}), {"x": x}, {"y": ref}


@case
def conv_groups_dilation_bias():
    x, w, b = rnd(1, 4, 9, 9), rnd(6, 2, 3, 3), rnd(6)
    ref = F.conv2d(t(x), t(w), t(b), stride=1, padding=1, dilation=2, groups=2).numpy()
    n = helper.make_node("Conv", ["x", "w", "b"], ["y"], group=2, dilations=[2, 2], pads=[1, 1, 1, 1])
    return model([n], {"x": x}, {"y": ref}, {"w": w, "b": b}), {"x": x}, {"y": ref}


@case
def conv_asymmetric_pads_stride():
    x, w, b = rnd(2, 3, 8, 7), rnd(5, 3, 3, 2), rnd(5)
    # pads = [top, left, bottom, right]
    ref = F.conv2d(F.pad(t(x), (1, 0, 0, 2)), t(w), t(b), stride=(2, 1)).numpy()
    n = helper.make_node("Conv", ["x", "w", "b"], ["y"], pads=[0, 1, 2, 0], strides=[2, 1])
    return model([n], {"x": x}, {"y": ref}, {"w": w, "b": b}), {"x": x}, {"y": ref}


@case
def conv_1x7_then_7x1():
    x, w1, w2 = rnd(1, 4, 12, 12), rnd(4, 4, 1, 7), rnd(3, 4, 7, 1)
    y1 = F.conv2d(t(x), t(w1), padding=(0, 3))
    ref = F.conv2d(y1, t(w2), padding=(3, 0), stride=2).numpy()
    nodes = [helper.make_node("Conv", ["x", "w1"], ["h"], kernel_shape=[1, 7], pads=[0, 3, 0, 3]),
             helper.make_node("Conv", ["h", "w2"], ["y"], kernel_shape=[7, 1], pads=[3, 0, 3, 0], strides=[2, 2])]
    return model(nodes, {"x": x}, {"y": ref}, {"w1": w1, "w2": w2}), {"x": x}, {"y": ref}


@case
def conv_depthwise_and_channel_multiplier():
    x, w1, w2 = rnd(1, 4, 10, 10), rnd(4, 1, 3, 3), rnd(8, 1, 3, 3)
    y1 = F.conv2d(t(x), t(w1), stride=2, padding=1, groups=4)
    ref = F.conv2d(y1, t(w2), padding=1, groups=4).numpy()
    nodes = [helper.make_node("Conv", ["x", "w1"], ["h"], group=4, strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["h", "w2"], ["y"], group=4, pads=[1, 1, 1, 1])]
    return model(nodes, {"x": x}, {"y": ref}, {"w1": w1, "w2": w2}), {"x": x}, {"y": ref}


@case
def conv_auto_pad_same_upper():
    x, w = rnd(1, 2, 7, 7), rnd(3, 2, 4, 4)
    # SAME_UPPER with stride 2 on 7: output 4, total pad 3 -> 1 before, 2 after.
    ref = F.conv2d(F.pad(t(x), (1, 2, 1, 2)), t(w), stride=2).numpy()
    n = helper.make_node("Conv", ["x", "w"], ["y"], auto_pad="SAME_UPPER", strides=[2, 2])
    return model([n], {"x": x}, {"y": ref}, {"w": w}), {"x": x}, {"y": ref}


@case
def conv_1d_and_runtime_weights():
    x, w = rnd(2, 3, 20), rnd(4, 3, 5)
    ref = F.conv1d(t(x), t(w), stride=3, padding=2, dilation=2).numpy()
    n = helper.make_node("Conv", ["x", "w"], ["y"], strides=[3], pads=[2, 2], dilations=[2])
    return model([n], {"x": x, "w": w}, {"y": ref}), {"x": x, "w": w}, {"y": ref}


# --- pooling ---------------------------------------------------------------------------

@case
def maxpool_ceil_mode_pads():
    x = rnd(1, 2, 10, 11)
    ref = F.max_pool2d(t(x), 3, stride=2, padding=1, ceil_mode=True).numpy()
    n = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)
    return model([n], {"x": x}, {"y": ref}), {"x": x}, {"y": ref}


@case
def maxpool_dilation_floor():
    x = rnd(1, 3, 12, 12)
    ref = F.max_pool2d(t(x), 2, stride=3, dilation=2).numpy()
    n = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], strides=[3, 3], dilations=[2, 2])
    return model([n], {"x": x}, {"y": ref}, opset=13), {"x": x}, {"y": ref}


@case
def averagepool_count_include_pad_ceil():
    x = rnd(1, 2, 9, 9)
    r1 = F.avg_pool2d(t(x), 3, stride=2, padding=1, ceil_mode=True, count_include_pad=True).numpy()
    r2 = F.avg_pool2d(t(x), 3, stride=2, padding=1, ceil_mode=False, count_include_pad=False).numpy()
    nodes = [helper.make_node("AveragePool", ["x"], ["y1"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                              ceil_mode=1, count_include_pad=1),
             helper.make_node("AveragePool", ["x"], ["y2"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])]
    return model(nodes, {"x": x}, {"y1": r1, "y2": r2}), {"x": x}, {"y1": r1, "y2": r2}


@case
def global_pools():
    x = rnd(2, 3, 5, 6)
    r1 = x.mean(axis=(2, 3), keepdims=True)
    r2 = x.max(axis=(2, 3), keepdims=True)
    nodes = [helper.make_node("GlobalAveragePool", ["x"], ["y1"]), helper.make_node("GlobalMaxPool", ["x"], ["y2"])]
    return model(nodes, {"x": x}, {"y1": r1, "y2": r2}), {"x": x}, {"y1": r1, "y2": r2}


@case
def large_reductions():
    """Few outputs, each reducing many values: the CUDA target shares each output among a
    block's threads (hexir-cuda-split-reductions): pools over 40x40 pixels of 8 channels, sums
    along a contiguous axis of 1000, a max along a strided axis of 300, a mean over an awkward
    3000 pixels of 3 channels, a matrix times a vector (weights and bias constant) and a
    reduction over a prime 131 values (not split)."""
    x, r, m, p, v, q = rnd(1, 8, 40, 40), rnd(3, 1000), rnd(2, 300, 7), rnd(2, 50, 60, 3), rnd(1, 640), rnd(4, 131)
    w, b = rnd(640, 300), rnd(300)
    outs = {"gap": x.mean(axis=(2, 3), keepdims=True), "gmp": x.max(axis=(2, 3), keepdims=True),
            "rsum": r.sum(axis=-1, keepdims=True), "rmax": m.max(axis=1, keepdims=True),
            "mean": p.mean(axis=(1, 2)),
            "gemv": (v.astype(np.float64) @ w.astype(np.float64) + b).astype(np.float32),
            "prime": q.sum(axis=-1, keepdims=True)}
    nodes = [helper.make_node("GlobalAveragePool", ["x"], ["gap"]), helper.make_node("GlobalMaxPool", ["x"], ["gmp"]),
             helper.make_node("ReduceSum", ["r", "last"], ["rsum"]),
             helper.make_node("ReduceMax", ["m"], ["rmax"], axes=[1]),
             helper.make_node("ReduceMean", ["p"], ["mean"], axes=[1, 2], keepdims=0),
             helper.make_node("Gemm", ["v", "w", "b"], ["gemv"]),
             helper.make_node("ReduceSum", ["q", "last"], ["prime"])]
    inputs = {"x": x, "r": r, "m": m, "p": p, "v": v, "q": q}
    inits = {"last": np.array([-1], np.int64), "w": w, "b": b}
    return model(nodes, inputs, outs, inits), inputs, outs


# --- Gemm / MatMul ---------------------------------------------------------------------

@case
def gemm_transposes_alpha_beta():
    a, b, c = rnd(5, 3), rnd(4, 5), rnd(4)
    ref = (0.5 * a.T.astype(np.float64) @ b.T.astype(np.float64) + 2.0 * c).astype(np.float32)
    n = helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=1, transB=1, alpha=0.5, beta=2.0)
    return model([n], {"a": a}, {"y": ref}, {"b": b, "c": c}), {"a": a}, {"y": ref}


@case
def matmul_batched_broadcast():
    a, b = rnd(2, 1, 3, 4), rnd(5, 4, 6)
    v, m = rnd(4), rnd(2, 3, 4)
    r1 = np.matmul(a, b)
    r2 = np.matmul(v, b)               # 1-D @ batched: (5, 6)
    r3 = np.matmul(m, v)               # batched @ 1-D: (2, 3)
    nodes = [helper.make_node("MatMul", ["a", "b"], ["y1"]), helper.make_node("MatMul", ["v", "b"], ["y2"]),
             helper.make_node("MatMul", ["m", "v"], ["y3"])]
    ins = {"a": a, "b": b, "v": v, "m": m}
    outs = {"y1": r1, "y2": r2, "y3": r3}
    return model(nodes, ins, outs), ins, outs


# --- elementwise -----------------------------------------------------------------------

@case
def arithmetic_broadcasting():
    x, y = rnd(2, 3, 4), rnd(3, 1, low=0.5, high=2.0)
    outs = {"add": x + y, "sub": x - y, "mul": x * y, "div": x / y, "max": np.maximum(x, y),
            "min": np.minimum(x, y)}
    nodes = [helper.make_node(op, ["x", "y"], [k]) for op, k in
             [("Add", "add"), ("Sub", "sub"), ("Mul", "mul"), ("Div", "div"), ("Max", "max"), ("Min", "min")]]
    return model(nodes, {"x": x, "y": y}, outs), {"x": x, "y": y}, outs


@case
def pow_exponents():
    x, p = rnd(3, 4), rnd(3, 4, low=0.5, high=2.0)
    pos = np.abs(x) + 0.1
    outs = {"sq": x ** 2, "cube": x ** 3, "root": np.sqrt(pos), "inv": 1 / (pos * pos),
            "general": pos ** p}
    inits = {"two": np.array(2.0, np.float32), "three": np.array(3.0, np.float32),
             "half": np.array(0.5, np.float32), "m2": np.array([-2.0], np.float32)}
    nodes = [helper.make_node("Pow", ["x", "two"], ["sq"]), helper.make_node("Pow", ["x", "three"], ["cube"]),
             helper.make_node("Pow", ["pos", "half"], ["root"]), helper.make_node("Pow", ["pos", "m2"], ["inv"]),
             helper.make_node("Pow", ["pos", "p"], ["general"])]
    ins = {"x": x, "pos": pos, "p": p}
    return model(nodes, ins, outs, inits), ins, outs


@case
def activations():
    x = rnd(4, 5, low=-4, high=4)
    xt = t(x)
    outs = {
        "relu": np.maximum(x, 0), "sigmoid": torch.sigmoid(xt).numpy(), "tanh": np.tanh(x),
        "erf": torch.erf(xt).numpy(), "hsig": np.clip(0.3 * x + 0.4, 0, 1),
        "hswish": F.hardswish(xt).numpy(), "clip": np.clip(x, -1.5, 2.0), "clipmax": np.minimum(x, 0.5),
        "leaky": np.where(x >= 0, x, 0.2 * x), "exp": np.exp(x), "neg": -x, "abs": np.abs(x),
        "sqrt": np.sqrt(np.abs(x)), "log": np.log(np.abs(x) + 1), "recip": 1 / (np.abs(x) + 1),
    }
    inits = {"lo": np.array(-1.5, np.float32), "hi": np.array(2.0, np.float32), "half": np.array(0.5, np.float32),
             "one": np.array(1.0, np.float32)}
    nodes = [helper.make_node("Relu", ["x"], ["relu"]), helper.make_node("Sigmoid", ["x"], ["sigmoid"]),
             helper.make_node("Tanh", ["x"], ["tanh"]), helper.make_node("Erf", ["x"], ["erf"]),
             helper.make_node("HardSigmoid", ["x"], ["hsig"], alpha=0.3, beta=0.4),
             helper.make_node("HardSwish", ["x"], ["hswish"]),
             helper.make_node("Clip", ["x", "lo", "hi"], ["clip"]), helper.make_node("Clip", ["x", "", "half"], ["clipmax"]),
             helper.make_node("LeakyRelu", ["x"], ["leaky"], alpha=0.2), helper.make_node("Exp", ["x"], ["exp"]),
             helper.make_node("Neg", ["x"], ["neg"]), helper.make_node("Abs", ["x"], ["abs"]),
             helper.make_node("Abs", ["x"], ["a"]), helper.make_node("Sqrt", ["a"], ["sqrt"]),
             helper.make_node("Add", ["a", "one"], ["a1"]), helper.make_node("Log", ["a1"], ["log"]),
             helper.make_node("Reciprocal", ["a1"], ["recip"])]
    return model(nodes, {"x": x}, outs, inits, opset=14), {"x": x}, outs


@case
def logistic_extremes():
    # Sigmoid and SiLU over vectors spanning where exp(-x) overflows (the kernels cap it before
    # the reciprocal estimate): results as PyTorch's, down to the underflowed tail.
    x = np.concatenate([np.linspace(-150, 150, 192), rnd(64, low=-8, high=8)]).astype(np.float32).reshape(4, 64)
    xt = t(x).double()
    outs = {"sig": torch.sigmoid(xt).numpy().astype(np.float32), "silu": F.silu(xt).numpy().astype(np.float32)}
    nodes = [helper.make_node("Sigmoid", ["x"], ["sig"]), helper.make_node("Sigmoid", ["x"], ["s2"]),
             helper.make_node("Mul", ["x", "s2"], ["silu"])]
    return model(nodes, {"x": x}, outs), {"x": x}, outs


@case
def math_functions_edges():
    # The math ops beyond the basic ones (MathOps.cpp) at their awkward values: Round's ties to
    # even, Sign of 0 and NaN, trigonometric and hyperbolic functions near 0 and far out, Softplus
    # where exp overflows, IsNaN/IsInf, and Mod's signs. References from NumPy in float64.
    with np.errstate(all="ignore"):
        ties = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, -0.49999997, 0.49999997, 1e7 + 0.5, np.nan, np.inf],
                        np.float32)
        x = np.concatenate([np.linspace(-6, 6, 40), [1e-6, -1e-6, 0.0, 30.0, -30.0, 88.0, -100.0, 1e-3]]).astype(
            np.float32)
        u = np.linspace(-0.999, 0.999, 48).astype(np.float32)
        big = np.linspace(1.001, 40, 48).astype(np.float32)
        sx = np.array([-3.0, -0.0, 0.0, 2.0, np.nan, -np.inf, np.inf, 1e-30], np.float32)
        xd = x.astype(np.float64)
        a = np.array([7, -7, 7, -7, 0, 5, -9, 100], np.int64)
        b = np.array([3, 3, -3, -3, 4, 0, -1, 7], np.int64)
        fa, fb = np.array([5.5, -5.5, 5.5, -5.5, 0.25], np.float32), np.array([2.0, 2.0, -2.0, -2.0, 0.1], np.float32)
        outs = {"round": np.round(ties), "sign": np.sign(sx),
                "sin": np.sin(xd), "cos": np.cos(xd), "tan": np.tan(np.clip(xd, -1.4, 1.4)),
                "sinh": np.sinh(np.clip(xd, -20, 20)), "cosh": np.cosh(np.clip(xd, -20, 20)),
                "asinh": np.arcsinh(xd), "atan": np.arctan(xd), "asin": np.arcsin(u.astype(np.float64)),
                "acos": np.arccos(u.astype(np.float64)), "atanh": np.arctanh(u.astype(np.float64)),
                "acosh": np.arccosh(big.astype(np.float64)),
                "softplus": np.logaddexp(0, xd), "softsign": xd / (1 + np.abs(xd)),
                "isnan": np.isnan(sx), "isinf": np.isinf(sx), "modi": np.mod(a, np.where(b == 0, 1, b)) * (b != 0),
                "fmodi": np.fmod(a, np.where(b == 0, 1, b)) * (b != 0), "fmodf": np.fmod(fa, fb)}
    outs = {k: (v.astype(np.float32) if v.dtype == np.float64 else v) for k, v in outs.items()}
    outs["modi"][6] = 0  # x % -1 is 0 (NumPy agrees; kept explicit)
    clipped = {"tan_in": np.clip(x, -1.4, 1.4).astype(np.float32), "h_in": np.clip(x, -20, 20).astype(np.float32)}
    nodes = [helper.make_node("Round", ["ties"], ["round"]), helper.make_node("Sign", ["sx"], ["sign"]),
             helper.make_node("Sin", ["x"], ["sin"]), helper.make_node("Cos", ["x"], ["cos"]),
             helper.make_node("Tan", ["tan_in"], ["tan"]), helper.make_node("Sinh", ["h_in"], ["sinh"]),
             helper.make_node("Cosh", ["h_in"], ["cosh"]), helper.make_node("Asinh", ["x"], ["asinh"]),
             helper.make_node("Atan", ["x"], ["atan"]), helper.make_node("Asin", ["u"], ["asin"]),
             helper.make_node("Acos", ["u"], ["acos"]), helper.make_node("Atanh", ["u"], ["atanh"]),
             helper.make_node("Acosh", ["big"], ["acosh"]), helper.make_node("Softplus", ["x"], ["softplus"]),
             helper.make_node("Softsign", ["x"], ["softsign"]), helper.make_node("IsNaN", ["sx"], ["isnan"]),
             helper.make_node("IsInf", ["sx"], ["isinf"]), helper.make_node("Mod", ["a", "b"], ["modi"]),
             helper.make_node("Mod", ["a", "b"], ["fmodi"], fmod=1), helper.make_node("Mod", ["fa", "fb"], ["fmodf"], fmod=1)]
    ins = {"ties": ties, "sx": sx, "x": x, "u": u, "big": big, "a": a, "b": b, "fa": fa, "fb": fb, **clipped}
    return model(nodes, ins, outs), ins, outs


@case
def activations_more():
    x = np.concatenate([np.linspace(-8, 8, 60), [0.0, 1.0, 0.5, -0.5]]).astype(np.float32).reshape(4, 16)
    slope = rnd(16)
    xt = t(x).double()
    outs = {"elu": F.elu(xt, 0.7).numpy(), "selu": F.selu(xt).numpy(), "celu": F.celu(xt, 1.3).numpy(),
            "thr": F.threshold(xt, 1.0, 0.0).numpy(), "shrink": torch.where(xt < -0.5, xt + 0.2,
                                                                            torch.where(xt > 0.5, xt - 0.2, 0)).numpy(),
            "prelu": torch.where(xt < 0, t(slope).double() * xt, xt).numpy(), "mish": F.mish(xt).numpy(),
            "sum": (xt + t(slope).double() + 1.5).numpy(), "mean": ((xt + t(slope).double()) / 2).numpy()}
    outs = {k: v.astype(np.float32) for k, v in outs.items()}
    nodes = [helper.make_node("Elu", ["x"], ["elu"], alpha=0.7), helper.make_node("Selu", ["x"], ["selu"]),
             helper.make_node("Celu", ["x"], ["celu"], alpha=1.3),
             helper.make_node("ThresholdedRelu", ["x"], ["thr"], alpha=1.0),
             helper.make_node("Shrink", ["x"], ["shrink"], lambd=0.5, bias=0.2),
             helper.make_node("PRelu", ["x", "slope"], ["prelu"]), helper.make_node("Mish", ["x"], ["mish"]),
             helper.make_node("Sum", ["x", "slope", "c"], ["sum"]), helper.make_node("Mean", ["x", "slope"], ["mean"])]
    return (model(nodes, {"x": x}, outs, {"slope": slope, "c": np.array(1.5, np.float32)}, opset=18), {"x": x}, outs)


@case
def fix_input_shape_and_axes():
    # Inputs Hexir needs at compile time (Reshape's shape, ReduceSum's axes, TopK-like k), given
    # as model inputs and fixed with --fix-input: the executable takes only x.
    x = rnd(2, 3, 4)
    ref = {"y": x.reshape(4, 6).sum(axis=1, keepdims=True)}
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["r"]), helper.make_node("ReduceSum", ["r", "axes"], ["y"])]
    graph_inputs = {"x": x, "shape": np.array([4, 6], np.int64), "axes": np.array([1], np.int64)}
    return (model(nodes, graph_inputs, ref), {"x": x}, ref, ["--fix-input", "shape=4,6", "--fix-input", "axes=1"])


@case
def gather_elements_depth_space():
    # GatherElements with run-time and constant indices (negative ones too) against NumPy's
    # take_along_axis; DepthToSpace in both modes and SpaceToDepth as ONNX defines them (CRD is
    # PyTorch's pixel_shuffle).
    data = rnd(3, 5, 4)
    idx = rng.integers(-5, 5, size=(3, 2, 4)).astype(np.int64)
    cidx = rng.integers(0, 4, size=(2, 5, 3)).astype(np.int64)
    x = rnd(2, 8, 3, 5)
    n, c, h, w = x.shape
    b = 2
    dcr = x.reshape(n, b, b, c // 4, h, w).transpose(0, 3, 4, 1, 5, 2).reshape(n, c // 4, h * b, w * b)
    crd = F.pixel_shuffle(t(x), b).numpy()
    y = rnd(1, 3, 4, 6)
    s2d = y.reshape(1, 3, 2, 2, 3, 2).transpose(0, 3, 5, 1, 2, 4).reshape(1, 12, 2, 3)
    outs = {"g": np.take_along_axis(data, np.where(idx < 0, idx + 5, idx), axis=1),
            "gc": np.take_along_axis(data[:2], cidx, axis=2), "dcr": dcr, "crd": crd, "s2d": s2d}
    nodes = [helper.make_node("GatherElements", ["data", "idx"], ["g"], axis=1),
             helper.make_node("GatherElements", ["data", "cidx"], ["gc"], axis=-1),
             helper.make_node("DepthToSpace", ["x"], ["dcr"], blocksize=2),
             helper.make_node("DepthToSpace", ["x"], ["crd"], blocksize=2, mode="CRD"),
             helper.make_node("SpaceToDepth", ["y"], ["s2d"], blocksize=2)]
    ins = {"data": data, "idx": idx, "x": x, "y": y}
    return model(nodes, ins, outs, {"cidx": cidx}), ins, outs


@case
def where_equal_cast():
    ids = rng.integers(0, 4, size=(3, 5)).astype(np.int64)
    x, y = rnd(3, 5), rnd(5)
    eq = ids == 2
    outs = {"sel": np.where(eq, x, y), "asf": ids.astype(np.float32) * 0.5,
            "toint": (x * 10).astype(np.int64), "mask": eq.astype(np.float32),
            "less": np.where(x < y, 1.0, 0.0).astype(np.float32)}
    inits = {"two": np.array(2, np.int64), "half": np.array(0.5, np.float32), "ten": np.array(10.0, np.float32),
             "one": np.array(1.0, np.float32), "zero": np.array(0.0, np.float32)}
    nodes = [helper.make_node("Equal", ["ids", "two"], ["eq"]), helper.make_node("Where", ["eq", "x", "y"], ["sel"]),
             helper.make_node("Cast", ["ids"], ["idsf"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["idsf", "half"], ["asf"]), helper.make_node("Mul", ["x", "ten"], ["x10"]),
             helper.make_node("Cast", ["x10"], ["toint"], to=TensorProto.INT64),
             helper.make_node("Cast", ["eq"], ["mask"], to=TensorProto.FLOAT),
             helper.make_node("Less", ["x", "y"], ["lt"]), helper.make_node("Where", ["lt", "one", "zero"], ["less"])]
    ins = {"ids": ids, "x": x, "y": y}
    return model(nodes, ins, outs, inits), ins, outs


@case
def integer_edge_values_fold_like_kernels():
    # Integer Div, Add, Mul and Neg on edge values, once on run-time inputs (the kernels) and
    # once on constants (folded at import): both give the documented results, two's complement
    # wrapping, x / 0 = 0 and MIN / -1 = MIN (folding used to kill the compiler with SIGFPE).
    lo, hi = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    a = np.array([lo, 7, -7, 5, hi, lo, 0, hi], np.int64)
    b = np.array([-1, 0, 2, -2, -1, 1, 3, 2], np.int64)

    def trunc_div(x, y):
        if y == 0:
            return 0
        if y == -1:
            return int(np.int64(-(int(x))) if x != lo else lo)
        q = abs(int(x)) // abs(int(y))
        return q if (x < 0) == (y < 0) else -q

    def wrap(v):
        return (int(v) + 2 ** 63) % 2 ** 64 - 2 ** 63

    div = np.array([trunc_div(x, y) for x, y in zip(a, b)], np.int64)
    add = np.array([wrap(int(x) + int(y)) for x, y in zip(a, b)], np.int64)
    mul = np.array([wrap(int(x) * int(y)) for x, y in zip(a, b)], np.int64)
    neg = np.array([wrap(-int(x)) for x in a], np.int64)
    nodes = []
    outs = {}
    for src in ("run", "fold"):
        x, y = ("a", "b") if src == "run" else ("ca", "cb")
        nodes += [helper.make_node("Div", [x, y], [f"div_{src}"]), helper.make_node("Add", [x, y], [f"add_{src}"]),
                  helper.make_node("Mul", [x, y], [f"mul_{src}"]), helper.make_node("Neg", [x], [f"neg_{src}"])]
        outs.update({f"div_{src}": div, f"add_{src}": add, f"mul_{src}": mul, f"neg_{src}": neg})
    return model(nodes, {"a": a, "b": b}, outs, {"ca": a, "cb": b}), {"a": a, "b": b}, outs


# --- data movement ---------------------------------------------------------------------

@case
def shape_ops():
    x = rnd(2, 3, 4)
    split = np.split(x, [1, 4], axis=2)
    halves = np.split(x, 2, axis=0)
    outs = {
        "expand": np.broadcast_to(x[0, :, :1], (2, 3, 4)).copy(),
        "pad": np.pad(x, ((0, 0), (1, 0), (2, 1)), constant_values=0.25),
        "slice": x[:, ::-1, 3:0:-2], "transpose": x.transpose(2, 0, 1), "flatten": x.reshape(2, 12),
        "squeeze": x[:, :1, :].reshape(2, 4), "unsqueeze": x.reshape(2, 1, 3, 4, 1),
        "reshape": x.reshape(3, 8), "concat": np.concatenate([x, x * 2], axis=1),
        "s0": split[0], "s1": split[1], "h0": halves[0], "h1": halves[1],
    }
    inits = {"zero": np.array(0, np.int64), "b0": np.array([0], np.int64), "b1": np.array([1], np.int64),
             "eshape": np.array([2, 3, 4], np.int64), "pads": np.array([0, 1, 2, 0, 0, 1], np.int64),
             "pv": np.array(0.25, np.float32), "st": np.array([-1, 3], np.int64), "en": np.array([-10, 0], np.int64),
             "ax": np.array([1, 2], np.int64), "sp": np.array([-1, -2], np.int64),
             "unsq_ax": np.array([1, 4], np.int64), "rs": np.array([3, -1], np.int64),
             "two": np.array(2.0, np.float32), "split": np.array([1, 3], np.int64)}
    nodes = [
        # x[0, :, :1] (a constant scalar Gather, then a Slice), broadcast back by Expand.
        helper.make_node("Gather", ["x", "zero"], ["x0"], axis=0),
        helper.make_node("Slice", ["x0", "b0", "b1", "b1"], ["col"]),
        helper.make_node("Expand", ["col", "eshape"], ["expand"]),
        helper.make_node("Pad", ["x", "pads", "pv"], ["pad"]),
        helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["slice"]),
        helper.make_node("Transpose", ["x"], ["transpose"], perm=[2, 0, 1]),
        helper.make_node("Flatten", ["x"], ["flatten"]),
        helper.make_node("Slice", ["x", "b0", "b1", "b1"], ["row"]),
        helper.make_node("Squeeze", ["row", "b1"], ["squeeze"]),
        helper.make_node("Unsqueeze", ["x", "unsq_ax"], ["unsqueeze"]),
        helper.make_node("Reshape", ["x", "rs"], ["reshape"]),
        helper.make_node("Mul", ["x", "two"], ["x2"]),
        helper.make_node("Concat", ["x", "x2"], ["concat"], axis=1),
        helper.make_node("Split", ["x", "split"], ["s0", "s1_"], axis=2),
        helper.make_node("Identity", ["s1_"], ["s1"]),
        helper.make_node("Split", ["x"], ["h0", "h1_"], axis=0),
        helper.make_node("Dropout", ["h1_"], ["h1"]),
    ]
    return model(nodes, {"x": x}, outs, inits), {"x": x}, outs


@case
def pad_modes_tile_onehot():
    # Pad's edge and reflect modes (pads past the axis reflect again, as numpy.pad), negative
    # pads (crops), Tile, OneHot (negative and out-of-range indices), EyeLike and the windows.
    x = rnd(2, 3, 4)
    ids = np.array([[0, -1, 2], [5, -4, 3]], np.int64)
    depth = 4
    hot = np.zeros((2, depth, 3), np.float32) + 0.5
    for i in range(2):
        for j in range(3):
            k = ids[i, j] + depth if ids[i, j] < 0 else ids[i, j]
            if 0 <= k < depth:
                hot[i, k, j] = 2.0
    n = np.arange(7)
    outs = {
        "edge": np.pad(x, ((0, 0), (2, 1), (1, 3)), mode="edge"),
        "reflect": np.pad(x, ((1, 0), (0, 5), (3, 2)), mode="reflect"),
        "crop": np.pad(x, ((0, 0), (1, 0), (0, 0)), constant_values=0)[:, :, 1:3],
        "tile": np.tile(x, (2, 1, 3)),
        "hot": hot,
        "eye": np.eye(3, 5, k=1, dtype=np.float32),
        "hann": (0.5 - 0.5 * np.cos(2 * np.pi * n / 7)).astype(np.float32),
        "blackman": (0.42 - 0.5 * np.cos(2 * np.pi * n / 6) + 0.08 * np.cos(4 * np.pi * n / 6)).astype(np.float32),
    }
    inits = {"pe": np.array([0, 2, 1, 0, 1, 3], np.int64), "pr": np.array([1, 0, 3, 0, 5, 2], np.int64),
             "pc": np.array([0, 1, -1, 0, 0, -1], np.int64), "rep": np.array([2, 1, 3], np.int64),
             "depth": np.array(depth, np.int64), "vals": np.array([0.5, 2.0], np.float32),
             "eshape": np.zeros((3, 5), np.float32), "size": np.array(7, np.int32)}
    nodes = [
        helper.make_node("Pad", ["x", "pe"], ["edge"], mode="edge"),
        helper.make_node("Pad", ["x", "pr"], ["reflect"], mode="reflect"),
        helper.make_node("Pad", ["x", "pc"], ["crop"]),
        helper.make_node("Tile", ["x", "rep"], ["tile"]),
        helper.make_node("OneHot", ["ids", "depth", "vals"], ["hot"], axis=1),
        helper.make_node("EyeLike", ["eshape"], ["eye"], k=1),
        helper.make_node("HannWindow", ["size"], ["hann"]),
        helper.make_node("BlackmanWindow", ["size"], ["blackman"], periodic=0),
    ]
    ins = {"x": x, "ids": ids}
    return model(nodes, ins, outs, inits, opset=17), ins, outs


@case
def resize_like_pytorch():
    # Resize against torch.nn.functional.interpolate (up in H, down in W): bilinear and bicubic
    # with and without align_corners, nearest and nearest-exact, trilinear on a 5-D tensor.
    x = rnd(1, 2, 5, 7)
    v = rnd(1, 1, 3, 4, 5)
    t = torch.from_numpy(x)
    size = (9, 4)
    outs = {
        "bilinear": F.interpolate(t, size=size, mode="bilinear", align_corners=False).numpy(),
        "bilinear_ac": F.interpolate(t, size=size, mode="bilinear", align_corners=True).numpy(),
        "bicubic": F.interpolate(t, size=size, mode="bicubic", align_corners=False).numpy(),
        "bicubic_ac": F.interpolate(t, size=size, mode="bicubic", align_corners=True).numpy(),
        "nearest": F.interpolate(t, size=size, mode="nearest").numpy(),
        "nearest_exact": F.interpolate(t, size=size, mode="nearest-exact").numpy(),
        "trilinear": F.interpolate(torch.from_numpy(v), size=(6, 2, 7), mode="trilinear",
                                   align_corners=False).numpy(),
    }
    inits = {"sizes": np.array([1, 2, *size], np.int64), "vsizes": np.array([1, 1, 6, 2, 7], np.int64)}

    def resize(out, mode, transform, data="x", sizes="sizes", **attrs):
        return helper.make_node("Resize", [data, "", "", sizes], [out], mode=mode,
                                coordinate_transformation_mode=transform, **attrs)
    nodes = [
        resize("bilinear", "linear", "pytorch_half_pixel"),
        resize("bilinear_ac", "linear", "align_corners"),
        resize("bicubic", "cubic", "pytorch_half_pixel", cubic_coeff_a=-0.75),
        resize("bicubic_ac", "cubic", "align_corners", cubic_coeff_a=-0.75),
        resize("nearest", "nearest", "asymmetric", nearest_mode="floor"),
        resize("nearest_exact", "nearest", "half_pixel", nearest_mode="round_prefer_ceil"),
        resize("trilinear", "linear", "pytorch_half_pixel", data="v", sizes="vsizes"),
    ]
    ins = {"x": x, "v": v}
    return model(nodes, ins, outs, inits), ins, outs


@case
def unsigned_and_16_bit_integers():
    # uint8 to uint64 and int16 as NumPy computes them: wrapping Add/Sub/Mul, unsigned Div and
    # Mod (by 0: 0), Min/Max and comparisons past the signed range, BitShift (past the width: 0),
    # casts to and from float.
    rng = np.random.default_rng(7)
    outs, nodes, ins = {}, [], {}
    for t in (np.uint8, np.uint16, np.uint32, np.uint64, np.int16):
        info = np.iinfo(t)
        a = rng.integers(info.min, info.max, size=6, dtype=t, endpoint=True)
        b = rng.integers(info.min, info.max, size=6, dtype=t, endpoint=True)
        b[0] = 0
        a[1], b[1] = info.max, info.max - 1  # past the signed range for unsigned types
        n = np.dtype(t).name
        ins[f"a_{n}"], ins[f"b_{n}"] = a, b
        with np.errstate(over="ignore", divide="ignore"):
            outs[f"add_{n}"], outs[f"sub_{n}"], outs[f"mul_{n}"] = a + b, a - b, a * b
            outs[f"max_{n}"], outs[f"less_{n}"] = np.maximum(a, b), a < b
            outs[f"float_{n}"] = a.astype(np.float32)
            if info.min == 0:
                outs[f"div_{n}"] = np.where(b == 0, 0, a // np.where(b == 0, 1, b)).astype(t)
                outs[f"mod_{n}"] = np.where(b == 0, 0, a % np.where(b == 0, 1, b)).astype(t)
                shift = (np.arange(6) * (np.iinfo(t).bits // 3)).astype(t)
                ins[f"s_{n}"] = shift
                outs[f"shl_{n}"] = np.where(shift >= info.bits, 0, a << np.where(shift >= info.bits, 0, shift)).astype(t)
                outs[f"shr_{n}"] = np.where(shift >= info.bits, 0, a >> np.where(shift >= info.bits, 0, shift)).astype(t)
        nodes += [helper.make_node("Add", [f"a_{n}", f"b_{n}"], [f"add_{n}"]),
                  helper.make_node("Sub", [f"a_{n}", f"b_{n}"], [f"sub_{n}"]),
                  helper.make_node("Mul", [f"a_{n}", f"b_{n}"], [f"mul_{n}"]),
                  helper.make_node("Max", [f"a_{n}", f"b_{n}"], [f"max_{n}"]),
                  helper.make_node("Less", [f"a_{n}", f"b_{n}"], [f"less_{n}"]),
                  helper.make_node("Cast", [f"a_{n}"], [f"float_{n}"], to=TensorProto.FLOAT)]
        if info.min == 0:
            nodes += [helper.make_node("Div", [f"a_{n}", f"b_{n}"], [f"div_{n}"]),
                      helper.make_node("Mod", [f"a_{n}", f"b_{n}"], [f"mod_{n}"]),
                      helper.make_node("BitShift", [f"a_{n}", f"s_{n}"], [f"shl_{n}"], direction="LEFT"),
                      helper.make_node("BitShift", [f"a_{n}", f"s_{n}"], [f"shr_{n}"], direction="RIGHT")]
    return model(nodes, ins, outs), ins, outs


@case
def float16_and_double_interface():
    # float16 and double inputs and outputs (computed in f32 inside): a float16 value rounds to
    # nearest even at the output (subnormals, overflow to inf, NaN), Cast to FLOAT16 rounds, and
    # a double passes through f32.
    h = np.array([0.1, -2.5, 65504, 6e-8, 3e-5, -0.0, np.inf, np.nan], np.float16)
    d = np.array([1.5, -3.25, 1e-3, 2.0 ** 40], np.float64)
    x = np.array([1.0001, 70000.0, 1e-7, -3e-6, 0.33333334, 2049.0], np.float32)
    with np.errstate(over="ignore"):
        outs = {"h2": (h.astype(np.float32) * np.float32(2)).astype(np.float16),
                "d2": (d.astype(np.float32) * np.float32(2)).astype(np.float64),
                "xh": x.astype(np.float16), "xh32": x.astype(np.float16).astype(np.float32)}
    nodes = [helper.make_node("Add", ["h", "h"], ["h2"]), helper.make_node("Add", ["d", "d"], ["d2"]),
             helper.make_node("Cast", ["x"], ["xh"], to=TensorProto.FLOAT16),
             helper.make_node("Cast", ["xh"], ["xh32"], to=TensorProto.FLOAT)]
    ins = {"h": h, "d": d, "x": x}
    return model(nodes, ins, outs), ins, outs


@case
def einsum_and_cumsum():
    # Einsum against numpy.einsum: attention-style batched products, an implicit output, a
    # diagonal, a broadcast ellipsis, three operands; CumSum on floats and integers.
    q, k, v = rnd(2, 3, 5, 4), rnd(2, 3, 6, 4), rnd(2, 3, 6, 4)
    sq, e1, e2, w = rnd(4, 4), rnd(2, 1, 3, 5), rnd(4, 5, 6), rnd(3, 4)
    a, bb, c = rnd(3, 4), rnd(4, 5), rnd(5)
    ints = np.arange(-6, 6, dtype=np.int64).reshape(3, 4) * 7
    eqs = {"att": ("bhqd,bhkd->bhqk", ["q", "k"]), "implicit": ("ij,jk", ["a", "bb"]),
           "diag": ("ii->i", ["sq"]), "ell": ("...ij,bjk->...bik", ["e1", "e2"]),
           "three": ("ij,jk,k->i", ["a", "bb", "c"]), "sum_all": ("bhkd->", ["v"]),
           "trace": ("ii", ["sq"]), "wt": ("ij->ji", ["w"])}
    arrays = {"q": q, "k": k, "v": v, "sq": sq, "e1": e1, "e2": e2, "w": w, "a": a, "bb": bb, "c": c}
    outs = {name: np.einsum(eq, *[arrays[n].astype(np.float64) for n in names]) for name, (eq, names) in eqs.items()}
    outs["cs"] = np.cumsum(q.astype(np.float64), axis=2)
    outs["cs_rev_excl"] = np.flip(np.cumsum(np.flip(ints, 1), axis=1), 1) - ints
    nodes = [helper.make_node("Einsum", names, [name], equation=eq) for name, (eq, names) in eqs.items()]
    nodes += [helper.make_node("CumSum", ["q", "two"], ["cs"]),
              helper.make_node("CumSum", ["ints", "one"], ["cs_rev_excl"], exclusive=1, reverse=1)]
    ins = dict(arrays, ints=ints)
    outs = {n: (o.astype(np.float32) if o.dtype == np.float64 else o) for n, o in outs.items()}
    return model(nodes, ins, outs, {"two": np.array(2, np.int64), "one": np.array(1, np.int32)}), ins, outs


@case
def scatter_gather_topk():
    # GatherND (batch_dims 1, negative indices), ScatterElements (negative indices, duplicates
    # with add), ScatterND (a KV-cache row update, duplicates with mul), ReverseSequence and
    # TopK (ties keep their order, smallest, k = n), against NumPy loops.
    data = rnd(2, 5, 3)
    gidx = np.array([[[1], [-1]], [[0], [4]]], np.int64)  # [2, 2, 1], batch_dims 1
    gnd = np.stack([np.stack([data[b, gidx[b, i, 0]] for i in range(2)]) for b in range(2)])
    sdata, sidx, supd = rnd(3, 4), np.array([[1, -1, 1, 0], [2, 2, 0, -3]], np.int64), rnd(2, 4)
    sel = sdata.copy()
    for i in range(2):
        for j in range(4):
            sel[sidx[i, j], j] += supd[i, j]
    cache, rows, pos = rnd(2, 6, 4), rnd(2, 1, 4), np.array([[[0, 3]], [[1, 5]]], np.int64)
    snd = cache.copy()
    for b in range(2):
        snd[tuple(pos[b, 0])] = rows[b, 0]
    dup_idx = np.array([[1], [1], [0]], np.int64)
    dup_upd = rnd(3, 4)
    mul = sdata.copy()
    for u in range(3):
        mul[dup_idx[u, 0]] *= dup_upd[u]
    seq, lens = rnd(5, 3, 2), np.array([5, 0, 3], np.int64)
    rev = seq.copy()
    for b in range(3):
        rev[:lens[b], b] = seq[:lens[b], b][::-1]
    tk = np.array([[3, 1, 3, 2, 1, 5], [0, 0, -1, 7, 7, 2]], np.float32)
    order = np.argsort(-tk, axis=1, kind="stable")[:, :4]
    small = np.argsort(tk, axis=1, kind="stable")
    outs = {"gnd": gnd, "sel": sel, "snd": snd, "mul": mul, "rev": rev,
            "tv": np.take_along_axis(tk, order, 1), "ti": order.astype(np.int64),
            "sv": np.take_along_axis(tk, small, 1), "si": small.astype(np.int64)}
    nodes = [helper.make_node("GatherND", ["data", "gidx"], ["gnd"], batch_dims=1),
             helper.make_node("ScatterElements", ["sdata", "sidx", "supd"], ["sel"], axis=0, reduction="add"),
             helper.make_node("ScatterND", ["cache", "pos", "rows"], ["snd"]),
             helper.make_node("ScatterND", ["sdata", "dup_idx", "dup_upd"], ["mul"], reduction="mul"),
             helper.make_node("ReverseSequence", ["seq", "lens"], ["rev"], time_axis=0, batch_axis=1),
             helper.make_node("TopK", ["tk", "k4"], ["tv", "ti"], axis=1),
             helper.make_node("TopK", ["tk", "k6"], ["sv", "si"], axis=-1, largest=0)]
    ins = {"data": data, "gidx": gidx, "sdata": sdata, "sidx": sidx, "supd": supd, "cache": cache, "rows": rows,
           "pos": pos, "dup_idx": dup_idx, "dup_upd": dup_upd, "seq": seq, "lens": lens, "tk": tk}
    return model(nodes, ins, outs, {"k4": np.array([4], np.int64), "k6": np.array([6], np.int64)}, opset=16), ins, outs


@case
def det_and_dft():
    # Det against numpy.linalg.det (pivoting needed: a zero leading entry; a singular matrix);
    # DFT against numpy.fft: real and complex, onesided, a longer dft_length (zero padding),
    # inverse.
    m = rnd(3, 5, 5).astype(np.float64)
    m[1, 0, 0] = 0.0
    m[2, 4] = m[2, 0] * 2
    sig = rnd(2, 12, 1)
    cpx = rnd(1, 8, 2)
    c = cpx[..., 0] + 1j * cpx[..., 1]

    def parts(z):
        return np.stack([z.real, z.imag], axis=-1).astype(np.float32)
    outs = {"det": np.linalg.det(m).astype(np.float32),
            "rfft": parts(np.fft.rfft(sig[..., 0].astype(np.float64), n=16, axis=1)),
            "ifft": parts(np.fft.ifft(c, axis=1))}
    nodes = [helper.make_node("Det", ["m"], ["det"]),
             helper.make_node("DFT", ["sig", "n16"], ["rfft"], onesided=1),
             helper.make_node("DFT", ["cpx"], ["ifft"], inverse=1)]
    ins = {"m": m.astype(np.float32), "sig": sig, "cpx": cpx}
    return model(nodes, ins, outs, {"n16": np.array(16, np.int64)}, opset=17), ins, outs


@case
def stft_and_mel_weights():
    # STFT against torch.stft (center=False): a run-time window, onesided; a complex signal
    # two-sided without a window against numpy.fft per frame. MelWeightMatrix against ONNX's
    # definition in numpy (mel-spaced edges truncated to bins, triangles between them).
    sig = rnd(2, 40, 1)
    win = rnd(12, low=0.2, high=1.0)
    ref = torch.stft(t(sig[..., 0]).double(), n_fft=12, hop_length=5, win_length=12, window=t(win).double(),
                     center=False, onesided=True, return_complex=True).transpose(1, 2).numpy()
    cpx = rnd(1, 21, 2)
    z = cpx[0, :, 0] + 1j * cpx[0, :, 1]
    frames = np.stack([np.fft.fft(z[f * 4:f * 4 + 8]) for f in range((21 - 8) // 4 + 1)])[None]

    def parts(v):
        return np.stack([v.real, v.imag], axis=-1).astype(np.float32)

    bins, dft, rate, low, high = 5, 32, 16000, 100.0, 6000.0
    low_mel, high_mel = 2595 * np.log10(1 + low / 700), 2595 * np.log10(1 + high / 700)
    hz = 700 * (10 ** ((np.arange(bins + 2) * (high_mel - low_mel) / (bins + 2) + low_mel) / 2595) - 1)
    edges = np.floor((dft + 1) * hz / rate).astype(int)
    mel = np.zeros((dft // 2 + 1, bins))
    for i in range(bins):
        left, center, right = edges[i:i + 3]
        if center == left:
            mel[center, i] = 1
        else:
            for j in range(left, center + 1):
                mel[j, i] = (j - left) / (center - left)
        for j in range(center, right):
            mel[j, i] = (right - j) / (right - center)
    outs = {"spec": parts(ref), "cspec": parts(frames), "mel": mel.astype(np.float32)}
    nodes = [helper.make_node("STFT", ["sig", "step5", "win"], ["spec"]),
             helper.make_node("STFT", ["cpx", "step4", "", "len8"], ["cspec"], onesided=0),
             helper.make_node("MelWeightMatrix", ["bins", "dft", "rate", "low", "high"], ["mel"])]
    ins = {"sig": sig, "win": win, "cpx": cpx}
    inits = {"step5": np.array(5, np.int64), "step4": np.array(4, np.int64), "len8": np.array(8, np.int64),
             "bins": np.array(bins, np.int64), "dft": np.array(dft, np.int64), "rate": np.array(rate, np.int64),
             "low": np.array(low, np.float32), "high": np.array(high, np.float32)}
    return model(nodes, ins, outs, inits, opset=17), ins, outs


@case
def maxpool_indices_like_pytorch():
    # MaxPool's Indices against torch's return_indices (an index in the plane, offset here by
    # (n C + c) H W as ONNX flattens the whole tensor): pads, dilation, ceil_mode, a 1-D pool;
    # storage_order 1 as the column-major index of the same element.
    x = rnd(2, 3, 7, 9)
    x1 = rnd(2, 3, 11)
    y, i = F.max_pool2d(t(x), 3, stride=2, padding=1, dilation=(1, 2), ceil_mode=True, return_indices=True)
    base = (np.arange(2 * 3).reshape(2, 3, 1, 1) * 7 * 9).astype(np.int64)
    rows = i.numpy() + base
    hw = i.numpy()
    cols = base + (hw % 9) * 7 + hw // 9
    y1, i1 = F.max_pool1d(t(x1), 2, stride=3, return_indices=True)
    outs = {"y": y.numpy(), "rows": rows, "y_c": y.numpy(), "cols": cols, "y1": y1.numpy(),
            "i1": i1.numpy() + (np.arange(6).reshape(2, 3, 1) * 11).astype(np.int64)}
    pool = dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], dilations=[1, 2], ceil_mode=1)
    nodes = [helper.make_node("MaxPool", ["x"], ["y", "rows"], **pool),
             helper.make_node("MaxPool", ["x"], ["y_c", "cols"], storage_order=1, **pool),
             helper.make_node("MaxPool", ["x1"], ["y1", "i1"], kernel_shape=[2], strides=[3])]
    ins = {"x": x, "x1": x1}
    return model(nodes, ins, outs, opset=12), ins, outs


@case
def roi_align_like_torchvision():
    # RoiAlign against torchvision.ops.roi_align: half_pixel (aligned=True) and
    # output_half_pixel (opset 10's behaviour, aligned=False), a fixed sampling ratio and the
    # adaptive one (constant boxes), spatial_scale, boxes partly outside the image, two images.
    # Max mode against ONNX Runtime's definition in numpy (the largest weighted tap).
    from torchvision.ops import roi_align
    x = rnd(2, 3, 9, 11)
    rois = np.array([[1.2, 0.5, 14.0, 10.0], [-3.0, -2.0, 6.5, 4.0], [4.0, 8.0, 21.0, 19.5], [2.0, 2.0, 2.5, 9.0]],
                    np.float32)
    batch = np.array([1, 0, 1, 0], np.int64)
    boxes = t(np.concatenate([batch[:, None].astype(np.float32), rois], axis=1)).double()
    outs, nodes = {}, []
    for name, aligned, ratio in (("half", True, 2), ("legacy", False, 3), ("adaptive", True, 0)):
        outs[name] = roi_align(t(x).double(), boxes, (3, 4), spatial_scale=0.5, sampling_ratio=ratio,
                               aligned=aligned).numpy().astype(np.float32)
        mode = "half_pixel" if aligned else "output_half_pixel"
        nodes.append(helper.make_node("RoiAlign", ["x", "rois" if ratio else "crois", "batch"], [name], output_height=3,
                                      output_width=4, sampling_ratio=ratio, spatial_scale=0.5,
                                      coordinate_transformation_mode=mode))

    def roi_max(img, box, oh, ow, ratio, scale):
        x1, y1, x2, y2 = (v * scale - 0.5 for v in box)
        bh, bw = (y2 - y1) / oh, (x2 - x1) / ow
        out = np.full((img.shape[0], oh, ow), -np.inf)
        H, W = img.shape[1:]
        for ph in range(oh):
            for pw in range(ow):
                for iy in range(ratio):
                    for ix in range(ratio):
                        y = y1 + ph * bh + (iy + 0.5) * bh / ratio
                        xx = x1 + pw * bw + (ix + 0.5) * bw / ratio
                        if y < -1 or y > H or xx < -1 or xx > W:
                            v = np.zeros(img.shape[0])
                        else:
                            y, xx = max(y, 0.0), max(xx, 0.0)
                            yl, xl = min(int(y), H - 1), min(int(xx), W - 1)
                            yh, xh = min(yl + 1, H - 1), min(xl + 1, W - 1)
                            y, xx = (yl if yl >= H - 1 else y), (xl if xl >= W - 1 else xx)
                            ly, lx = y - yl, xx - xl
                            v = np.max([(1 - ly) * (1 - lx) * img[:, yl, xl], (1 - ly) * lx * img[:, yl, xh],
                                        ly * (1 - lx) * img[:, yh, xl], ly * lx * img[:, yh, xh]], axis=0)
                        out[:, ph, pw] = np.maximum(out[:, ph, pw], v)
        return out
    outs["max"] = np.stack([roi_max(x[b].astype(np.float64), r, 3, 4, 2, 0.5) for r, b in zip(rois, batch)]).astype(np.float32)
    nodes.append(helper.make_node("RoiAlign", ["x", "rois", "batch"], ["max"], mode="max", output_height=3, output_width=4,
                                  sampling_ratio=2, spatial_scale=0.5))
    ins = {"x": x, "rois": rois, "batch": batch}
    return model(nodes, ins, outs, {"crois": rois}, opset=16), ins, outs


@case
def maxpool_8_bit_integers():
    # MaxPool of int8 and uint8 (opset 12) against PyTorch on the same values as floats (a max
    # is exact): padded windows, the extremes of both ranges, 1-D and 2-D.
    i8 = rng.integers(-128, 128, size=(1, 2, 6, 7)).astype(np.int8)
    u8 = rng.integers(0, 256, size=(2, 1, 5, 5)).astype(np.uint8)
    i8[0, 0, 0, :3] = [-128, 127, -128]
    u8[0, 0, 0, :3] = [0, 255, 128]
    u1 = rng.integers(0, 256, size=(1, 3, 9)).astype(np.uint8)
    outs = {"yi": F.max_pool2d(t(i8).float(), 3, stride=2, padding=1).numpy().astype(np.int8),
            "yu": F.max_pool2d(t(u8).float(), 2, stride=1, padding=1, ceil_mode=True).numpy().astype(np.uint8),
            "y1": F.max_pool1d(t(u1).float(), 3, stride=2).numpy().astype(np.uint8)}
    nodes = [helper.make_node("MaxPool", ["i8"], ["yi"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("MaxPool", ["u8"], ["yu"], kernel_shape=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1),
             helper.make_node("MaxPool", ["u1"], ["y1"], kernel_shape=[3], strides=[2])]
    ins = {"i8": i8, "u8": u8, "u1": u1}
    return model(nodes, ins, outs, opset=12), ins, outs


@case
def grid_sample_like_pytorch():
    # GridSample against torch.nn.functional.grid_sample: every mode, padding mode and
    # align_corners, with grid points inside, on and beyond the border.
    x = rnd(2, 3, 5, 7)
    grid = rnd(2, 4, 6, 2, low=-1.4, high=1.4)
    grid[0, 0, :3] = [[-1, -1], [1, 1], [0.5, -1]]  # corners and an edge exactly
    grid[1, 0, 0] = [np.nan, 0.3]  # a NaN coordinate never reads outside the image
    outs, nodes = {}, []
    for mode in ("bilinear", "nearest", "bicubic"):
        for padding in ("zeros", "border", "reflection"):
            for align in (0, 1):
                name = f"{mode}_{padding}_{align}"
                outs[name] = F.grid_sample(t(x).double(), t(grid).double(), mode=mode, padding_mode=padding,
                                           align_corners=bool(align)).numpy().astype(np.float32)
                nodes.append(helper.make_node("GridSample", ["x", "grid"], [name], mode=mode, padding_mode=padding,
                                              align_corners=align))
    ins = {"x": x, "grid": grid}
    return model(nodes, ins, outs, opset=16), ins, outs


@case
def volumes_like_pytorch():
    # 3-D Conv (grouped, strided, dilated, asymmetric pads, bias), MaxPool (dilated, ceil_mode)
    # and AveragePool (with and without count_include_pad) against PyTorch.
    x = rnd(2, 4, 5, 7, 6)
    w, bias = rnd(6, 2, 3, 2, 3), rnd(6)
    xt = t(x).double()
    conv = F.conv3d(F.pad(xt, (1, 0, 0, 1, 2, 1)), t(w).double(), t(bias).double(), stride=(1, 2, 1),
                    dilation=(1, 1, 2), groups=2)
    outs = {"conv": conv.numpy().astype(np.float32),
            "maxp": F.max_pool3d(xt, 3, stride=2, padding=1, dilation=(1, 2, 1), ceil_mode=True).numpy().astype(np.float32),
            "avgp": F.avg_pool3d(xt, (2, 3, 3), stride=(1, 2, 2), padding=(1, 1, 0), count_include_pad=True).numpy().astype(np.float32),
            "avgx": F.avg_pool3d(xt, 3, stride=2, padding=1, count_include_pad=False, ceil_mode=True).numpy().astype(np.float32)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["conv"], group=2, strides=[1, 2, 1], dilations=[1, 1, 2],
                              pads=[2, 0, 1, 1, 1, 0]),
             helper.make_node("MaxPool", ["x"], ["maxp"], kernel_shape=[3, 3, 3], strides=[2, 2, 2], pads=[1] * 6,
                              dilations=[1, 2, 1], ceil_mode=1),
             helper.make_node("AveragePool", ["x"], ["avgp"], kernel_shape=[2, 3, 3], strides=[1, 2, 2],
                              pads=[1, 1, 0, 1, 1, 0], count_include_pad=1),
             helper.make_node("AveragePool", ["x"], ["avgx"], kernel_shape=[3, 3, 3], strides=[2, 2, 2], pads=[1] * 6,
                              ceil_mode=1)]
    return model(nodes, {"x": x}, outs, {"w": w, "b": bias}), {"x": x}, outs


@case
def lp_norms():
    # LpNormalization (L1 and L2) against torch.nn.functional.normalize, GlobalLpPool (p 2 and 3)
    # against NumPy.
    x = rnd(2, 3, 4, 5)
    xd = x.astype(np.float64)
    outs = {"l2": F.normalize(t(x).double(), p=2, dim=1, eps=0).numpy().astype(np.float32),
            "l1": F.normalize(t(x).double(), p=1, dim=-1, eps=0).numpy().astype(np.float32),
            "g2": np.sqrt((xd ** 2).sum(axis=(2, 3), keepdims=True)).astype(np.float32),
            "g3": ((np.abs(xd) ** 3).sum(axis=(2, 3), keepdims=True) ** (1 / 3)).astype(np.float32)}
    nodes = [helper.make_node("LpNormalization", ["x"], ["l2"], axis=1, p=2),
             helper.make_node("LpNormalization", ["x"], ["l1"], axis=-1, p=1),
             helper.make_node("GlobalLpPool", ["x"], ["g2"]),
             helper.make_node("GlobalLpPool", ["x"], ["g3"], p=3)]
    return model(nodes, {"x": x}, outs), {"x": x}, outs


@case
def integer_pow():
    # Integer Pow wraps as NumPy's (3^41 past int64); a float exponent on integers is the power
    # truncated, exact where the exponent is integral (3^6 = 729, not 728.99...).
    x = np.array([2, -3, 1, 0, 3, -2, 7], np.int64)
    y = np.array([3, 5, 9, 0, 41, 2, 1], np.int64)
    xi = np.array([1, 2, 3, 4, 9], np.int32)
    yf = np.array([4.0, 5.0, 6.0, 0.5, 1.5], np.float32)
    xf = np.array([1.5, -2.0, 0.25, 3.0], np.float32)
    yi = np.array([2, 3, -1, 0], np.int32)
    outs = {"ii": np.power(x, y), "if": np.power(xi.astype(np.float64), yf).astype(np.int32),
            "fi": np.power(xf, yi.astype(np.float32))}
    nodes = [helper.make_node("Pow", ["x", "y"], ["ii"]), helper.make_node("Pow", ["xi", "yf"], ["if"]),
             helper.make_node("Pow", ["xf", "yi"], ["fi"])]
    ins = {"x": x, "y": y, "xi": xi, "yf": yf, "xf": xf, "yi": yi}
    return model(nodes, ins, outs), ins, outs


@case
def gather_runtime_indices():
    # Embedding lookups (token ids from the caller) and a Gather along axis 1 with negative ids.
    table, x = rnd(10, 4), rnd(2, 5, 3)
    ids = np.array([[3, -1], [0, 9]], np.int64)
    cols = np.array([4, -5, 0, -1], np.int64)
    outs = {"emb": table[ids], "cols": np.take(x, cols, axis=1)}
    nodes = [helper.make_node("Gather", ["table", "ids"], ["emb"]),
             helper.make_node("Gather", ["x", "c"], ["cols"], axis=1)]
    ins = {"ids": ids, "x": x, "c": cols}
    return model(nodes, ins, outs, {"table": table}), ins, outs


@case
def folded_shape_computation():
    # Shape -> Gather -> Unsqueeze -> Concat -> Reshape, as PyTorch exports x.view(x.size(0), -1).
    x = rnd(2, 3, 4)
    ref = x.reshape(2, 12)
    inits = {"zero": np.array(0, np.int64), "ax0": np.array([0], np.int64), "m1": np.array([-1], np.int64)}
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
             helper.make_node("Unsqueeze", ["n", "ax0"], ["n1"]), helper.make_node("Concat", ["n1", "m1"], ["shape"], axis=0),
             helper.make_node("Reshape", ["x", "shape"], ["flat"]),
             helper.make_node("Constant", [], ["shape2"], value=helper.make_tensor("c", TensorProto.INT64, [2], [2, 12])),
             helper.make_node("ConstantOfShape", ["shape2"], ["ones"],
                              value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.5])),
             helper.make_node("Add", ["flat", "ones"], ["y"])]
    return model(nodes, {"x": x}, {"y": ref + 1.5}, inits), {"x": x}, {"y": ref + 1.5}


# --- normalization, softmax, reductions ------------------------------------------------

@case
def argmax_argmin():
    # Ties (the first index, or the last with select_last_index), a NaN (it wins, as in NumPy),
    # int64 input, keepdims both ways, an axis that is not the last, a row of 1003 (a logits row).
    x = rng.integers(-3, 4, size=(3, 7, 5)).astype(np.float32)  # many ties
    x[1, 2, 3] = np.nan
    xi = rng.integers(-5, 5, size=(4, 6)).astype(np.int64)
    v = rnd(1, 1003)
    nodes = [helper.make_node("ArgMax", ["x"], ["a"], axis=1),
             helper.make_node("ArgMin", ["x"], ["b"], axis=-1, keepdims=0),
             helper.make_node("ArgMax", ["x"], ["c"], axis=0, select_last_index=1),
             helper.make_node("ArgMin", ["xi"], ["d"], axis=1, keepdims=0, select_last_index=1),
             helper.make_node("ArgMax", ["v"], ["e"], axis=1, keepdims=0)]
    last0 = (x.shape[0] - 1 - np.argmax(np.flip(x, 0), axis=0))[None]
    lastd = xi.shape[1] - 1 - np.argmin(np.flip(xi, 1), axis=1)
    outs = {"a": np.argmax(x, axis=1)[:, None], "b": np.argmin(x, axis=-1), "c": last0, "d": lastd,
            "e": np.argmax(v, axis=1)}
    outs = {k: np.asarray(o, np.int64) for k, o in outs.items()}
    ins = {"x": x, "xi": xi, "v": v}
    return model(nodes, ins, outs), ins, outs


@case
def softmax_layernorm_reductions():
    x = rnd(2, 3, 5, low=-3, high=3)
    scale, bias = rnd(3, 5), rnd(3, 5)
    xt = t(x)
    outs = {"sm": torch.softmax(xt, dim=1).numpy(), "lsm": torch.log_softmax(xt, dim=-1).numpy(),
            "ln": F.layer_norm(xt, (3, 5), t(scale), t(bias), eps=1e-5).numpy(),
            "mean": x.mean(axis=(1, 2)), "sum": x.sum(axis=1, keepdims=True), "max": x.max(axis=-1, keepdims=True)}
    nodes = [helper.make_node("Softmax", ["x"], ["sm"], axis=1), helper.make_node("LogSoftmax", ["x"], ["lsm"]),
             helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["ln"], axis=-2, epsilon=1e-5),
             helper.make_node("ReduceMean", ["x"], ["mean"], axes=[1, 2], keepdims=0),
             helper.make_node("ReduceSum", ["x", "ax1"], ["sum"]),
             helper.make_node("ReduceMax", ["x"], ["max"], axes=[-1])]
    inits = {"scale": scale, "bias": bias, "ax1": np.array([1], np.int64)}
    return model(nodes, {"x": x}, outs, inits, opset=17), {"x": x}, outs


@case
def batchnorm_constant_and_runtime_stats():
    x = rnd(2, 3, 4, 4)
    s, b, m, v = rnd(3), rnd(3), rnd(3), rnd(3, low=0.5, high=1.5)
    ref = F.batch_norm(t(x), t(m), t(v), t(s), t(b), eps=1e-3).numpy()
    nodes = [helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y1"], epsilon=1e-3),
             helper.make_node("BatchNormalization", ["x", "rs", "b", "m", "v"], ["y2"], epsilon=1e-3)]
    ins = {"x": x, "rs": s}
    outs = {"y1": ref, "y2": ref}
    return model(nodes, ins, outs, {"s": s, "b": b, "m": m, "v": v}, opset=15), ins, outs


# --- inputs, external data -------------------------------------------------------------

@case
def symbolic_batch_with_input_shape():
    x, w = rnd(3, 4), rnd(4, 2)
    m = model([helper.make_node("MatMul", ["x", "w"], ["y"])], {"x": x}, {"y": x @ w}, {"w": w},
              input_dims={"x": ["batch", 4]})
    return m, {"x": x}, {"y": x @ w}, ["--input-shape", "x=3x4"]


@case
def external_data():
    x, w = rnd(2, 8), rnd(8, 8)
    m = model([helper.make_node("MatMul", ["x", "w"], ["y"])], {"x": x}, {"y": x @ w}, {"w": w})
    return m, {"x": x}, {"y": x @ w}, "external"


# --- errors ----------------------------------------------------------------------------

def _unary(op, opset=13, domain="", **attrs):
    x = rnd(2, 2)
    n = helper.make_node(op, ["x"], ["y"], domain=domain, **attrs)
    m = model([n], {"x": x}, {"y": x}, opset=opset)
    if domain:
        m.opset_import.append(helper.make_opsetid(domain, 1))
    return m, {"x": x}


ERRORS = {
    "unsupported_op": lambda: (*_unary("LpPool"),
                               "node 'n0' (LpPool, domain ai.onnx, opset 13): unsupported op 'LpPool'"),
    "custom_domain": lambda: (*_unary("FusedGelu", domain="com.microsoft"),
                              "node 'n0' (FusedGelu, domain com.microsoft, opset 13): unsupported op: domain "
                              "'com.microsoft' is not supported"),
    "new_opset": lambda: (*_unary("Relu", opset=22), "the model uses opset 22; Hexir imports opsets 1 to 21"),
    # Opsets below 13 go through ONNX's version converter, which knows the default domain only.
    "old_opset_custom_domain": lambda: (*_unary("FusedGelu", opset=11, domain="com.microsoft"),
                                        "the model uses opset 11 and the domain 'com.microsoft', which ONNX's "
                                        "version converter cannot raise to opset 13"),
    # Opset 18 made the reductions' axes an input: an attribute is an error, not ignored.
    "opset18_axes_attribute": lambda: (*_unary("ReduceMean", opset=18, axes=[1]),
                                       "axes is an input in opset 18, not an attribute"),
    "fix_input_unknown_name": lambda: (*_unary("Relu"), "--fix-input names 'nope', which is not an input of the model "
                                       "(inputs: x)", ["--fix-input", "nope=1"]),
    "fix_input_wrong_count": lambda: (*_unary("Relu"), "--fix-input x gives 3 values for the input's shape 2x2 (4 "
                                      "elements)", ["--fix-input", "x=1,2,3"]),
    "fix_input_suggested": lambda: (model([helper.make_node("Reshape", ["x", "shape"], ["y"])],
                                          {"x": rnd(2, 3), "shape": np.array([3, 2], np.int64)}, {"y": rnd(3, 2)}), {},
                                    "fix its value with --fix-input shape=V1,V2,... or =FILE.npy"),
    "fix_input_suggested_computed": lambda: (model([helper.make_node("Abs", ["s"], ["shape"]),
                                                    helper.make_node("Reshape", ["x", "shape"], ["y"])],
                                                   {"x": rnd(2, 3), "s": np.array([3, 2], np.int64)}, {"y": rnd(3, 2)}),
                                             {}, "'shape' is computed from model input 's': fix its value with "
                                             "--fix-input s=V1,V2,... or =FILE.npy"),
    "symbolic_dim": lambda: (model([helper.make_node("Relu", ["x"], ["y"])], {"x": rnd(2, 3)}, {"y": rnd(2, 3)},
                                   input_dims={"x": ["batch", 3]}), {},
                             "input 'x' has a symbolic dimension 'batch' at axis 0 (batchx3); Hexir compiles static "
                             "shapes: fix it with --input-shape x=DIMS"),
    "unknown_input_shape_name": lambda: (*_unary("Relu"), "--input-shape names 'nope', which is not an input of the "
                                         "model (inputs: x)", ["--input-shape", "nope=1x2"]),
    "pad_wrap_before_19": lambda: (model([helper.make_node("Pad", ["x", "p"], ["y"], mode="wrap")], {"x": rnd(2, 2)},
                                         {"y": rnd(2, 4)}, {"p": np.array([0, 1, 0, 1], np.int64)}), {},
                                   "node 'n0' (Pad, domain ai.onnx, opset 13): mode 'wrap' is not one of constant, "
                                   "reflect, edge"),
    "output_type_declared_otherwise": lambda: (model([helper.make_node("Relu", ["x"], ["y"])], {"x": rnd(2, 2)},
                                                     {"y": np.eye(2, dtype=np.int64)}), {},
                                               "graph output 'y' is declared INT64, which Hexir does not compute (it "
                                               "has float)"),
    "runtime_reshape_shape": lambda: (model([helper.make_node("Reshape", ["x", "s"], ["y"])],
                                            {"x": rnd(2, 2), "s": np.array([4], np.int64)}, {"y": rnd(4)}), {},
                                      "node 'n0' (Reshape, domain ai.onnx, opset 13): shape (input 1) must be known "
                                      "at compile time"),
    "unknown_attribute": lambda: (*_unary("Relu", frobnicate=1),
                                  "node 'n0' (Relu, domain ai.onnx, opset 13): unsupported attribute 'frobnicate'"),
    "missing_input": lambda: (model([helper.make_node("Conv", ["x", ""], ["y"])], {"x": rnd(1, 1, 3, 3)},
                                    {"y": rnd(1, 1, 3, 3)}), {},
                              "node 'n0' (Conv, domain ai.onnx, opset 13): input 1 is missing (the op needs 2 inputs)"),
    # Shape errors name both sides' numbers and the axis that disagrees.
    "reshape_counts": lambda: (model([helper.make_node("Reshape", ["x", "s"], ["y"])], {"x": rnd(4, 4)},
                                     {"y": rnd(15)}, {"s": np.array([15], np.int64)}), {},
                               "cannot reshape 4x4 (16 elements) into 15"),
    "reshape_inferred": lambda: (model([helper.make_node("Reshape", ["x", "s"], ["y"])], {"x": rnd(4, 4)},
                                       {"y": rnd(3, 5)}, {"s": np.array([3, -1], np.int64)}), {},
                                 "cannot reshape 4x4 (16 elements) into 3x-1: the other dimensions hold 3 elements, "
                                 "which do not divide 16"),
    "broadcast_axis": lambda: (model([helper.make_node("Add", ["x", "z"], ["y"])], {"x": rnd(2, 3, 4), "z": rnd(5, 4)},
                                     {"y": rnd(2, 3, 4)}), {},
                               "input shapes do not broadcast: 2x3x4 and 5x4 differ at axis 1 of the result (3 vs 5; "
                               "one of them must be 1)"),
    "concat_axis": lambda: (model([helper.make_node("Concat", ["x", "z"], ["y"], axis=0)],
                                  {"x": rnd(2, 3), "z": rnd(2, 4)}, {"y": rnd(4, 3)}), {},
                            "input 1 has shape 2x4 and input 0 2x3: they differ at axis 1 (4 vs 3), and only axis 0 "
                            "(the concat axis) may"),
    "matmul_inner": lambda: (model([helper.make_node("MatMul", ["x", "z"], ["y"])], {"x": rnd(2, 3), "z": rnd(4, 5)},
                                   {"y": rnd(2, 5)}), {},
                             "shapes 2x3 and 4x5 do not multiply (3 != 4)"),
    "not_onnx": lambda: (b"this is not a protobuf", {}, "is not a valid ONNX model"),
    "external_data_escape": lambda: (None, {}, "must be a relative path inside the model's directory", "escape"),
}


# --- Kernel shapes ------------------------------------------------------------------------
# The vectorized kernels tile by divisors of each extent: sizes 1, 3, 17, 63, 65 (no tile
# divides them) and prime output widths check every remainder path against the references.

def _matmul_case(m, k, n, weights, trans_b=False):
    def build():
        a = rnd(m, k)
        b = rnd(n, k) if trans_b else rnd(k, n)
        ref = a.astype(np.float64) @ (b.T if trans_b else b).astype(np.float64)
        if trans_b:
            node = helper.make_node("Gemm", ["a", "b"], ["y"], transB=1)
        else:
            node = helper.make_node("MatMul", ["a", "b"], ["y"])
        if weights:
            return model([node], {"a": a}, {"y": ref.astype(np.float32)}, {"b": b}), {"a": a}, {"y": ref}
        return model([node], {"a": a, "b": b}, {"y": ref.astype(np.float32)}), {"a": a, "b": b}, {"y": ref}
    return build


for _m, _k, _n in [(1, 1, 1), (3, 17, 5), (17, 63, 65), (65, 3, 63), (8, 64, 96), (63, 65, 17), (28, 40, 64),
                   (29, 40, 64), (131, 24, 96), (100, 64, 4608)]:
    CASES[f"kernel_matmul_{_m}x{_k}x{_n}"] = _matmul_case(_m, _k, _n, weights=False)
    CASES[f"kernel_matmul_weights_{_m}x{_k}x{_n}"] = _matmul_case(_m, _k, _n, weights=True)
    CASES[f"kernel_gemm_transb_{_m}x{_k}x{_n}"] = _matmul_case(_m, _k, _n, weights=True, trans_b=True)


@case
def kernel_gemm_runtime_c_beta():
    # C read by the accumulator's initializer (beta * C), the whole C at run time: on CUDA a
    # staged kernel copies the initializer's result into shared memory.
    a, b, c = rnd(64, 40), rnd(40, 48), rnd(64, 48)
    ref = a.astype(np.float64) @ b.astype(np.float64) * 0.5 + 1.5 * c.astype(np.float64)
    n = helper.make_node("Gemm", ["a", "b", "c"], ["y"], alpha=0.5, beta=1.5)
    return model([n], {"a": a, "c": c}, {"y": ref.astype(np.float32)}, {"b": b}), {"a": a, "c": c}, {"y": ref}


@case
def kernel_attention_scores():
    # Q x K^T per head with run-time operands (K read along the reduction: transposed first).
    q, k = rnd(2, 17, 8), rnd(2, 13, 8)
    ref = np.einsum("hqd,hkd->hqk", q.astype(np.float64), k.astype(np.float64))
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
             helper.make_node("MatMul", ["q", "kt"], ["y"])]
    return model(nodes, {"q": q, "k": k}, {"y": ref.astype(np.float32)}), {"q": q, "k": k}, {"y": ref}


def _conv_case(c, f, hw, k, stride, pad, groups):
    def build():
        x, w, b = rnd(1, c, hw, hw), rnd(f, c // groups, k, k), rnd(f)
        ref = F.conv2d(t(x).double(), t(w).double(), t(b).double(), stride=stride, padding=pad, groups=groups).numpy()
        n = helper.make_node("Conv", ["x", "w", "b"], ["y"], group=groups, strides=[stride, stride],
                             pads=[pad] * 4)
        return model([n], {"x": x}, {"y": ref.astype(np.float32)}, {"w": w, "b": b}), {"x": x}, {"y": ref}
    return build


for _c, _f, _hw, _k, _s, _p, _g in [(3, 17, 13, 3, 1, 1, 1), (17, 65, 15, 3, 2, 1, 1), (63, 16, 27, 1, 1, 0, 1),
                                    (16, 32, 29, 3, 1, 1, 1), (17, 17, 13, 5, 1, 2, 17), (64, 64, 9, 3, 2, 1, 64),
                                    (70, 96, 11, 3, 2, 1, 1), (33, 48, 14, 1, 2, 0, 1), (65, 40, 7, 1, 1, 0, 1),
                                    (40, 136, 13, 1, 1, 0, 1), (9, 136, 9, 3, 1, 1, 1),
                                    # Register tiles of up to 28 accumulators: 14 or 13 columns x
                                    # 2 vectors, 27 columns x 1; a 1x1 convolution of 14-row tiles.
                                    (32, 64, 14, 3, 1, 1, 1), (24, 64, 13, 3, 1, 1, 1), (16, 16, 27, 3, 1, 1, 1),
                                    (48, 64, 14, 1, 1, 0, 1),
                                    # Prime widths: 28 columns in 14-column tiles and the 9 or 13
                                    # columns left, each a part of its own; 1x1: 28 + 9 rows.
                                    (3, 64, 37, 3, 1, 1, 1), (8, 32, 41, 3, 1, 1, 1), (24, 64, 37, 1, 1, 0, 1),
                                    # A depthwise convolution whose interior (37 columns) is prime.
                                    (32, 32, 39, 3, 1, 1, 32),
                                    # 27 columns of two vectors: 14-column tiles and 13 more.
                                    (32, 64, 27, 3, 1, 1, 1)]:
    CASES[f"kernel_conv_c{_c}_f{_f}_{_hw}x{_hw}_k{_k}_s{_s}_g{_g}"] = _conv_case(_c, _f, _hw, _k, _s, _p, _g)


def _residual_block_case(c, hw):
    # Conv + bias + ReLU written into the next conv's padded input, then conv + bias + residual
    # add + ReLU as one epilogue (fused kernels, pads in place), at sizes no tile divides.
    def build():
        # Weights scaled as a trained network's (1 / sqrt(fan-in)), so that f32 rounding over
        # 9c-term sums stays within the tolerance.
        scale = np.float32(1.0 / np.sqrt(9 * c))
        x, w1, b1, w2, b2 = rnd(1, c, hw, hw), rnd(c, c, 3, 3) * scale, rnd(c), rnd(c, c, 3, 3) * scale, rnd(c)
        xd = t(x).double()
        y1 = F.relu(F.conv2d(xd, t(w1).double(), t(b1).double(), padding=1))
        ref = F.relu(F.conv2d(y1, t(w2).double(), t(b2).double(), padding=1) + xd).numpy()
        nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
                 helper.make_node("Relu", ["c1"], ["r1"]),
                 helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
                 helper.make_node("Add", ["c2", "x"], ["s"]),
                 helper.make_node("Relu", ["s"], ["y"])]
        inits = {"w1": w1, "b1": b1, "w2": w2, "b2": b2}
        return model(nodes, {"x": x}, {"y": ref.astype(np.float32)}, inits), {"x": x}, {"y": ref}
    return build


for _c, _hw in [(8, 5), (24, 13), (48, 7), (40, 9),
                # Over 64 input channels: blocks of 40 channels, the epilogue after the chunk.
                (80, 9)]:
    CASES[f"kernel_fused_residual_block_c{_c}_{_hw}x{_hw}"] = _residual_block_case(_c, _hw)


def _bottleneck_case(c, mid, hw):
    # 1x1 convolution + bias + ReLU, then 1x1 convolution + bias + residual add + ReLU: the bias
    # and the epilogue in the register tiles; on images narrower than the best tile (7x7, 13x13)
    # the rows and columns collapsed into one row loop of pixels.
    def build():
        x = rnd(1, c, hw, hw)
        w1, b1 = rnd(mid, c, 1, 1) * np.float32(1.0 / np.sqrt(c)), rnd(mid)
        w2, b2 = rnd(c, mid, 1, 1) * np.float32(1.0 / np.sqrt(mid)), rnd(c)
        xd = t(x).double()
        y1 = F.relu(F.conv2d(xd, t(w1).double(), t(b1).double()))
        ref = F.relu(F.conv2d(y1, t(w2).double(), t(b2).double()) + xd).numpy()
        nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"]),
                 helper.make_node("Relu", ["c1"], ["r1"]),
                 helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"]),
                 helper.make_node("Add", ["c2", "x"], ["s"]),
                 helper.make_node("Relu", ["s"], ["y"])]
        inits = {"w1": w1, "b1": b1, "w2": w2, "b2": b2}
        return model(nodes, {"x": x}, {"y": ref.astype(np.float32)}, inits), {"x": x}, {"y": ref}
    return build


for _c, _mid, _hw in [(64, 32, 7), (48, 96, 13), (64, 128, 14), (96, 64, 5), (32, 320, 7)]:
    CASES[f"kernel_bottleneck_c{_c}_m{_mid}_{_hw}x{_hw}"] = _bottleneck_case(_c, _mid, _hw)


def _row_kernel_case(shape, kind):
    # Softmax, log-softmax, layer normalization and RMS normalization over the innermost axis:
    # one row kernel (reductions and elementwise ops on chunks of rows, partial sums up to four
    # vectors wide), at row lengths no vector divides and at transformer sizes.
    def build():
        x = rnd(*shape, low=-4, high=4)
        g, b = rnd(shape[-1]), rnd(shape[-1])
        xd = t(x).double()
        inits = {}
        if kind == "softmax":
            ref = torch.softmax(xd, dim=-1)
            nodes = [helper.make_node("Softmax", ["x"], ["y"], axis=-1)]
        elif kind == "logsoftmax":
            ref = torch.log_softmax(xd, dim=-1)
            nodes = [helper.make_node("LogSoftmax", ["x"], ["y"], axis=-1)]
        elif kind == "layernorm":
            ref = F.layer_norm(xd, (shape[-1],), t(g).double(), t(b).double(), eps=1e-5)
            nodes = [helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1, epsilon=1e-5)]
            inits = {"g": g, "b": b}
        else:  # RMS normalization as PyTorch exports it: x * rsqrt(mean(x^2) + eps) * g
            ref = xd * torch.rsqrt((xd * xd).mean(dim=-1, keepdim=True) + 1e-6) * t(g).double()
            nodes = [helper.make_node("Mul", ["x", "x"], ["sq"]),
                     helper.make_node("ReduceMean", ["sq"], ["ms"], axes=[-1], keepdims=1),
                     helper.make_node("Add", ["ms", "eps"], ["mse"]),
                     helper.make_node("Sqrt", ["mse"], ["rms"]),
                     helper.make_node("Div", ["x", "rms"], ["n"]),
                     helper.make_node("Mul", ["n", "g"], ["y"])]
            inits = {"g": g, "eps": np.array(1e-6, np.float32)}
        ref = ref.numpy()
        return model(nodes, {"x": x}, {"y": ref.astype(np.float32)}, inits, opset=17), {"x": x}, {"y": ref}
    return build


for _shape, _kind in [((50,), "softmax"), ((1000,), "layernorm"), ((3, 1), "softmax"), ((5, 3), "softmax"), ((2, 17, 63), "softmax"), ((65, 65), "softmax"),
                      ((2, 3, 128, 128), "softmax"), ((3, 1000), "softmax"), ((2, 4099), "softmax"),
                      ((7, 130), "logsoftmax"), ((17, 65), "layernorm"), ((1, 5, 1), "layernorm"),
                      ((3, 128, 768), "layernorm"), ((9, 96), "rmsnorm"), ((4, 17), "rmsnorm")]:
    CASES[f"kernel_rows_{_kind}_{'x'.join(map(str, _shape))}"] = _row_kernel_case(_shape, _kind)


@case
def kernel_rows_attention():
    # Scores, scaled softmax and the weighted sum of one attention head block: the softmax's
    # row kernel between two run-time matmuls.
    q, k, v = rnd(2, 17, 16), rnd(2, 33, 16), rnd(2, 33, 16)
    qd, kd, vd = (t(a).double() for a in (q, k, v))
    ref = (torch.softmax(qd @ kd.transpose(1, 2) * 0.25, dim=-1) @ vd).numpy()
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
             helper.make_node("MatMul", ["q", "kt"], ["s"]),
             helper.make_node("Mul", ["s", "scale"], ["ss"]),
             helper.make_node("Softmax", ["ss"], ["p"], axis=-1),
             helper.make_node("MatMul", ["p", "v"], ["y"])]
    inits = {"scale": np.array(0.25, np.float32)}
    return model(nodes, {"q": q, "k": k, "v": v}, {"y": ref.astype(np.float32)}, inits), \
        {"q": q, "k": k, "v": v}, {"y": ref}


def _expand_silu_depthwise_case(c, e, hw):
    # A 1x1 expansion with bias and SiLU (its epilogue), padded in place for a depthwise 3x3
    # with bias and ReLU6, then a global average pool (a vectorized reduction).
    def build():
        x, w1, b1 = rnd(1, c, hw, hw), rnd(e, c, 1, 1), rnd(e)
        w2, b2 = rnd(e, 1, 3, 3), rnd(e)
        xd = t(x).double()
        y1 = F.silu(F.conv2d(xd, t(w1).double(), t(b1).double()))
        y2 = torch.clamp(F.conv2d(y1, t(w2).double(), t(b2).double(), padding=1, groups=e), 0, 6)
        ref = y2.mean(dim=(2, 3), keepdim=True).numpy()
        nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"]),
                 helper.make_node("Sigmoid", ["c1"], ["g"]),
                 helper.make_node("Mul", ["c1", "g"], ["s1"]),
                 helper.make_node("Conv", ["s1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], group=e),
                 helper.make_node("Clip", ["c2", "lo", "hi"], ["r2"]),
                 helper.make_node("GlobalAveragePool", ["r2"], ["y"])]
        inits = {"w1": w1, "b1": b1, "w2": w2, "b2": b2, "lo": np.array(0.0, np.float32),
                 "hi": np.array(6.0, np.float32)}
        return model(nodes, {"x": x}, {"y": ref.astype(np.float32)}, inits), {"x": x}, {"y": ref}
    return build


for _c, _e, _hw in [(3, 24, 11), (16, 96, 14), (5, 40, 9)]:
    CASES[f"kernel_fused_expand_silu_depthwise_c{_c}_e{_e}_{_hw}x{_hw}"] = _expand_silu_depthwise_case(_c, _e, _hw)


def _linear_gelu_residual_case(m, d, ff):
    # A transformer feed-forward: MatMul + bias + GELU (Erf), MatMul + bias + residual add: the
    # bias, GELU and residual are epilogues of the packed matmuls.
    def build():
        x, w1, b1, w2, b2 = rnd(1, m, d), rnd(d, ff), rnd(ff), rnd(ff, d), rnd(d)
        xd = t(x).double()
        h = F.gelu(xd @ t(w1).double() + t(b1).double())
        ref = (h @ t(w2).double() + t(b2).double() + xd).numpy()
        nodes = [helper.make_node("MatMul", ["x", "w1"], ["m1"]),
                 helper.make_node("Add", ["m1", "b1"], ["a1"]),
                 helper.make_node("Div", ["a1", "sqrt2"], ["d1"]),
                 helper.make_node("Erf", ["d1"], ["e1"]),
                 helper.make_node("Add", ["e1", "one"], ["p1"]),
                 helper.make_node("Mul", ["a1", "p1"], ["q1"]),
                 helper.make_node("Mul", ["q1", "half"], ["g1"]),
                 helper.make_node("MatMul", ["g1", "w2"], ["m2"]),
                 helper.make_node("Add", ["m2", "b2"], ["a2"]),
                 helper.make_node("Add", ["a2", "x"], ["y"])]
        inits = {"w1": w1, "b1": b1, "w2": w2, "b2": b2, "sqrt2": np.array(np.sqrt(2.0), np.float32),
                 "one": np.array(1.0, np.float32), "half": np.array(0.5, np.float32)}
        return model(nodes, {"x": x}, {"y": ref.astype(np.float32)}, inits), {"x": x}, {"y": ref}
    return build


# (197 tokens, a ViT's: no tile from 8 to 64 divides it; the CUDA target shifts its last block.)
for _m, _d, _ff in [(1, 8, 24), (17, 48, 80), (5, 40, 72), (197, 64, 128)]:
    CASES[f"kernel_fused_linear_gelu_residual_{_m}x{_d}x{_ff}"] = _linear_gelu_residual_case(_m, _d, _ff)


def _pool_case(c, hw):
    def build():
        x = rnd(1, c, hw, hw)
        ref = F.max_pool2d(t(x), 3, stride=2, padding=1).numpy()
        n = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
        return model([n], {"x": x}, {"y": ref}), {"x": x}, {"y": ref}
    return build


for _c, _hw in [(3, 13), (17, 27), (64, 9)]:
    CASES[f"kernel_maxpool_c{_c}_{_hw}x{_hw}"] = _pool_case(_c, _hw)


def _window_border_case(kind, c, hw, k, stride, pads, dilation=1, producer=False, include_pad=0):
    # Depthwise convolutions and poolings compute their border from the unpadded input (no
    # padded tensor): asymmetric pads, dilation, windows where every output is a border, a
    # 1x1 image, and a pad of a fused producer's result (a 1x1 convolution + ReLU).
    # pads: ONNX order [top, left, bottom, right].
    def build():
        x = rnd(1, c, hw, hw)
        xd = t(x).double()
        nodes, inits, src = [], {}, "x"
        if producer:
            w0, b0 = rnd(c, c, 1, 1) * np.float32(1 / np.sqrt(c)), rnd(c)
            xd = F.relu(F.conv2d(xd, t(w0).double(), t(b0).double()))
            nodes += [helper.make_node("Conv", ["x", "w0", "b0"], ["c0"]), helper.make_node("Relu", ["c0"], ["r0"])]
            inits.update(w0=w0, b0=b0)
            src = "r0"
        top, left, bottom, right = pads
        if kind == "max":
            padded = F.pad(xd, (left, right, top, bottom), value=float("-inf"))
            ref = F.max_pool2d(padded, k, stride=stride, dilation=dilation)
            nodes.append(helper.make_node("MaxPool", [src], ["y"], kernel_shape=[k, k], strides=[stride, stride],
                                          pads=pads, dilations=[dilation, dilation]))
        elif kind == "avg":
            padded = F.pad(xd, (left, right, top, bottom))
            ref = F.avg_pool2d(padded, k, stride=stride)
            if not include_pad:  # divide by the taps inside the input instead
                ones = F.pad(torch.ones_like(xd[:, :1]), (left, right, top, bottom))
                ref = ref * k * k / (F.avg_pool2d(ones, k, stride=stride) * k * k)
            nodes.append(helper.make_node("AveragePool", [src], ["y"], kernel_shape=[k, k], strides=[stride, stride],
                                          pads=pads, count_include_pad=include_pad))
        else:
            w, b = rnd(c, 1, k, k), rnd(c)
            padded = F.pad(xd, (left, right, top, bottom))
            ref = F.relu(F.conv2d(padded, t(w).double(), t(b).double(), stride=stride, dilation=dilation, groups=c))
            nodes += [helper.make_node("Conv", [src, "w", "b"], ["d"], group=c, kernel_shape=[k, k],
                                       strides=[stride, stride], pads=pads, dilations=[dilation, dilation]),
                      helper.make_node("Relu", ["d"], ["y"])]
            inits.update(w=w, b=b)
        ref = ref.numpy()
        return model(nodes, {"x": x}, {"y": ref.astype(np.float32)}, inits), {"x": x}, {"y": ref}
    return build


for _name, _args in {
        "depthwise_k3_d2_s2_asym": ("depthwise", 24, 17, 3, 2, [2, 0, 1, 3], 2),
        "depthwise_k7_all_border": ("depthwise", 32, 7, 7, 1, [3, 3, 3, 3]),
        "depthwise_1x1_image": ("depthwise", 16, 1, 3, 1, [1, 1, 1, 1]),
        "depthwise_k5_s2_fused": ("depthwise", 40, 15, 5, 2, [2, 2, 2, 2], 1, True),
        "maxpool_k5_p2_fused": ("max", 20, 11, 5, 1, [2, 2, 2, 2], 1, True),
        "maxpool_k3_s2_asym": ("max", 17, 12, 3, 2, [0, 1, 1, 0]),
        "avgpool_k3_include_pad": ("avg", 16, 10, 3, 1, [1, 1, 1, 1], 1, False, 1),
        "avgpool_k3_s2_exclude_pad": ("avg", 16, 9, 3, 2, [1, 1, 1, 1]),
}.items():
    CASES[f"kernel_window_border_{_name}"] = _window_border_case(*_args)


# Loop and If (tests/onnx/control_flow_cases.py), QuantizeLinear and DequantizeLinear
# (tests/onnx/quantize_cases.py).
control_flow_cases.add_cases(CASES, ERRORS, model, rnd)
quantize_cases.add_cases(CASES, ERRORS, model, rnd)
bf16_cases.add_cases(CASES, ERRORS, model, rnd)


def run_tool(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


TARGET_ARGS = []  # --target-cpu for every compilation
# --python DIR: the cases compile and run through the hexir Python package, in this process
# (the same compiler and runtime as the tools, without starting hexir-compile, which costs about
# 0.1 s of CPU a case, for its libraries' symbols; ctest runs the op cases six times). Error
# cases, --list-ops and the models with command-line-only options still use the tools.
HEXIR = None
TARGET = {"target": "host", "target_cpu": "host"}


def run_in_process(path, ins):
    """Compiles and runs in this process; (outputs, None) or (None, error text)."""
    try:
        exe = HEXIR.compile(path, **TARGET)
        session = HEXIR.load(exe).session()
        return session.run(dict(ins)), None
    except HEXIR.Error as e:
        return None, str(e)


def compile_model(bin_dir, path, hxb, extra):
    return run_tool([os.path.join(bin_dir, "hexir-compile"), path, "-o", hxb] + TARGET_ARGS + list(extra))


def seed_for(name):
    """Each case draws its data from its own seed (its name's): the same data whichever cases
    run before it (--only, new cases)."""
    global rng
    rng = np.random.default_rng(zlib.crc32(name.encode()))


def check_case(name, bin_dir, tmp):
    seed_for(name)
    got = CASES[name]()
    m, ins, outs = got[:3]
    extra = got[3] if len(got) > 3 else []
    path = os.path.join(tmp, name + ".onnx")
    if extra == "external":
        onnx.save_model(m, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location=name + ".weights", size_threshold=0)
        assert os.path.exists(os.path.join(tmp, name + ".weights"))
        extra = []
    else:
        onnx.save(m, path)
    results = None
    if HEXIR is not None and not extra:
        results, error = run_in_process(path, ins)
        if results is None:
            print(f"{name}: failed in process\n{error}")
            return False
    else:
        results = run_with_tools(name, bin_dir, tmp, path, extra, ins, outs)
        if results is None:
            return False
    return check_outputs(name, outs, results)


def run_with_tools(name, bin_dir, tmp, path, extra, ins, outs):
    """hexir-compile, then hexir-run with .npy files; the outputs, or None (reported)."""
    hxb = os.path.join(tmp, name + ".hxb")
    r = compile_model(bin_dir, path, hxb, extra)
    if r.returncode != 0:
        print(f"{name}: hexir-compile failed\n{r.stderr}")
        return None
    cmd = [os.path.join(bin_dir, "hexir-run"), hxb]
    for k, v in ins.items():
        np.save(os.path.join(tmp, f"{name}.in.{k}.npy"), v)
        cmd += ["--input", f"{k}={os.path.join(tmp, f'{name}.in.{k}.npy')}"]
    for k in outs:
        cmd += ["--output", f"{k}={os.path.join(tmp, f'{name}.out.{k}.npy')}"]
    r = run_tool(cmd)
    if r.returncode != 0:
        print(f"{name}: hexir-run failed\n{r.stderr}")
        return None
    return {k: np.load(os.path.join(tmp, f"{name}.out.{k}.npy")) for k in outs}


def check_outputs(name, outs, results):
    ok = True
    for k, ref in outs.items():
        got = np.asarray(results[k])
        ref = np.asarray(ref)
        # float64 references check float32 results, unless the model's output is a double.
        want_dtype = ref.dtype if ref.dtype != np.float64 or got.dtype == np.float64 else np.float32
        if got.shape != ref.shape or got.dtype != want_dtype:
            print(f"{name}.{k}: got {got.dtype}{got.shape}, expected {want_dtype}{ref.shape}")
            ok = False
            continue
        if np.issubdtype(ref.dtype, np.integer):  # integers exactly (float64 rounds near 2^63)
            if not np.array_equal(got, ref):
                print(f"{name}.{k}: got {got.tolist()}, expected {ref.tolist()}")
                ok = False
            continue
        g64, r64 = got.astype(np.float64), ref.astype(np.float64)
        # Equal infinities and NaN where NumPy has NaN count as equal (IsNaN, Round, Sign cases).
        same = (g64 == r64) | (np.isnan(g64) & np.isnan(r64))
        with np.errstate(invalid="ignore"):
            err = np.where(same, 0.0, np.abs(g64 - r64))
        if not np.all(same | (err <= ATOL + RTOL * np.abs(r64))):
            print(f"{name}.{k}: worst |diff| {err.max():.3e}")
            ok = False
    return ok


def check_error(name, bin_dir, tmp):
    seed_for(name)
    got = ERRORS[name]()
    m, _, message = got[:3]
    extra = got[3] if len(got) > 3 else []
    path = os.path.join(tmp, name + ".onnx")
    if m is None:  # a model whose external data points outside its directory
        x = rnd(2, 2)
        m = model([helper.make_node("Add", ["x", "w"], ["y"])], {"x": x}, {"y": x}, {"w": x})
        w = m.graph.initializer[0]
        w.ClearField("raw_data")
        w.data_location = TensorProto.EXTERNAL
        w.external_data.add(key="location", value="../../etc/passwd")
        extra = []
    if isinstance(m, bytes):
        open(path, "wb").write(m)
    else:
        onnx.save(m, path)
    hxb = os.path.join(tmp, name + ".hxb")
    r = compile_model(bin_dir, path, hxb, extra)
    if r.returncode == 0 or message not in r.stderr or os.path.exists(hxb):
        print(f"{name}: expected failure with\n  {message}\ngot rc={r.returncode}:\n{r.stderr}")
        return False
    if "Stack dump" in r.stderr or r.returncode < 0:
        print(f"{name}: crashed\n{r.stderr}")
        return False
    return True


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--only", help="run only the cases whose names start with this")
    p.add_argument("--target-cpu", help="compile every case for this CPU (e.g. x86-64-v2)")
    p.add_argument("--python", help="the hexir Python package's folder (build/python): compile and run in process")
    p.add_argument("--target", help="compile every case for this target (cuda-emulator: the CUDA kernels on this CPU)")
    args = p.parse_args()
    if args.target_cpu:
        TARGET_ARGS.append("--target-cpu=" + args.target_cpu)
        TARGET["target_cpu"] = args.target_cpu
    if args.target:
        TARGET_ARGS.append("--target=" + args.target)
        TARGET["target"] = args.target
        if args.target != "host":
            bf16_cases.host_only(CASES, ERRORS)
    if args.python:
        global HEXIR
        sys.path.insert(0, args.python)
        import hexir
        HEXIR = hexir
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        runs = [(name, name, check_case) for name in CASES] + \
               [(name, "error." + name, check_error) for name in ERRORS]
        for name, label, check in runs:
            if args.only and not name.startswith(args.only):
                continue
            ok = check(name, args.bin, tmp)
            print(f"{'ok  ' if ok else 'FAIL'} {label}")
            if not ok:
                failed.append(label)
        # --list-ops names every op the issue asks for.
        r = run_tool([os.path.join(args.bin, "hexir-compile"), "--list-ops"])
        listed = {line.split()[0] for line in r.stdout.splitlines()[1:] if line.strip()}
        required = set("""Conv BatchNormalization Gemm MatMul Add Sub Mul Div Pow Sqrt Erf Tanh Sigmoid HardSigmoid
            HardSwish Relu Clip MaxPool AveragePool GlobalAveragePool Flatten Reshape Transpose Concat Split Slice
            Gather Squeeze Unsqueeze Softmax LayerNormalization ReduceMean Where Cast Expand Pad Constant
            ConstantOfShape Shape Identity Dropout Equal Loop If""".split())
        if r.returncode != 0 or not required <= listed:
            print(f"FAIL --list-ops misses {sorted(required - listed)}")
            failed.append("list-ops")
    print(f"{len(failed)} failed" + (": " + ", ".join(failed) if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
