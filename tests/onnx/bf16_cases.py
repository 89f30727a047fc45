"""bf16 op cases for op_cases.py (hexir-compile --precision bf16), against NumPy and PyTorch.

Under --precision bf16 a MatMul or Gemm whose weight is a constant, and a Conv (group 1) with a
constant filter, multiply their activation and weight rounded to bf16 (nearest, ties to even)
and accumulate in f32; everything else stays f32. The references round the same operands with
PyTorch's conversion and compute in float64, so the cases hold to op_cases' f32 tolerance: an
operand left unrounded (or rounded where it should not be) is off by about 2^-9 of its value,
forty times that tolerance. The activations are graph inputs, rounded from the same floats by
both sides. Cases: a batched MatMul and a Gemm (transB, bias) sharing one activation, columns
that are no multiple of the panel (40 -> 48), an odd reduction (K = 21: rounded, then the f32
kernels), a MatMul of two activations and a Gemm with alpha (both f32: Hexir's f32 kernels
take alpha in the contraction's body, which is then no plain contraction); convolutions of 3 input channels (a pair
padded), strided, dilated, 1x1 (a contraction), 1-D, and grouped and depthwise ones (f32).
On a CPU without AVX512-BF16 the same values are computed by the f32 kernels (a warning says
so), and the cases hold there too (onnx.op_cases.x86-64-v3).
"""
import numpy as np
import torch
import torch.nn.functional as F
from onnx import helper

BF16 = ["--precision", "bf16"]


def bf16(x):
    """float32 values rounded to the nearest bf16 (ties to even), as float64."""
    return torch.from_numpy(np.ascontiguousarray(x, np.float32)).to(torch.bfloat16).to(torch.float64).numpy()


def conv(x, w, b=None, **kw):
    f = F.conv1d if x.ndim == 3 else F.conv2d
    y = f(torch.from_numpy(np.asarray(x, np.float64)), torch.from_numpy(np.asarray(w, np.float64)),
          None if b is None else torch.from_numpy(b.astype(np.float64)), **kw)
    return y.numpy().astype(np.float32)


def add_cases(cases, errors, model, rnd):
    def case(fn):
        cases[fn.__name__] = fn
        return fn

    @case
    def bf16_matmul_gemm():
        a = rnd(2, 3, 64) * 3
        g = rnd(5, 64) * 3
        w1, w2, w3 = rnd(64, 32), rnd(40, 64), rnd(21, 16)
        c2 = rnd(40)
        o = rnd(5, 21) * 3
        y1 = bf16(a) @ bf16(w1)
        y2 = 0.5 * (g.astype(np.float64) @ w2.astype(np.float64).T) + c2
        y3 = bf16(o) @ bf16(w3)
        y4 = a.astype(np.float64) @ a.astype(np.float64).transpose(0, 2, 1)
        y5 = bf16(a) @ bf16(w2).T
        y6 = bf16(g) @ bf16(w2).T + c2
        nodes = [helper.make_node("MatMul", ["a", "w1"], ["y1"]),
                 helper.make_node("Gemm", ["g", "w2", "c2"], ["y2"], transB=1, alpha=0.5),
                 helper.make_node("MatMul", ["o", "w3"], ["y3"]),
                 helper.make_node("Transpose", ["a"], ["at"], perm=[0, 2, 1]),
                 helper.make_node("MatMul", ["a", "at"], ["y4"]),
                 helper.make_node("Transpose", ["w2"], ["w2t"]),
                 helper.make_node("MatMul", ["a", "w2t"], ["y5"]),
                 helper.make_node("Gemm", ["g", "w2", "c2"], ["y6"], transB=1)]
        outs = {k: v.astype(np.float32)
                for k, v in {"y1": y1, "y2": y2, "y3": y3, "y4": y4, "y5": y5, "y6": y6}.items()}
        ins = {"a": a, "g": g, "o": o}
        return model(nodes, ins, outs, {"w1": w1, "w2": w2, "c2": c2, "w3": w3}), ins, outs, BF16

    @case
    def bf16_conv():
        x = rnd(1, 3, 17, 15) * 2
        w1, b1 = rnd(24, 3, 3, 3), rnd(24)
        y1 = conv(bf16(x), bf16(w1), b1, stride=2, padding=1)
        p = rnd(1, 16, 9, 9) * 2
        w2 = rnd(40, 16, 1, 1)
        y2 = conv(bf16(p), bf16(w2))
        w3 = rnd(16, 16, 3, 3)
        y3 = conv(bf16(p), bf16(w3), dilation=2, padding=(2, 1))
        w4 = rnd(16, 8, 3, 3)
        y4 = conv(p, w4, groups=2, padding=1)
        w5 = rnd(16, 1, 3, 3)
        y5 = conv(p, w5, groups=16, padding=1)
        s = rnd(2, 6, 20) * 2
        w6 = rnd(10, 6, 5)
        y6 = conv(bf16(s), bf16(w6), padding=2)
        nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["y1"], strides=[2, 2], pads=[1, 1, 1, 1]),
                 helper.make_node("Conv", ["p", "w2"], ["y2"]),
                 helper.make_node("Conv", ["p", "w3"], ["y3"], dilations=[2, 2], pads=[2, 1, 2, 1]),
                 helper.make_node("Conv", ["p", "w4"], ["y4"], group=2, pads=[1, 1, 1, 1]),
                 helper.make_node("Conv", ["p", "w5"], ["y5"], group=16, pads=[1, 1, 1, 1]),
                 helper.make_node("Conv", ["s", "w6"], ["y6"], pads=[2, 2])]
        outs = {"y1": y1, "y2": y2, "y3": y3, "y4": y4, "y5": y5, "y6": y6}
        ins = {"x": x, "p": p, "s": s}
        inits = {"w1": w1, "b1": b1, "w2": w2, "w3": w3, "w4": w4, "w5": w5, "w6": w6}
        return model(nodes, ins, outs, inits), ins, outs, BF16

    errors["precision_unknown"] = lambda: (
        *bf16_matmul_gemm()[:2], "unknown --precision 'bf17': expected f32 or bf16", ["--precision", "bf17"])


def host_only(cases, errors):
    """Under another --target: --precision bf16 is refused (the host's alone), with the reason."""
    for name in [n for n in cases if n.startswith("bf16_")]:
        model_fn = cases.pop(name)
        errors[name + "_refused"] = lambda fn=model_fn: (
            *fn()[:2], "--precision bf16 is implemented for the host target only", BF16)
