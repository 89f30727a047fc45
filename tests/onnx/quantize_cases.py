"""Quantized op cases for op_cases.py, against NumPy.

QuantizeLinear and DequantizeLinear per tensor and per axis, int8 and uint8 (the default zero
point too), ties rounded half to even as ONNX specifies, saturation at -128/127 and 0/255, int8
and uint8 graph inputs and outputs, DequantizeLinear of int32, a QDQ weight folded at import and
a run-time Q -> DQ chain; DynamicQuantizeLinear (an all-zero input too); MatMulInteger with zero
points per tensor, row and column and at the extremes; QLinearMatMul requantizing; ConvInteger
and QLinearConv (padding with the zero point, groups, depthwise, strides, 1-D, per-channel weight
scales and zero points, an int32 bias, saturation) against PyTorch's float64 convolution; QDQ
Conv, MatMul and Gemm on int8 values (--int8-kernels), with int8 and with uint8 (U8S8) activations,
against the float64 evaluation of the graph.
"""
import numpy as np
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper


def quantize(x, scale, zp, axis=None):
    """ONNX QuantizeLinear in NumPy: saturate(rint(x / scale) + zero_point)."""
    if axis is not None:
        shape = [1] * x.ndim
        shape[axis] = -1
        scale, zp = scale.reshape(shape), zp.reshape(shape)
    info = np.iinfo(zp.dtype)
    q = np.rint(x / scale) + zp.astype(np.float32)
    return np.clip(q, info.min, info.max).astype(zp.dtype)


def dequantize(x, scale, zp, axis=None):
    if axis is not None:
        shape = [1] * x.ndim
        shape[axis] = -1
        scale, zp = scale.reshape(shape), zp.reshape(shape)
    return ((x.astype(np.float32) - zp.astype(np.float32)) * scale).astype(np.float32)


def conv_int(x, xz, w, wz, bias=None, **kw):
    """(x - xz) (*) (w - wz) exactly (float64 holds every such sum), padding x with its zero point."""
    xs = torch.from_numpy(x.astype(np.float64) - np.float64(xz))
    wzs = np.asarray(wz, np.float64).reshape((-1,) + (1,) * (w.ndim - 1))
    ws = torch.from_numpy(w.astype(np.float64) - wzs)
    conv = F.conv1d if x.ndim == 3 else F.conv2d
    b = None if bias is None else torch.from_numpy(bias.astype(np.float64))
    return conv(xs, ws, b, **kw).numpy().astype(np.int32)


def add_cases(cases, errors, model, rnd):
    def case(fn):
        cases[fn.__name__] = fn
        return fn

    rng = np.random.default_rng(7)

    @case
    def quantize_per_tensor_ties_saturation():
        # x / 0.25 hits every kind of tie (0.5, 1.5, -0.5, -2.5), saturates both ways, and is random.
        ties = np.array([0.125, 0.375, -0.125, -0.625, 0.625, 31.875, -32.125], np.float32)
        x = np.concatenate([ties, np.array([1000, -1000, 40, -40], np.float32), rnd(13) * 40]).astype(np.float32)
        s = np.float32(0.25)
        zi, zu = np.int8(-3), np.uint8(128)
        outs = {"qi": quantize(x, s, zi), "qu": quantize(x, s, zu), "qd": quantize(x, s, np.uint8(0))}
        nodes = [helper.make_node("QuantizeLinear", ["x", "s", "zi"], ["qi"]),
                 helper.make_node("QuantizeLinear", ["x", "s", "zu"], ["qu"]),
                 helper.make_node("QuantizeLinear", ["x", "s"], ["qd"])]  # no zero point: uint8 0
        return model(nodes, {"x": x}, outs, {"s": s, "zi": zi, "zu": zu}), {"x": x}, outs

    @case
    def quantize_per_axis():
        x = (rnd(2, 3, 4) * 6).astype(np.float32)
        s1, z1 = np.array([0.05, 0.1, 0.02], np.float32), np.array([0, -5, 7], np.int8)
        s2, z2 = np.array([0.03, 0.04, 0.05, 0.06], np.float32), np.array([128, 100, 0, 255], np.uint8)
        outs = {"a": quantize(x, s1, z1, axis=1), "b": quantize(x, s2, z2, axis=2)}
        nodes = [helper.make_node("QuantizeLinear", ["x", "s1", "z1"], ["a"]),  # axis 1, the default
                 helper.make_node("QuantizeLinear", ["x", "s2", "z2"], ["b"], axis=-1)]
        return model(nodes, {"x": x}, outs, {"s1": s1, "z1": z1, "s2": s2, "z2": z2}), {"x": x}, outs

    @case
    def dequantize_inputs_and_int32():
        # int8 and uint8 graph inputs (the extremes included), per tensor and per axis; int32.
        qi = rng.integers(-128, 128, size=(5, 3)).astype(np.int8)
        qi[0] = [-128, 127, 0]
        qu = rng.integers(0, 256, size=(4, 6)).astype(np.uint8)
        qu[0, :2] = [0, 255]
        b = rng.integers(-100000, 100000, size=(6,)).astype(np.int32)
        si, zi = np.array([0.1, 0.2, 0.05], np.float32), np.array([1, -2, 0], np.int8)
        su, zu = np.float32(0.02), np.uint8(120)
        sb = np.float32(0.001)
        outs = {"di": dequantize(qi, si, zi, axis=1), "du": dequantize(qu, su, zu),
                "db": dequantize(b, sb, np.int32(0))}
        nodes = [helper.make_node("DequantizeLinear", ["qi", "si", "zi"], ["di"]),
                 helper.make_node("DequantizeLinear", ["qu", "su", "zu"], ["du"]),
                 helper.make_node("DequantizeLinear", ["b", "sb"], ["db"])]
        ins = {"qi": qi, "qu": qu, "b": b}
        return model(nodes, ins, outs, {"si": si, "zi": zi, "su": su, "zu": zu, "sb": sb}), ins, outs

    @case
    def qdq_weight_and_runtime_chain():
        # A QDQ model's pattern: int8 weights per output channel behind DequantizeLinear (folded at
        # import), activations quantized to uint8 and back at run time, then the float MatMul.
        x = rnd(4, 8)
        w = rng.integers(-127, 128, size=(8, 5)).astype(np.int8)
        sw = (rng.uniform(0.01, 0.03, size=5)).astype(np.float32)
        sx, zx = np.float32(2 / 255), np.uint8(128)
        xq = dequantize(quantize(x, sx, zx), sx, zx)
        wf = dequantize(w, sw, np.zeros(5, np.int8), axis=1)
        outs = {"y": np.maximum(xq @ wf, 0).astype(np.float32)}
        nodes = [helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq8"]),
                 helper.make_node("DequantizeLinear", ["xq8", "sx", "zx"], ["xf"]),
                 helper.make_node("DequantizeLinear", ["w", "sw", "zw"], ["wf"], axis=1),
                 helper.make_node("MatMul", ["xf", "wf"], ["m"]),
                 helper.make_node("Relu", ["m"], ["y"])]
        inits = {"sx": sx, "zx": zx, "w": w, "sw": sw, "zw": np.zeros(5, np.int8)}
        return model(nodes, {"x": x}, outs, inits), {"x": x}, outs

    def dynamic_quantize(x):
        lo, hi = min(np.float32(0), x.min()), max(np.float32(0), x.max())
        scale = np.float32((hi - lo) / np.float32(255))
        if scale == 0:
            return np.zeros(x.shape, np.uint8), scale, np.uint8(0)
        zp = np.uint8(np.rint(np.clip(-lo / scale, 0, 255)))
        return quantize(x, scale, zp), scale, zp

    @case
    def dynamic_quantize_linear():
        x = (rnd(3, 17) * 5 + 1).astype(np.float32)
        zeros = np.zeros((4,), np.float32)
        positive = rng.uniform(0.5, 2, size=(6,)).astype(np.float32)  # min(x, 0) is 0: zero point 0
        outs = {}
        nodes = []
        for name, v in (("x", x), ("z", zeros), ("p", positive)):
            y, s, zp = dynamic_quantize(v)
            outs.update({f"{name}_y": y, f"{name}_s": np.asarray(s, np.float32), f"{name}_zp": np.asarray(zp)})
            nodes.append(helper.make_node("DynamicQuantizeLinear", [name], [f"{name}_y", f"{name}_s", f"{name}_zp"]))
        ins = {"x": x, "z": zeros, "p": positive}
        return model(nodes, ins, outs), ins, outs

    def zero_point_matrices(k):
        """uint8 a [5, K] by int8 b [K, 9] with per-row and per-column zero points, int8 -128
        matrices c [3, K] by d [K, 2], and NumPy's int32 products (c's zero point 3)."""
        a = rng.integers(0, 256, size=(5, k)).astype(np.uint8)
        b = rng.integers(-128, 128, size=(k, 9)).astype(np.int8)
        az = rng.integers(0, 256, size=(5,)).astype(np.uint8)
        bz = rng.integers(-128, 128, size=(9,)).astype(np.int8)
        c = np.full((3, k), -128, np.int8)
        d = np.full((k, 2), -128, np.int8)
        ref1 = (a.astype(np.int32) - az[:, None]) @ (b.astype(np.int32) - bz[None, :])
        ref2 = (c.astype(np.int32) - np.int32(3)) @ d.astype(np.int32)
        return a, b, az, bz, c, d, ref1, ref2

    @case
    def matmul_integer_zero_points():
        # uint8 x int8 with a per-row a zero point and a per-column b zero point; int8 x int8 per
        # tensor; the extremes (-128 * -128 summed over K = 67); b a constant weight.
        a, b, az, bz, c, d, ref1, ref2 = zero_point_matrices(67)
        outs = {"y1": ref1.astype(np.int32), "y2": ref2.astype(np.int32)}
        nodes = [helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y1"]),
                 helper.make_node("MatMulInteger", ["c", "d", "cz"], ["y2"])]
        ins = {"a": a, "c": c}
        return model(nodes, ins, outs, {"b": b, "az": az, "bz": bz, "d": d, "cz": np.int8(3)}), ins, outs

    @case
    def matmul_integer_int8_kernels():
        # --int8-kernels: MatMulInteger and QLinearMatMul as unsigned-by-signed byte products with
        # run-time row and column sums (dot groups: VNNI's fours, else vpmaddwd's pairs): uint8 x int8 with zero points
        # per row and per column; int8 x int8 at the extremes (-128 * -128 over K = 68); uint8 x
        # uint8 batched with run-time matrices and a run-time zero point (DynamicQuantizeLinear's
        # form); int8 x a constant weight, 32 columns and K = 64 (packed in dot groups);
        # QLinearMatMul requantizing. Against NumPy's int32 products.
        a, b, az, bz, _, _, ref1, _ = zero_point_matrices(67)
        c, d = np.full((3, 68), -128, np.int8), np.full((68, 2), -128, np.int8)
        ref2 = (c.astype(np.int32) - np.int32(3)) @ d.astype(np.int32)
        e = rng.integers(0, 256, size=(3, 6, 16)).astype(np.uint8)
        f = rng.integers(0, 256, size=(3, 16, 32)).astype(np.uint8)
        ez = np.array(201, np.uint8)
        g = rng.integers(-128, 128, size=(2, 4, 64)).astype(np.int8)
        h = rng.integers(-127, 128, size=(64, 32)).astype(np.int8)
        i32 = lambda t: t.astype(np.int32)
        ref3 = (i32(e) - int(ez)) @ (i32(f) - 7)
        ref4 = (i32(g) + 5) @ i32(h)
        sa, za, sb, zb, sy, zy = (np.float32(0.02), np.uint8(120), np.float32(0.005), np.int8(-2), np.float32(0.05),
                                  np.uint8(100))
        acc = (i32(a) - int(za)) @ (i32(b) - int(zb))
        yq = np.clip(np.rint(acc.astype(np.float32) * (np.float32(sa * sb) / sy)) + np.float32(zy), 0, 255)
        outs = {"y1": ref1.astype(np.int32), "y2": ref2.astype(np.int32), "y3": ref3.astype(np.int32),
                "y4": ref4.astype(np.int32), "y5": yq.astype(np.uint8)}
        nodes = [helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y1"]),
                 helper.make_node("MatMulInteger", ["c", "d", "cz"], ["y2"]),
                 helper.make_node("MatMulInteger", ["e", "f", "ez", "fz"], ["y3"]),
                 helper.make_node("MatMulInteger", ["g", "h", "gz"], ["y4"]),
                 helper.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y5"])]
        ins = {"a": a, "c": c, "e": e, "f": f, "ez": ez, "g": g}
        inits = {"b": b, "az": az, "bz": bz, "d": d, "cz": np.int8(3), "fz": np.uint8(7), "h": h, "gz": np.int8(-5),
                 "sa": sa, "za": za, "sb": sb, "zb": zb, "sy": sy, "zy": zy}
        return model(nodes, ins, outs, inits), ins, outs, ["--int8-kernels"]

    @case
    def qlinear_matmul():
        # uint8 activations x int8 weights -> uint8, the multiplier a_scale * b_scale / y_scale in
        # float32 as Hexir computes it (NumPy's reference differs only at exact ties).
        a = rng.integers(0, 256, size=(4, 33)).astype(np.uint8)
        b = rng.integers(-128, 128, size=(33, 6)).astype(np.int8)
        sa, za = np.float32(0.02), np.uint8(120)
        sb, zb = np.float32(0.005), np.int8(-2)
        sy, zy = np.float32(0.05), np.uint8(100)
        acc = (a.astype(np.int32) - np.int32(za)) @ (b.astype(np.int32) - np.int32(zb))
        m = np.float32(sa * sb) / sy
        y = np.clip(np.rint(acc.astype(np.float32) * m) + np.float32(zy), 0, 255).astype(np.uint8)
        outs = {"y": y}
        nodes = [helper.make_node("QLinearMatMul", ["a", "sa", "za", "b", "sb", "zb", "sy", "zy"], ["y"])]
        inits = {"sa": sa, "za": za, "b": b, "sb": sb, "zb": zb, "sy": sy, "zy": zy}
        return model(nodes, {"a": a}, outs, inits), {"a": a}, outs

    @case
    def conv_integer():
        # uint8 input, int8 weight with per-output-channel zero points, padded (the padding is the
        # input's zero point, so it adds nothing); int8 x int8 grouped, strided and dilated with no
        # zero points; a 1-D depthwise one; the extremes -128 * -128 over 3x3x16.
        x = rng.integers(0, 256, size=(2, 5, 7, 6)).astype(np.uint8)
        w = rng.integers(-128, 128, size=(6, 5, 3, 3)).astype(np.int8)
        xz, wz = np.uint8(131), rng.integers(-20, 20, size=(6,)).astype(np.int8)
        y1 = conv_int(x, xz, w, wz, padding=1)
        g = rng.integers(-128, 128, size=(2, 4, 9, 8)).astype(np.int8)
        gw = rng.integers(-128, 128, size=(6, 2, 3, 2)).astype(np.int8)
        y2 = conv_int(g, 0, gw, 0, stride=(2, 1), dilation=(1, 2), groups=2)
        d = rng.integers(-128, 128, size=(1, 3, 11)).astype(np.int8)
        dw = rng.integers(-128, 128, size=(3, 1, 4)).astype(np.int8)
        y3 = conv_int(np.pad(d, ((0, 0), (0, 0), (2, 1))), 0, dw, 0, groups=3)
        e = np.full((1, 16, 3, 3), -128, np.int8)
        ew = np.full((2, 16, 3, 3), -128, np.int8)
        y4 = conv_int(e, 0, ew, 0)
        outs = {"y1": y1, "y2": y2, "y3": y3, "y4": y4}
        nodes = [helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y1"], pads=[1, 1, 1, 1]),
                 helper.make_node("ConvInteger", ["g", "gw"], ["y2"], strides=[2, 1], dilations=[1, 2], group=2),
                 helper.make_node("ConvInteger", ["d", "dw"], ["y3"], pads=[2, 1], group=3),
                 helper.make_node("ConvInteger", ["e", "ew"], ["y4"])]
        ins = {"x": x, "g": g, "d": d, "e": e}
        return model(nodes, ins, outs, {"w": w, "xz": xz, "wz": wz, "gw": gw, "dw": dw, "ew": ew}), ins, outs

    @case
    def qlinear_conv():
        # uint8 -> uint8 with per-channel weight scales and zero points and an int32 bias, padded;
        # int8 -> int8 per tensor, saturating both ways. The multiplier x_scale * w_scale / y_scale
        # in float32 as Hexir computes it (NumPy's reference differs only at exact ties).
        x = rng.integers(0, 256, size=(1, 6, 5, 5)).astype(np.uint8)
        w = rng.integers(-128, 128, size=(4, 6, 3, 3)).astype(np.int8)
        sx, zx = np.float32(0.03), np.uint8(110)
        sw = np.array([0.002, 0.004, 0.001, 0.003], np.float32)
        zw = np.array([0, 3, -4, 1], np.int8)
        sy, zy = np.float32(0.2), np.uint8(90)
        bias = rng.integers(-5000, 5000, size=(4,)).astype(np.int32)
        acc = conv_int(x, zx, w, zw, bias, padding=1)
        m = (sx * sw / sy).astype(np.float32).reshape(1, 4, 1, 1)
        y1 = np.clip(np.rint(acc.astype(np.float32) * m) + np.float32(zy), 0, 255).astype(np.uint8)
        a = rng.integers(-128, 128, size=(2, 3, 4, 4)).astype(np.int8)
        aw = rng.integers(-128, 128, size=(5, 3, 2, 2)).astype(np.int8)
        sa, za, saw, sb, zb = np.float32(0.5), np.int8(-7), np.float32(0.25), np.float32(1.5), np.int8(5)
        acc2 = conv_int(a, za, aw, 0, stride=2)
        y2 = np.clip(np.rint(acc2.astype(np.float32) * (np.float32(sa * saw) / sb)) + np.float32(zb),
                     -128, 127).astype(np.int8)
        outs = {"y1": y1, "y2": y2}
        nodes = [helper.make_node("QLinearConv", ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy", "bias"], ["y1"],
                                  pads=[1, 1, 1, 1]),
                 helper.make_node("QLinearConv", ["a", "sa", "za", "aw", "saw", "zaw", "sb", "zb"], ["y2"],
                                  strides=[2, 2])]
        inits = {"sx": sx, "zx": zx, "w": w, "sw": sw, "zw": zw, "sy": sy, "zy": zy, "bias": bias,
                 "sa": sa, "za": za, "aw": aw, "saw": saw, "zaw": np.int8(0), "sb": sb, "zb": zb}
        ins = {"x": x, "a": a}
        return model(nodes, ins, outs, inits), ins, outs

    def qdq(name, scale, zp, out=None):
        """A QuantizeLinear -> DequantizeLinear pair on `name` (ONNX Runtime's activation form),
        writing `out`_q and `out`_d (default: `name`'s)."""
        out = out or name
        return [helper.make_node("QuantizeLinear", [name, scale, zp], [out + "_q"]),
                helper.make_node("DequantizeLinear", [out + "_q", scale, zp], [out + "_d"])]

    def fake_quant(x, scale, zp):
        return dequantize(quantize(x, scale, zp), scale, zp).astype(np.float64)

    def conv64(x, w, b=None, **kw):
        conv = F.conv1d if x.ndim == 3 else F.conv2d
        return conv(torch.from_numpy(x.astype(np.float64)), torch.from_numpy(w.astype(np.float64)),
                    None if b is None else torch.from_numpy(b.astype(np.float64)), **kw).numpy()

    @case
    def qdq_int8_conv_chain():
        # --int8-kernels on ONNX Runtime's S8S8 QDQ form: a per-channel int8 weight with a float
        # bias, strided and padded (padding the int8 activation with its zero point), ReLU,
        # requantized; a depthwise per-channel convolution without bias; a 1-D convolution; and
        # forms that stay in float (a weight with a zero point, here read by a uint8 activation). Against the
        # float64 evaluation of the ONNX graph; the integer accumulation is exact.
        x = (rnd(2, 5, 9, 7) * 3).astype(np.float32)
        sx, zx = np.float32(0.05), np.int8(3)
        w1 = rng.integers(-127, 128, size=(6, 5, 3, 3)).astype(np.int8)
        s1, z1 = (rng.random(6) * 0.01 + 0.002).astype(np.float32), np.zeros(6, np.int8)
        b1 = rnd(6).astype(np.float32)
        sr, zr = np.float32(0.04), np.int8(-128)
        w2 = rng.integers(-127, 128, size=(6, 1, 3, 3)).astype(np.int8)
        s2, z2 = (rng.random(6) * 0.02 + 0.005).astype(np.float32), np.zeros(6, np.int8)
        sy, zy = np.float32(0.1), np.int8(-2)
        xd = fake_quant(x, sx, zx)
        c1 = conv64(xd, w1 * s1.reshape(-1, 1, 1, 1).astype(np.float64), b1, stride=(2, 1), padding=1)
        rd = fake_quant(np.maximum(c1, 0), sr, zr)
        c2 = conv64(rd, w2 * s2.reshape(-1, 1, 1, 1).astype(np.float64), padding=1, groups=6)
        y = dequantize(quantize(c2, sy, zy), sy, zy)
        # 1-D: [2, 5, 9*7] with a per-tensor weight, no padding.
        x1 = x.reshape(2, 5, 63)
        w3, s3 = rng.integers(-127, 128, size=(4, 5, 5)).astype(np.int8), np.float32(0.003)
        y1 = conv64(fake_quant(x1, sx, zx), w3 * np.float64(s3))
        # Float forms: a uint8 activation; an int8 weight with zero points.
        su, zu = np.float32(0.03), np.uint8(128)
        w4, s4, z4 = w1, s1, rng.integers(-3, 4, size=(6,)).astype(np.int8)
        y2 = conv64(fake_quant(x, su, zu), (w4.astype(np.float64) - z4.reshape(-1, 1, 1, 1)) * s1.reshape(-1, 1, 1, 1),
                    padding=1)
        outs = {"y": y.astype(np.float32), "y1": y1.astype(np.float32), "y2": y2.astype(np.float32)}
        nodes = qdq("x", "sx", "zx") + [
            helper.make_node("DequantizeLinear", ["w1", "s1", "z1"], ["w1_d"], axis=0),
            helper.make_node("Conv", ["x_d", "w1_d", "b1"], ["c1"], strides=[2, 1], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c1"], ["r"])] + qdq("r", "sr", "zr") + [
            helper.make_node("DequantizeLinear", ["w2", "s2", "z2"], ["w2_d"], axis=0),
            helper.make_node("Conv", ["r_d", "w2_d"], ["c2"], pads=[1, 1, 1, 1], group=6),
            helper.make_node("QuantizeLinear", ["c2", "sy", "zy"], ["c2_q"]),
            helper.make_node("DequantizeLinear", ["c2_q", "sy", "zy"], ["y"]),
            helper.make_node("Reshape", ["x", "shape1"], ["x1"])] + qdq("x1", "sx", "zx") + [
            helper.make_node("DequantizeLinear", ["w3", "s3", "z3"], ["w3_d"]),
            helper.make_node("Conv", ["x1_d", "w3_d"], ["y1"])] + qdq("x", "su", "zu", out="xu") + [
            helper.make_node("DequantizeLinear", ["w1", "s1", "z4"], ["w4_d"], axis=0),
            helper.make_node("Conv", ["xu_d", "w4_d"], ["y2"], pads=[1, 1, 1, 1])]
        inits = {"sx": sx, "zx": zx, "w1": w1, "s1": s1, "z1": z1, "b1": b1, "sr": sr, "zr": zr, "w2": w2, "s2": s2,
                 "z2": z2, "sy": sy, "zy": zy, "shape1": np.array([2, 5, 63], np.int64), "w3": w3, "s3": s3,
                 "z3": np.int8(0), "su": su, "zu": zu, "z4": z4}
        return model(nodes, {"x": x}, outs, inits), {"x": x}, outs, ["--int8-kernels"]

    @case
    def qdq_int8_conv_dot_groups():
        # --int8-kernels where the channels make dot-product groups (C a multiple of 4, F
        # of 8): a 3x3 convolution with stride 2, padding and a bias, ReLU folded into the next
        # quantization; a 1x1 convolution (a contraction) to 24 channels (one-vector panels
        # padded to 32 with zero channels); a dilated 3x3 one without padding; and an odd-sized
        # image (9 columns: register tiles and their remainder).
        x = (rnd(1, 8, 10, 9) * 3).astype(np.float32)
        sx, zx = np.float32(0.05), np.int8(-7)
        w1 = rng.integers(-127, 128, size=(16, 8, 3, 3)).astype(np.int8)
        s1 = (rng.random(16) * 0.01 + 0.002).astype(np.float32)
        b1 = rnd(16).astype(np.float32)
        sr, zr = np.float32(0.03), np.int8(-128)
        w2 = rng.integers(-127, 128, size=(24, 16, 1, 1)).astype(np.int8)
        s2 = (rng.random(24) * 0.01 + 0.002).astype(np.float32)
        sq, zq = np.float32(0.05), np.int8(4)
        w3 = rng.integers(-127, 128, size=(8, 24, 3, 3)).astype(np.int8)
        s3 = np.float32(0.002)
        xd = fake_quant(x, sx, zx)
        c1 = conv64(xd, w1 * s1.reshape(-1, 1, 1, 1).astype(np.float64), b1, stride=2, padding=1)
        rd = fake_quant(np.maximum(c1, 0), sr, zr)
        c2 = conv64(rd, w2 * s2.reshape(-1, 1, 1, 1).astype(np.float64))
        qd = fake_quant(c2, sq, zq)
        y = conv64(qd, w3 * np.float64(s3), dilation=2, padding=(2, 1))
        outs = {"y": y.astype(np.float32)}
        nodes = qdq("x", "sx", "zx") + [
            helper.make_node("DequantizeLinear", ["w1", "s1", "z1"], ["w1_d"], axis=0),
            helper.make_node("Conv", ["x_d", "w1_d", "b1"], ["c1"], strides=[2, 2], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c1"], ["r"])] + qdq("r", "sr", "zr") + [
            helper.make_node("DequantizeLinear", ["w2", "s2", "z2"], ["w2_d"], axis=0),
            helper.make_node("Conv", ["r_d", "w2_d"], ["c2"])] + qdq("c2", "sq", "zq") + [
            helper.make_node("DequantizeLinear", ["w3", "s3", "z3"], ["w3_d"]),
            helper.make_node("Conv", ["c2_d", "w3_d"], ["y"], dilations=[2, 2], pads=[2, 1, 2, 1])]
        inits = {"sx": sx, "zx": zx, "w1": w1, "s1": s1, "z1": np.zeros(16, np.int8), "b1": b1, "sr": sr, "zr": zr,
                 "w2": w2, "s2": s2, "z2": np.zeros(24, np.int8), "sq": sq, "zq": zq, "w3": w3, "s3": s3,
                 "z3": np.int8(0)}
        return model(nodes, {"x": x}, outs, inits), {"x": x}, outs, ["--int8-kernels"]

    @case
    def qdq_int8_matmul_gemm():
        # --int8-kernels: MatMul of a batched activation by a weight quantized per column;
        # Gemm with transB, a per-row (output channel) weight, alpha and a bias C; Gemm with a
        # per-tensor weight and beta * C; and a MatMul of two activations (qdq_int8_attention).
        # K = 64 and N = 32 take the dot products (weights packed in groups of four with VNNI,
        # in pairs without), so does N = 40 (with AVX-512 panels padded to 48 with zero
        # columns, with AVX2 five panels of 8); K = 20, N = 12 is an awkward size either way.
        a = (rnd(2, 3, 64) * 2).astype(np.float32)
        g = (rnd(4, 20) * 2).astype(np.float32)
        sa, za = np.float32(0.03), np.int8(-5)
        w1 = rng.integers(-127, 128, size=(64, 32)).astype(np.int8)
        s1 = (rng.random(32) * 0.01 + 0.001).astype(np.float32)
        w2 = rng.integers(-127, 128, size=(12, 20)).astype(np.int8)
        s2 = (rng.random(12) * 0.01 + 0.001).astype(np.float32)
        c2 = rnd(12).astype(np.float32)
        w3, s3 = rng.integers(-127, 128, size=(20, 12)).astype(np.int8), np.float32(0.004)
        c3 = rnd(4, 12).astype(np.float32)
        ad, gd = fake_quant(a, sa, za), fake_quant(g, sa, za)
        y1 = ad @ (w1 * s1.astype(np.float64))
        y2 = 0.5 * (gd @ (w2 * s2.reshape(-1, 1).astype(np.float64)).T) + c2
        y3 = gd @ (w3 * np.float64(s3)) + 2.0 * c3
        y4 = ad @ ad.transpose(0, 2, 1)
        w5 = rng.integers(-127, 128, size=(64, 40)).astype(np.int8)
        s5 = (rng.random(40) * 0.01 + 0.001).astype(np.float32)
        y5 = ad @ (w5 * s5.astype(np.float64))
        outs = {k: v.astype(np.float32) for k, v in {"y1": y1, "y2": y2, "y3": y3, "y4": y4, "y5": y5}.items()}
        nodes = qdq("a", "sa", "za") + qdq("g", "sa", "za") + [
            helper.make_node("DequantizeLinear", ["w1", "s1", "z1"], ["w1_d"], axis=1),
            helper.make_node("MatMul", ["a_d", "w1_d"], ["y1"]),
            helper.make_node("DequantizeLinear", ["w2", "s2", "z2"], ["w2_d"], axis=0),
            helper.make_node("Gemm", ["g_d", "w2_d", "c2"], ["y2"], transB=1, alpha=0.5),
            helper.make_node("DequantizeLinear", ["w3", "s3", "z3"], ["w3_d"]),
            helper.make_node("Gemm", ["g_d", "w3_d", "c3"], ["y3"], beta=2.0),
            helper.make_node("Transpose", ["a_d"], ["at"], perm=[0, 2, 1]),
            helper.make_node("MatMul", ["a_d", "at"], ["y4"]),
            helper.make_node("DequantizeLinear", ["w5", "s5", "z5"], ["w5_d"], axis=1),
            helper.make_node("MatMul", ["a_d", "w5_d"], ["y5"])]
        inits = {"sa": sa, "za": za, "w1": w1, "s1": s1, "z1": np.zeros(32, np.int8), "w2": w2, "s2": s2,
                 "z2": np.zeros(12, np.int8), "c2": c2, "w3": w3, "s3": s3, "z3": np.int8(0), "c3": c3,
                 "w5": w5, "s5": s5, "z5": np.zeros(40, np.int8)}
        ins = {"a": a, "g": g}
        return model(nodes, ins, outs, inits), ins, outs, ["--int8-kernels"]

    @case
    def qdq_int8_attention():
        # --int8-kernels: MatMul of two run-time activations, each per tensor with its own zero
        # point (a QDQ attention): A read as unsigned bytes, B as signed ones, their row and
        # column sums at run time. Q x K^T with K^T a Transpose quantized after it (as
        # quantize_static writes it; dot groups: K = 16, N = 32, B packed in
        # groups of four, or pairs without VNNI, by a kernel), the scores requantized; probabilities in [0, 1] (zero
        # point -128: no column sums) x V; a uint8 A by a uint8 B (B's sign bits flipped); a 2-D
        # run-time B broadcast over A's batch; awkward sizes (K = 10, N = 12: the widened
        # products); zero points of 0 and at the extremes. Against the float64 evaluation of the
        # graph. (No softmax between: its f32 exp would round some probabilities to the other
        # step than float64's; scales of no round ratio, whose products would make exact ties of
        # the scores' requantization, which the f32 graph and the exact integers round apart.)
        q = (rnd(2, 3, 8, 16) * 2).astype(np.float32)
        k = (rnd(2, 3, 32, 16) * 2).astype(np.float32)
        p = np.abs(rnd(2, 3, 8, 32)).astype(np.float32) / 3
        v = (rnd(2, 3, 32, 16) * 2 + 1).astype(np.float32)
        sq, zq = np.float32(0.0311), np.int8(-9)
        sk, zk = np.float32(0.0257), np.int8(6)
        ss, zs = np.float32(0.0213), np.int8(3)
        sp, zp = np.float32(1 / 255), np.int8(-128)
        sv, zv = np.float32(0.0347), np.int8(-20)
        qd, ktd = fake_quant(q, sq, zq), fake_quant(k.transpose(0, 1, 3, 2), sk, zk)
        y0 = fake_quant(qd @ ktd, ss, zs)
        y1 = fake_quant(p, sp, zp) @ fake_quant(v, sv, zv)
        a = (rnd(3, 5, 10) + 2).astype(np.float32)
        b = (rnd(3, 10, 12) + 1).astype(np.float32)
        su, zu = np.float32(0.0203), np.uint8(255)
        sb, zb = np.float32(0.0149), np.uint8(0)
        y2 = fake_quant(a, su, zu) @ fake_quant(b, sb, zb)
        c = (rnd(16, 32) * 2).astype(np.float32)
        sc, zc = np.float32(0.0291), np.int8(0)
        y3 = qd @ fake_quant(c, sc, zc)
        outs = {k: v.astype(np.float32) for k, v in {"y0": y0, "y1": y1, "y2": y2, "y3": y3}.items()}
        nodes = qdq("q", "sq", "zq") + [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2])] + \
            qdq("kt", "sk", "zk") + [helper.make_node("MatMul", ["q_d", "kt_d"], ["s"])] + qdq("s", "ss", "zs") + [
            helper.make_node("Identity", ["s_d"], ["y0"])] + qdq("p", "sp", "zp") + qdq("v", "sv", "zv") + [
            helper.make_node("MatMul", ["p_d", "v_d"], ["y1"])] + qdq("a", "su", "zu") + qdq("b", "sb", "zb") + [
            helper.make_node("MatMul", ["a_d", "b_d"], ["y2"])] + qdq("c", "sc", "zc") + [
            helper.make_node("MatMul", ["q_d", "c_d"], ["y3"])]
        inits = {"sq": sq, "zq": zq, "sk": sk, "zk": zk, "ss": ss, "zs": zs, "sp": sp, "zp": zp, "sv": sv, "zv": zv,
                 "su": su, "zu": zu, "sb": sb, "zb": zb, "sc": sc, "zc": zc}
        ins = {"q": q, "k": k, "p": p, "v": v, "a": a, "b": b, "c": c}
        return model(nodes, ins, outs, inits), ins, outs, ["--int8-kernels"]

    @case
    def qdq_uint8_activations():
        # --int8-kernels on U8S8 QDQ (ONNX Runtime's QUInt8 activations): a uint8 activation is
        # the int8 tensor xq - 128 with the zero point zx - 128. A convolution padding with the
        # zero point 200 (strided, a bias, ReLU, requantized to uint8 with zero point 0), then a
        # 3x3 one over its 8 channels; requantized with zero point 128 (no correction left) for
        # a 1x1 and a depthwise one; a batched MatMul and a Gemm with transB, saturating at 0 and
        # 255. Against the float64 evaluation of the graph.
        x = (rnd(1, 3, 9, 8) * 2).astype(np.float32)
        sx, zx = np.float32(0.02), np.uint8(200)
        w1 = rng.integers(-127, 128, size=(8, 3, 3, 3)).astype(np.int8)
        s1 = (rng.random(8) * 0.01 + 0.002).astype(np.float32)
        b1 = rnd(8).astype(np.float32)
        sr, zr = np.float32(0.03), np.uint8(0)
        w2 = rng.integers(-127, 128, size=(8, 8, 3, 3)).astype(np.int8)
        s2 = np.float32(0.004)
        sq, zq = np.float32(0.05), np.uint8(128)
        w3 = rng.integers(-127, 128, size=(16, 8, 1, 1)).astype(np.int8)
        w6 = rng.integers(-127, 128, size=(8, 1, 3, 3)).astype(np.int8)
        s3 = (rng.random(8) * 0.02 + 0.005).astype(np.float32)
        xd = fake_quant(x, sx, zx)
        c1 = conv64(xd, w1 * s1.reshape(-1, 1, 1, 1).astype(np.float64), b1, stride=2, padding=1)
        rd = fake_quant(np.maximum(c1, 0), sr, zr)
        y1 = conv64(rd, w2 * np.float64(s2), padding=1)
        qd = fake_quant(rd.astype(np.float32), sq, zq)
        y2 = conv64(qd, w3 * np.float64(s2))
        y5 = conv64(qd, w6 * s3.reshape(-1, 1, 1, 1).astype(np.float64), padding=1, groups=8)
        a = (rnd(2, 3, 64) * 3).astype(np.float32)
        a[0, 0, :4] = [-10, 10, -10, 10]  # saturates to 0 and 255
        g = (rnd(5, 64) * 3).astype(np.float32)
        sa, za = np.float32(0.02), np.uint8(100)
        w4 = rng.integers(-127, 128, size=(64, 32)).astype(np.int8)
        s4 = (rng.random(32) * 0.01 + 0.001).astype(np.float32)
        w5 = rng.integers(-127, 128, size=(24, 64)).astype(np.int8)
        s5, c5 = np.float32(0.003), rnd(24).astype(np.float32)
        ad, gd = fake_quant(a, sa, za), fake_quant(g, sa, za)
        y3 = ad @ (w4 * s4.astype(np.float64))
        y4 = gd @ (w5 * np.float64(s5)).T + c5
        outs = {k: v.astype(np.float32) for k, v in {"y1": y1, "y2": y2, "y3": y3, "y4": y4, "y5": y5}.items()}
        nodes = qdq("x", "sx", "zx") + [
            helper.make_node("DequantizeLinear", ["w1", "s1", "z1"], ["w1_d"], axis=0),
            helper.make_node("Conv", ["x_d", "w1_d", "b1"], ["c1"], strides=[2, 2], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c1"], ["r"])] + qdq("r", "sr", "zr") + [
            helper.make_node("DequantizeLinear", ["w2", "s2", "z0"], ["w2_d"]),
            helper.make_node("Conv", ["r_d", "w2_d"], ["y1"], pads=[1, 1, 1, 1])] + qdq("r_d", "sq", "zq", out="q") + [
            helper.make_node("DequantizeLinear", ["w3", "s2", "z0"], ["w3_d"]),
            helper.make_node("Conv", ["q_d", "w3_d"], ["y2"]),
            helper.make_node("DequantizeLinear", ["w6", "s3", "z3"], ["w6_d"], axis=0),
            helper.make_node("Conv", ["q_d", "w6_d"], ["y5"], pads=[1, 1, 1, 1], group=8)] + \
            qdq("a", "sa", "za") + qdq("g", "sa", "za") + [
            helper.make_node("DequantizeLinear", ["w4", "s4", "z4"], ["w4_d"], axis=1),
            helper.make_node("MatMul", ["a_d", "w4_d"], ["y3"]),
            helper.make_node("DequantizeLinear", ["w5", "s5", "z0"], ["w5_d"]),
            helper.make_node("Gemm", ["g_d", "w5_d", "c5"], ["y4"], transB=1)]
        inits = {"sx": sx, "zx": zx, "w1": w1, "s1": s1, "z1": np.zeros(8, np.int8), "b1": b1, "sr": sr, "zr": zr,
                 "w2": w2, "s2": s2, "z0": np.int8(0), "sq": sq, "zq": zq, "w3": w3, "w6": w6, "s3": s3,
                 "z3": np.zeros(8, np.int8), "sa": sa, "za": za, "w4": w4, "s4": s4, "z4": np.zeros(32, np.int8),
                 "w5": w5, "s5": s5, "c5": c5}
        ins = {"x": x, "a": a, "g": g}
        return model(nodes, ins, outs, inits), ins, outs, ["--int8-kernels"]

    @case
    def qdq_int8_maxpool_residual():
        # --int8-kernels on a QDQ resnet's stem and block: a convolution, ReLU and requantization
        # (one kernel writing int8), a 3x3 stride-2 max pooling of the int8 values (padded with
        # -128), requantized with its input's scale and zero point (which gives the integers
        # back) and, for a second output, with others; two 1x1 convolutions of the pooled tensor,
        # each requantized, added (a residual: one convolution is the add's kernel, the other
        # one's requantization its own kernel's epilogue), ReLU, requantized. Against the float64
        # evaluation of the graph. Scales of no round ratio: with sr = 0.04, sb = 0.0015 and
        # sqb = 0.05, cb was an integer times 0.0012, which can be an exact tie (x.5 steps) that
        # f32 and float64 round apart (one step off, depending on the seed).
        x = (rnd(1, 4, 11, 10) * 2).astype(np.float32)
        sx, zx = np.float32(0.02), np.int8(-3)
        w1 = rng.integers(-127, 128, size=(32, 4, 3, 3)).astype(np.int8)
        s1 = (rng.random(32) * 0.005 + 0.002).astype(np.float32)
        b1 = rnd(32).astype(np.float32)
        sr, zr = np.float32(0.0413), np.int8(-128)
        sp, zp = np.float32(0.0509), np.int8(-100)
        wa = rng.integers(-127, 128, size=(64, 32, 1, 1)).astype(np.int8)
        wb = rng.integers(-127, 128, size=(64, 32, 1, 1)).astype(np.int8)
        sa, sb = (rng.random(64) * 0.002 + 0.001).astype(np.float32), np.float32(0.001537)
        sqa, zqa, sqb, zqb = np.float32(0.0611), np.int8(4), np.float32(0.0517), np.int8(-6)
        so, zo = np.float32(0.0707), np.int8(-128)
        pool = lambda t: F.max_pool2d(torch.from_numpy(t), 3, 2, 1).numpy()
        xd = fake_quant(x, sx, zx)
        rd = fake_quant(np.maximum(conv64(xd, w1 * s1.reshape(-1, 1, 1, 1).astype(np.float64), b1, padding=1), 0), sr, zr)
        pd = fake_quant(pool(rd).astype(np.float32), sr, zr)
        p2 = fake_quant(pool(rd).astype(np.float32), sp, zp)
        ca = fake_quant(conv64(pd, wa * sa.reshape(-1, 1, 1, 1).astype(np.float64)).astype(np.float32), sqa, zqa)
        cb = fake_quant(conv64(pd, wb * np.float64(sb)).astype(np.float32), sqb, zqb)
        y = fake_quant(np.maximum(ca + cb, 0).astype(np.float32), so, zo)
        outs = {"y": y.astype(np.float32), "p2": p2.astype(np.float32)}
        nodes = qdq("x", "sx", "zx") + [
            helper.make_node("DequantizeLinear", ["w1", "s1", "z1"], ["w1_d"], axis=0),
            helper.make_node("Conv", ["x_d", "w1_d", "b1"], ["c1"], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c1"], ["r"])] + qdq("r", "sr", "zr") + [
            helper.make_node("MaxPool", ["r_d"], ["p"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])] + \
            qdq("p", "sr", "zr") + qdq("p", "sp", "zp", out="p2") + [
            helper.make_node("DequantizeLinear", ["wa", "sa", "za"], ["wa_d"], axis=0),
            helper.make_node("Conv", ["p_d", "wa_d"], ["ca"]),
            helper.make_node("DequantizeLinear", ["wb", "sb", "z0"], ["wb_d"]),
            helper.make_node("Conv", ["p_d", "wb_d"], ["cb"])] + qdq("ca", "sqa", "zqa") + qdq("cb", "sqb", "zqb") + [
            helper.make_node("Add", ["ca_d", "cb_d"], ["s"]),
            helper.make_node("Relu", ["s"], ["sr_"])] + qdq("sr_", "so", "zo") + [
            helper.make_node("Identity", ["sr__d"], ["y"]),
            helper.make_node("Identity", ["p2_d"], ["p2"])]
        inits = {"sx": sx, "zx": zx, "w1": w1, "s1": s1, "z1": np.zeros(32, np.int8), "b1": b1, "sr": sr, "zr": zr,
                 "sp": sp, "zp": zp, "wa": wa, "sa": sa, "za": np.zeros(64, np.int8), "wb": wb, "sb": sb,
                 "z0": np.int8(0), "sqa": sqa, "zqa": zqa, "sqb": sqb, "zqb": zqb, "so": so, "zo": zo}
        ins = {"x": x}
        return model(nodes, ins, outs, inits), ins, outs, ["--int8-kernels"]

    @case
    def qdq_uint8_maxpool():
        # --int8-kernels, U8S8: max pooling of a uint8 activation (pooled as int8 with its sign
        # bits flipped, padded with the lowest value), requantized to uint8 with its own scale and
        # zero point (the integers back), to uint8 with others, and to int8 with the zero point
        # moved by 128 (the flipped integers themselves); zero points 200 and 0 (values saturate
        # at both ends). Against the float64 evaluation of the graph.
        x = (rnd(2, 3, 9, 8) * 3).astype(np.float32)
        su, zu = np.float32(0.021), np.uint8(200)
        sv, zv = np.float32(0.013), np.uint8(0)
        so, zo = np.float32(0.031), np.uint8(17)
        pool = lambda t: F.max_pool2d(torch.from_numpy(t), 3, 2, 1).numpy()
        outs = {}
        for name, s_, z_ in (("u", su, zu), ("v", sv, zv)):
            p = pool(fake_quant(x, s_, z_).astype(np.float32)).astype(np.float32)
            outs[name + "1"] = fake_quant(p, s_, z_).astype(np.float32)
            outs[name + "2"] = fake_quant(p, so, zo).astype(np.float32)
            outs[name + "3"] = fake_quant(p, s_, np.int8(int(z_) - 128)).astype(np.float32)
        nodes = []
        for name, s_, z_ in (("u", "su", "zu"), ("v", "sv", "zv")):
            nodes += qdq("x", s_, z_, out="x" + name) + [
                helper.make_node("MaxPool", ["x" + name + "_d"], ["p" + name], kernel_shape=[3, 3], strides=[2, 2],
                                 pads=[1, 1, 1, 1])] + \
                qdq("p" + name, s_, z_, out=name + "1") + qdq("p" + name, "so", "zo", out=name + "2") + \
                qdq("p" + name, s_, "z" + name + "s", out=name + "3") + [
                helper.make_node("Identity", [name + k + "_d"], [name + k]) for k in "123"]
        inits = {"su": su, "zu": zu, "sv": sv, "zv": zv, "so": so, "zo": zo, "zus": np.int8(int(zu) - 128),
                 "zvs": np.int8(int(zv) - 128)}
        ins = {"x": x}
        return model(nodes, ins, outs, inits), ins, outs, ["--int8-kernels"]

    @case
    def qdq_int8_padded_channels():
        # --int8-kernels where a convolution's output channels are not a whole number of vectors
        # (24 and 40: panels padded to 32 and 48, sliced back): its requantization computes the
        # padding channels too, above the slice; a residual add of a run-time tensor after a
        # per-channel bias stays below its slice; a SiLU (x * sigmoid(x), reading x twice) of a
        # requantized 40-channel convolution. Against the float64 evaluation of the graph.
        x = (rnd(1, 16, 6, 7) * 2).astype(np.float32)
        sx, zx = np.float32(0.03), np.int8(2)
        w1 = rng.integers(-127, 128, size=(24, 16, 1, 1)).astype(np.int8)
        w2 = rng.integers(-127, 128, size=(24, 24, 3, 3)).astype(np.int8)
        w3 = rng.integers(-127, 128, size=(40, 24, 1, 1)).astype(np.int8)
        s1 = (rng.random(24) * 0.004 + 0.002).astype(np.float32)
        s2, s3 = np.float32(0.0009), (rng.random(40) * 0.002 + 0.001).astype(np.float32)
        b2 = rnd(24).astype(np.float32)
        sa, za, sb, zb = np.float32(0.05), np.int8(-5), np.float32(0.06), np.int8(3)
        sc, zc, so, zo = np.float32(0.07), np.int8(0), np.float32(0.02), np.int8(-20)
        xd = fake_quant(x, sx, zx)
        a = fake_quant(conv64(xd, w1 * s1.reshape(-1, 1, 1, 1).astype(np.float64)).astype(np.float32), sa, za)
        b = fake_quant(conv64(a, w2 * np.float64(s2), b2, padding=1).astype(np.float32), sb, zb)
        r = fake_quant((a + b).astype(np.float32), sa, za)
        c = fake_quant(conv64(r, w3 * s3.reshape(-1, 1, 1, 1).astype(np.float64)).astype(np.float32), sc, zc)
        y = fake_quant((c / (1 + np.exp(-c))).astype(np.float32), so, zo)
        outs = {"y": y.astype(np.float32), "r": r.astype(np.float32)}
        nodes = qdq("x", "sx", "zx") + [
            helper.make_node("DequantizeLinear", ["w1", "s1", "z1"], ["w1_d"], axis=0),
            helper.make_node("Conv", ["x_d", "w1_d"], ["a"])] + qdq("a", "sa", "za") + [
            helper.make_node("DequantizeLinear", ["w2", "s2", "z0"], ["w2_d"]),
            helper.make_node("Conv", ["a_d", "w2_d", "b2"], ["b"], pads=[1, 1, 1, 1])] + qdq("b", "sb", "zb") + [
            helper.make_node("Add", ["a_d", "b_d"], ["ab"])] + qdq("ab", "sa", "za") + [
            helper.make_node("Identity", ["ab_d"], ["r"]),
            helper.make_node("DequantizeLinear", ["w3", "s3", "z3"], ["w3_d"], axis=0),
            helper.make_node("Conv", ["ab_d", "w3_d"], ["c"])] + qdq("c", "sc", "zc") + [
            helper.make_node("Sigmoid", ["c_d"], ["sg"]),
            helper.make_node("Mul", ["c_d", "sg"], ["silu"])] + qdq("silu", "so", "zo") + [
            helper.make_node("Identity", ["silu_d"], ["y"])]
        inits = {"sx": sx, "zx": zx, "w1": w1, "s1": s1, "z1": np.zeros(24, np.int8), "w2": w2, "s2": s2,
                 "z0": np.int8(0), "b2": b2, "w3": w3, "s3": s3, "z3": np.zeros(40, np.int8), "sa": sa, "za": za,
                 "sb": sb, "zb": zb, "sc": sc, "zc": zc, "so": so, "zo": zo}
        ins = {"x": x}
        return model(nodes, ins, outs, inits), ins, outs, ["--int8-kernels"]

    @case
    def qdq_int8_in_if_branch():
        # --int8-kernels where a branch's MatMul reads an int8 activation dequantized outside
        # it (a capture: the body sees only the dequantized value, its MatMul runs in float)
        # and a weight dequantized inside it.
        x = (rnd(2, 64) * 2).astype(np.float32)
        sx, zx = np.float32(0.03), np.int8(5)
        w = rng.integers(-127, 128, size=(64, 32)).astype(np.int8)
        sw = np.float32(0.004)
        c = np.bool_(True)
        xd = fake_quant(x, sx, zx)
        outs = {"y": (xd @ (w * np.float64(sw))).astype(np.float32)}
        then_b = helper.make_graph(
            [helper.make_node("DequantizeLinear", ["w", "sw", "zw"], ["w_d"]),
             helper.make_node("MatMul", ["x_d", "w_d"], ["t"])], "then", [],
            [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2, 32])])
        else_b = helper.make_graph(
            [helper.make_node("DequantizeLinear", ["w", "sw", "zw"], ["w_d2"]),
             helper.make_node("MatMul", ["x", "w_d2"], ["e"])], "else", [],
            [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2, 32])])
        nodes = qdq("x", "sx", "zx") + [helper.make_node("If", ["c"], ["y"], then_branch=then_b, else_branch=else_b)]
        ins = {"c": c, "x": x}
        inits = {"sx": sx, "zx": zx, "w": w, "sw": sw, "zw": np.int8(0)}
        return model(nodes, ins, outs, inits), ins, outs, ["--int8-kernels"]

    def uint8_relu():
        a = rng.integers(0, 256, size=(4,)).astype(np.uint8)
        return model([helper.make_node("Relu", ["a"], ["y"])], {"a": a}, {"y": a}), {}

    errors["uint8_unsigned_unaware_op"] = lambda: (
        *uint8_relu(), "node 'n0' (Relu, domain ai.onnx, opset 13): reads a uint8 tensor; Hexir computes on unsigned "
        "integers in the arithmetic, comparison and bit ops")
