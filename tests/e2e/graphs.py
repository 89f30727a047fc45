"""Test graphs in TOSA 1.0 / linalg MLIR, with NumPy references.

Each builder takes a numpy Generator and returns a Graph: the MLIR text (weights inlined as hex
dense constants), the named inputs, and a reference function computing every output in
float64 NumPy, independently of Hexir.
"""
import dataclasses
from typing import Callable, Dict

import numpy as np


@dataclasses.dataclass
class Graph:
    mlir: str
    inputs: Dict[str, np.ndarray]
    reference: Callable[[Dict[str, np.ndarray]], Dict[str, np.ndarray]]
    outputs: list
    # Memory-plan expectations checked by run_graph.py: "min_in_place" (dispatches writing
    # over a dying input), "max_file_bytes" (size of the .hxb), "filled_constant_bytes";
    # "compile_args": extra hexir-compile flags (--no-fusion keeps the intermediates that an
    # in-place or splat test is about).
    expect: dict = dataclasses.field(default_factory=dict)


def ty(shape, dtype="f32"):
    return "tensor<" + "x".join(str(d) for d in shape) + "x" + dtype + ">"


class Builder:
    """Accumulates SSA lines of one function."""

    def __init__(self):
        self.lines = []
        self.count = 0

    def fresh(self):
        self.count += 1
        return f"%v{self.count}"

    def op(self, text, result_type):
        name = self.fresh()
        self.lines.append(f"  {name} = {text}")
        return name

    def const(self, array):
        array = np.ascontiguousarray(array, dtype=np.float32)
        hexdata = "0x" + array.tobytes().hex().upper()
        t = ty(array.shape)
        return self.op(f'"tosa.const"() {{values = dense<"{hexdata}"> : {t}}} : () -> {t}', t)

    def zp(self):
        return self.op('"tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>', "")

    def shift(self):
        return self.op('"tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>', "")

    def reshape(self, x, from_shape, to_shape):
        s = self.op(f"tosa.const_shape {{values = dense<[{', '.join(map(str, to_shape))}]> : "
                    f"tensor<{len(to_shape)}xindex>}} : () -> !tosa.shape<{len(to_shape)}>", "")
        return self.op(f"tosa.reshape {x}, {s} : ({ty(from_shape)}, !tosa.shape<{len(to_shape)}>) -> {ty(to_shape)}", "")

    def binary(self, name, a, b, sa, sb, so):
        return self.op(f"tosa.{name} {a}, {b} : ({ty(sa)}, {ty(sb)}) -> {ty(so)}", "")

    def mul(self, a, b, sa, sb, so):
        sh = self.shift()
        return self.op(f"tosa.mul {a}, {b}, {sh} : ({ty(sa)}, {ty(sb)}, tensor<1xi8>) -> {ty(so)}", "")

    def unary(self, name, x, shape):
        return self.op(f"tosa.{name} {x} : ({ty(shape)}) -> {ty(shape)}", "")

    def relu(self, x, shape):
        return self.op(f"tosa.clamp {x} {{min_val = 0.0 : f32, max_val = 3.4e38 : f32}} : ({ty(shape)}) -> {ty(shape)}", "")

    def matmul(self, a, b, sa, sb):
        z = self.zp()
        so = (sa[0], sa[1], sb[2])
        return self.op(f"tosa.matmul {a}, {b}, {z}, {z} : ({ty(sa)}, {ty(sb)}, tensor<1xf32>, tensor<1xf32>) -> {ty(so)}", ""), so

    def conv2d(self, x, w, b, sx, sw, stride, pad, dilation):
        z = self.zp()
        n, h, wd, c = sx
        oc, kh, kw, _ = sw
        oh = (h - 1 + pad[0] + pad[1] - (kh - 1) * dilation[0]) // stride[0] + 1
        ow = (wd - 1 + pad[2] + pad[3] - (kw - 1) * dilation[1]) // stride[1] + 1
        so = (n, oh, ow, oc)
        attrs = (f"{{acc_type = f32, dilation = array<i64: {dilation[0]}, {dilation[1]}>, "
                 f"pad = array<i64: {', '.join(map(str, pad))}>, stride = array<i64: {stride[0]}, {stride[1]}>}}")
        return self.op(f"tosa.conv2d {x}, {w}, {b}, {z}, {z} {attrs} : ({ty(sx)}, {ty(sw)}, {ty((oc,))}, "
                       f"tensor<1xf32>, tensor<1xf32>) -> {ty(so)}", ""), so

    def pool(self, kind, x, sx, kernel, stride, pad):
        n, h, w, c = sx
        oh = (h + pad[0] + pad[1] - kernel[0]) // stride[0] + 1
        ow = (w + pad[2] + pad[3] - kernel[1]) // stride[1] + 1
        so = (n, oh, ow, c)
        attrs = (f"kernel = array<i64: {kernel[0]}, {kernel[1]}>, pad = array<i64: {', '.join(map(str, pad))}>, "
                 f"stride = array<i64: {stride[0]}, {stride[1]}>")
        if kind == "max":
            return self.op(f"tosa.max_pool2d {x} {{{attrs}}} : ({ty(sx)}) -> {ty(so)}", ""), so
        z = self.zp()
        return self.op(f"tosa.avg_pool2d {x}, {z}, {z} {{acc_type = f32, {attrs}}} : ({ty(sx)}, tensor<1xf32>, "
                       f"tensor<1xf32>) -> {ty(so)}", ""), so

    def concat(self, values, shapes, axis):
        so = list(shapes[0])
        so[axis] = sum(s[axis] for s in shapes)
        types = ", ".join(ty(s) for s in shapes)
        return self.op(f"tensor.concat dim({axis}) {', '.join(values)} : ({types}) -> {ty(so)}", ""), tuple(so)

    def reduce(self, kind, x, sx, axis):
        so = list(sx)
        so[axis] = 1
        return self.op(f"tosa.reduce_{kind} {x} {{axis = {axis} : i32}} : ({ty(sx)}) -> {ty(so)}", ""), tuple(so)

    def function(self, name, args, results):
        """args: list of (ssa, name, shape); results: list of (ssa, name, shape)."""
        sig = ", ".join(f'{a}: {ty(s)} {{hexir.name = "{n}"}}' for a, n, s in args)
        res = ", ".join(f'{ty(s)} {{hexir.name = "{n}"}}' for _, n, s in results)
        ret = f"  return {', '.join(r for r, _, _ in results)} : {', '.join(ty(s) for _, _, s in results)}"
        return f"func.func @{name}({sig}) -> ({res}) {{\n" + "\n".join(self.lines) + "\n" + ret + "\n}\n"


# ---------------------------------------------------------------- numpy references (float64)

def np_conv2d(x, w, b, stride, pad, dilation):
    x = np.pad(x, ((0, 0), (pad[0], pad[1]), (pad[2], pad[3]), (0, 0)))
    n, h, wd, c = x.shape
    oc, kh, kw, _ = w.shape
    oh = (h - (kh - 1) * dilation[0] - 1) // stride[0] + 1
    ow = (wd - (kw - 1) * dilation[1] - 1) // stride[1] + 1
    out = np.zeros((n, oh, ow, oc)) + b
    for i in range(kh):
        for j in range(kw):
            patch = x[:, i * dilation[0]: i * dilation[0] + stride[0] * (oh - 1) + 1: stride[0],
                      j * dilation[1]: j * dilation[1] + stride[1] * (ow - 1) + 1: stride[1], :]
            out += np.einsum("nhwc,oc->nhwo", patch, w[:, i, j, :])
    return out


def np_pool(kind, x, kernel, stride):
    n, h, w, c = x.shape
    oh = (h - kernel[0]) // stride[0] + 1
    ow = (w - kernel[1]) // stride[1] + 1
    windows = np.stack([x[:, i: i + stride[0] * (oh - 1) + 1: stride[0], j: j + stride[1] * (ow - 1) + 1: stride[1], :]
                        for i in range(kernel[0]) for j in range(kernel[1])])
    return windows.max(axis=0) if kind == "max" else windows.mean(axis=0)


def f64(d):
    return {k: v.astype(np.float64) for k, v in d.items()}


# ---------------------------------------------------------------- graphs

def mlp(rng):
    """3-layer MLP: matmul + bias + clamp (ReLU), twice, then a final matmul + bias."""
    sizes = [64, 128, 64, 10]
    batch = 8
    ws = [rng.standard_normal((1, sizes[i], sizes[i + 1])).astype(np.float32) / np.sqrt(sizes[i]) for i in range(3)]
    bs = [rng.standard_normal((1, 1, sizes[i + 1])).astype(np.float32) * 0.1 for i in range(3)]
    g = Builder()
    h = g.reshape("%x", (batch, sizes[0]), (1, batch, sizes[0]))
    shape = (1, batch, sizes[0])
    for i in range(3):
        w = g.const(ws[i])
        b = g.const(bs[i])
        h, shape = g.matmul(h, w, shape, ws[i].shape)
        h = g.binary("add", h, b, shape, bs[i].shape, shape)
        if i < 2:
            h = g.relu(h, shape)
    y = g.reshape(h, shape, (batch, sizes[3]))
    text = g.function("main", [("%x", "x", (batch, sizes[0]))], [(y, "y", (batch, sizes[3]))])

    def ref(inp):
        h = inp["x"]
        for i in range(3):
            h = h @ ws[i][0].astype(np.float64) + bs[i][0].astype(np.float64)
            if i < 2:
                h = np.maximum(h, 0)
        return {"y": h}

    return Graph(text, {"x": rng.standard_normal((batch, sizes[0])).astype(np.float32)}, ref, ["y"])


def cnn(rng):
    """conv2d + clamp + max_pool2d, a strided conv2d + clamp, reshape, matmul."""
    w1 = rng.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3
    b1 = rng.standard_normal((8,)).astype(np.float32) * 0.1
    w2 = rng.standard_normal((16, 3, 3, 8)).astype(np.float32) * 0.2
    b2 = rng.standard_normal((16,)).astype(np.float32) * 0.1
    wf = rng.standard_normal((1, 256, 10)).astype(np.float32) * 0.1
    g = Builder()
    c1, s1 = g.conv2d("%x", g.const(w1), g.const(b1), (1, 16, 16, 3), w1.shape, (1, 1), (1, 1, 1, 1), (1, 1))
    r1 = g.relu(c1, s1)
    p1, sp = g.pool("max", r1, s1, (2, 2), (2, 2), (0, 0, 0, 0))
    c2, s2 = g.conv2d(p1, g.const(w2), g.const(b2), sp, w2.shape, (2, 2), (1, 0, 1, 0), (1, 1))
    r2 = g.relu(c2, s2)
    flat = g.reshape(r2, s2, (1, 1, 256))
    logits, sl = g.matmul(flat, g.const(wf), (1, 1, 256), wf.shape)
    y = g.reshape(logits, sl, (1, 10))
    text = g.function("main", [("%x", "image", (1, 16, 16, 3))], [(y, "logits", (1, 10))])

    def ref(inp):
        a = np.maximum(np_conv2d(inp["image"], w1, b1, (1, 1), (1, 1, 1, 1), (1, 1)), 0)
        a = np_pool("max", a, (2, 2), (2, 2))
        a = np.maximum(np_conv2d(a, w2, b2, (2, 2), (1, 0, 1, 0), (1, 1)), 0)
        return {"logits": a.reshape(1, 256) @ wf[0].astype(np.float64)}

    return Graph(text, {"image": rng.standard_normal((1, 16, 16, 3)).astype(np.float32)}, ref, ["logits"])


def softmax(rng):
    """softmax(x) along the last axis from reduce_max, sub, exp, reduce_sum, reciprocal, mul."""
    shape = (4, 10)
    g = Builder()
    m, sm = g.reduce("max", "%x", shape, 1)
    d = g.binary("sub", "%x", m, shape, sm, shape)
    e = g.unary("exp", d, shape)
    s, ss = g.reduce("sum", e, shape, 1)
    r = g.unary("reciprocal", s, ss)
    y = g.mul(e, r, shape, ss, shape)
    text = g.function("main", [("%x", "x", shape)], [(y, "probs", shape)])

    def ref(inp):
        x = inp["x"]
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return {"probs": e / e.sum(axis=1, keepdims=True)}

    return Graph(text, {"x": (rng.standard_normal(shape) * 3).astype(np.float32)}, ref, ["probs"])


def two_outputs(rng):
    """Two outputs; the first is also an intermediate feeding the second."""
    w = rng.standard_normal((1, 16, 32)).astype(np.float32) / 4
    g = Builder()
    x3 = g.reshape("%x", (4, 16), (1, 4, 16))
    h, sh = g.matmul(x3, g.const(w), (1, 4, 16), w.shape)
    h2 = g.reshape(h, sh, (4, 32))
    t = g.unary("tanh", h2, (4, 32))
    s = g.unary("sigmoid", h2, (4, 32))
    y = g.binary("add", t, s, (4, 32), (4, 32), (4, 32))
    text = g.function("main", [("%x", "x", (4, 16))], [(h2, "hidden", (4, 32)), (y, "y", (4, 32))])

    def ref(inp):
        h = inp["x"] @ w[0].astype(np.float64)
        return {"hidden": h, "y": np.tanh(h) + 1 / (1 + np.exp(-h))}

    return Graph(text, {"x": rng.standard_normal((4, 16)).astype(np.float32)}, ref, ["hidden", "y"])


def misc_ops(rng):
    """The remaining TOSA ops: transpose, avg_pool2d, dilated strided conv2d, sub, reduce_sum."""
    w = rng.standard_normal((2, 3, 3, 4)).astype(np.float32) * 0.3
    b = rng.standard_normal((2,)).astype(np.float32)
    g = Builder()
    p, sp = g.pool("avg", "%img", (1, 8, 8, 4), (2, 2), (2, 2), (0, 0, 0, 0))
    c, sc = g.conv2d("%img", g.const(w), g.const(b), (1, 8, 8, 4), w.shape, (2, 2), (1, 2, 1, 2), (2, 2))
    tr = g.op(f"tosa.transpose %m {{perms = array<i32: 1, 0>}} : ({ty((3, 5))}) -> {ty((5, 3))}", "")
    rs, srs = g.reduce("sum", "%m", (3, 5), 1)
    d = g.binary("sub", "%m", rs, (3, 5), srs, (3, 5))
    text = g.function("main", [("%img", "img", (1, 8, 8, 4)), ("%m", "m", (3, 5))],
                      [(p, "avg", sp), (c, "conv", sc), (tr, "transposed", (5, 3)), (d, "centered", (3, 5))])

    def ref(inp):
        m = inp["m"]
        return {"avg": np_pool("avg", inp["img"], (2, 2), (2, 2)),
                "conv": np_conv2d(inp["img"], w, b, (2, 2), (1, 2, 1, 2), (2, 2)),
                "transposed": m.T, "centered": m - m.sum(axis=1, keepdims=True)}

    return Graph(text, {"img": rng.standard_normal((1, 8, 8, 4)).astype(np.float32),
                        "m": rng.standard_normal((3, 5)).astype(np.float32)},
                 ref, ["avg", "conv", "transposed", "centered"])


def linalg_graph(rng):
    """linalg on tensors directly: a named matmul and a linalg.generic (x * 2 + 1, exp)."""
    w = rng.standard_normal((8, 6)).astype(np.float32) / 3
    hexdata = "0x" + w.tobytes().hex().upper()
    text = f"""#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%x: tensor<4x8xf32> {{hexir.name = "x"}}) -> (tensor<4x6xf32> {{hexir.name = "y"}}) {{
  %w = arith.constant dense<"{hexdata}"> : tensor<8x6xf32>
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x6xf32>) outs(%acc : tensor<4x6xf32>) -> tensor<4x6xf32>
  %e2 = tensor.empty() : tensor<4x6xf32>
  %y = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%mm : tensor<4x6xf32>) outs(%e2 : tensor<4x6xf32>) {{
  ^bb0(%in: f32, %out: f32):
    %a = arith.mulf %in, %two : f32
    %b = arith.addf %a, %one : f32
    %c = math.exp %b : f32
    linalg.yield %c : f32
  }} -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}}
"""

    def ref(inp):
        return {"y": np.exp(inp["x"] @ w.astype(np.float64) * 2 + 1)}

    return Graph(text, {"x": (rng.standard_normal((4, 8)) * 0.3).astype(np.float32)}, ref, ["y"])


def in_place_chain(rng):
    """An elementwise chain on intermediates: each step can overwrite the previous buffer."""
    shape = (8, 32)
    w = rng.standard_normal((1, 32, 32)).astype(np.float32) / 6
    c = rng.standard_normal(shape).astype(np.float32)
    g = Builder()
    x3 = g.reshape("%x", shape, (1, 8, 32))
    h, sh = g.matmul(x3, g.const(w), (1, 8, 32), w.shape)
    h = g.reshape(h, sh, shape)                 # a view of the matmul result
    a = g.binary("add", h, g.const(c), shape, shape, shape)
    t = g.unary("tanh", a, shape)
    s = g.unary("sigmoid", t, shape)
    m = g.mul(s, t, shape, shape, shape)
    y = g.unary("exp", m, shape)
    text = g.function("main", [("%x", "x", shape)], [(y, "y", shape)])

    def ref(inp):
        h = inp["x"] @ w[0].astype(np.float64) + c
        t = np.tanh(h)
        s = 1 / (1 + np.exp(-t))
        return {"y": np.exp(s * t)}

    return Graph(text, {"x": rng.standard_normal(shape).astype(np.float32)}, ref, ["y"],
                 expect={"min_in_place": 3, "compile_args": ["--no-fusion"]})


def views(rng):
    """Reshapes are views: an intermediate read through two different shapes."""
    g = Builder()
    w = rng.standard_normal((1, 6, 12)).astype(np.float32) / 3
    x3 = g.reshape("%x", (4, 6), (1, 4, 6))
    h, sh = g.matmul(x3, g.const(w), (1, 4, 6), w.shape)       # 1x4x12
    flat = g.reshape(h, sh, (1, 48))
    sq = g.reshape(h, sh, (4, 3, 4))
    e = g.unary("exp", flat, (1, 48))
    r, sr = g.reduce("sum", sq, (4, 3, 4), 2)
    text = g.function("main", [("%x", "x", (4, 6))], [(e, "e", (1, 48)), (r, "r", sr)])

    def ref(inp):
        h = inp["x"] @ w[0].astype(np.float64)
        return {"e": np.exp(h.reshape(1, 48)), "r": h.reshape(4, 3, 4).sum(axis=2, keepdims=True)}

    return Graph(text, {"x": rng.standard_normal((4, 6)).astype(np.float32)}, ref, ["e", "r"])


def splat(rng):
    """A 256x256 splat constant becomes a fill: a few bytes in the file, not 256 KiB."""
    shape = (256, 256)
    g = Builder()
    c = g.op(f'"tosa.const"() {{values = dense<0.75> : {ty(shape)}}} : () -> {ty(shape)}', "")
    y = g.binary("add", "%x", c, shape, shape, shape)
    y = g.mul(y, c, shape, shape, shape)
    text = g.function("main", [("%x", "x", shape)], [(y, "y", shape)])

    def ref(inp):
        return {"y": (inp["x"] + 0.75) * 0.75}

    return Graph(text, {"x": rng.standard_normal(shape).astype(np.float32)}, ref, ["y"],
                 expect={"max_file_bytes": 64 * 1024, "filled_constant_bytes": 256 * 256 * 4,
                         "compile_args": ["--no-fusion"]})


def resnet_blocks(rng, blocks=3, channels=8, hw=12):
    """Residual blocks: conv-relu-conv, add the skip, relu. Branches, in-place adds."""
    g = Builder()
    shape = (1, hw, hw, channels)
    weights = []
    x = "%x"
    for _ in range(blocks):
        w1 = rng.standard_normal((channels, 3, 3, channels)).astype(np.float32) * 0.15
        b1 = rng.standard_normal((channels,)).astype(np.float32) * 0.1
        w2 = rng.standard_normal((channels, 3, 3, channels)).astype(np.float32) * 0.15
        b2 = rng.standard_normal((channels,)).astype(np.float32) * 0.1
        weights.append((w1, b1, w2, b2))
        h, _ = g.conv2d(x, g.const(w1), g.const(b1), shape, w1.shape, (1, 1), (1, 1, 1, 1), (1, 1))
        h = g.relu(h, shape)
        h, _ = g.conv2d(h, g.const(w2), g.const(b2), shape, w2.shape, (1, 1), (1, 1, 1, 1), (1, 1))
        h = g.binary("add", h, x, shape, shape, shape)
        x = g.relu(h, shape)
    text = g.function("main", [("%x", "x", shape)], [(x, "y", shape)])

    def ref(inp):
        x = inp["x"]
        for w1, b1, w2, b2 in weights:
            h = np.maximum(np_conv2d(x, w1, b1, (1, 1), (1, 1, 1, 1), (1, 1)), 0)
            x = np.maximum(np_conv2d(h, w2, b2, (1, 1), (1, 1, 1, 1), (1, 1)) + x, 0)
        return {"y": x}

    return Graph(text, {"x": rng.standard_normal(shape).astype(np.float32)}, ref, ["y"],
                 expect={"min_in_place": 2 * blocks, "compile_args": ["--no-fusion"]})


def branches(rng, count=4, width=1024):
    """Independent branches written breadth-first: every big intermediate is live at once in
    program order; the memory-aware schedule runs each branch to its small result first."""
    g = Builder()
    ws = [rng.standard_normal((1, 64, width)).astype(np.float32) / 8 for _ in range(count)]
    x3 = g.reshape("%x", (1, 64), (1, 1, 64))
    bigs = []
    for w in ws:
        h, sh = g.matmul(x3, g.const(w), (1, 1, 64), w.shape)
        bigs.append((g.unary("tanh", h, sh), sh))
    smalls = [g.reduce("sum", h, sh, 2) for h, sh in bigs]
    y, sy = smalls[0]
    for s_, _ in smalls[1:]:
        y = g.binary("add", y, s_, sy, sy, sy)
    text = g.function("main", [("%x", "x", (1, 64))], [(y, "y", sy)])

    def ref(inp):
        return {"y": sum(np.tanh(inp["x"] @ w[0].astype(np.float64)).sum(axis=1, keepdims=True)
                         for w in ws).reshape(1, 1, 1)}

    return Graph(text, {"x": rng.standard_normal((1, 64)).astype(np.float32)}, ref, ["y"])


def kv_cache(rng):
    """A donated cache updated in place: insert a new row, then an elementwise decay."""
    cache = rng.standard_normal((16, 8)).astype(np.float32)
    new = rng.standard_normal((1, 8)).astype(np.float32)
    text = """#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%cache: tensor<16x8xf32> {hexir.name = "cache", hexir.donate},
                %new: tensor<1x8xf32> {hexir.name = "new"})
    -> (tensor<16x8xf32> {hexir.name = "cache_out"}, tensor<1x8xf32> {hexir.name = "scaled"}) {
  %half = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<1x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%new : tensor<1x8xf32>) outs(%e : tensor<1x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %half : f32
    linalg.yield %m : f32
  } -> tensor<1x8xf32>
  %updated = tensor.insert_slice %s into %cache[5, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<16x8xf32>
  return %updated, %s : tensor<16x8xf32>, tensor<1x8xf32>
}
"""

    def ref(inp):
        out = inp["cache"].copy()
        out[5] = inp["new"][0] * 0.5
        return {"cache_out": out, "scaled": inp["new"] * 0.5}

    return Graph(text, {"cache": cache, "new": new}, ref, ["cache_out", "scaled"],
                 expect={"tied": {"cache_out": "cache"}})


def concats(rng):
    """Concatenations written in place by their producers: a fire module's 1x1 and 3x3
    convolutions along channels (as channel panels where packed), read by convolutions; three
    convolutions of 16, 24 and 32 channels; elementwise producers along rows; a padded max pool
    and a convolution; a concatenation with a graph input (stays a concatenation kernel)."""
    x_shape = (1, 12, 12, 8)
    wa = rng.standard_normal((32, 1, 1, 8)).astype(np.float32) * 0.3
    wb = rng.standard_normal((32, 3, 3, 8)).astype(np.float32) * 0.2
    wc = rng.standard_normal((16, 1, 1, 64)).astype(np.float32) * 0.2
    wd = rng.standard_normal((24, 3, 3, 64)).astype(np.float32) * 0.1
    we = rng.standard_normal((32, 1, 1, 64)).astype(np.float32) * 0.2
    ba, bb, bc, bd, be = (rng.standard_normal((w.shape[0],)).astype(np.float32) * 0.1 for w in (wa, wb, wc, wd, we))
    g = Builder()
    a, sa = g.conv2d("%x", g.const(wa), g.const(ba), x_shape, wa.shape, (1, 1), (0, 0, 0, 0), (1, 1))
    a = g.relu(a, sa)
    b, sb = g.conv2d("%x", g.const(wb), g.const(bb), x_shape, wb.shape, (1, 1), (1, 1, 1, 1), (1, 1))
    b = g.relu(b, sb)
    fire, sf = g.concat([a, b], [sa, sb], 3)
    c, sc = g.conv2d(fire, g.const(wc), g.const(bc), sf, wc.shape, (1, 1), (0, 0, 0, 0), (1, 1))
    d, sd = g.conv2d(fire, g.const(wd), g.const(bd), sf, wd.shape, (1, 1), (1, 1, 1, 1), (1, 1))
    e, se = g.conv2d(fire, g.const(we), g.const(be), sf, we.shape, (1, 1), (0, 0, 0, 0), (1, 1))
    three, st = g.concat([c, d, e], [sc, sd, se], 3)
    scaled = g.unary("sigmoid", "%x", x_shape)
    shifted = g.unary("exp", "%x", x_shape)
    rows, sr = g.concat([scaled, shifted], [x_shape, x_shape], 1)
    # A max pool computing its own border (no padded tensor) writes its slice too.
    pool, sp = g.pool("max", "%x", x_shape, (3, 3), (1, 1), (1, 1, 1, 1))
    wp = rng.standard_normal((8, 3, 3, 8)).astype(np.float32) * 0.2
    bp = rng.standard_normal((8,)).astype(np.float32) * 0.1
    conv, sv = g.conv2d("%x", g.const(wp), g.const(bp), x_shape, wp.shape, (1, 1), (1, 1, 1, 1), (1, 1))
    pooled, spo = g.concat([pool, conv], [sp, sv], 3)
    squashed = g.unary("tanh", "%x", x_shape)
    mixed, sm = g.concat(["%x", squashed], [x_shape, x_shape], 3)
    # Read by an op, not returned: a graph output is the caller's buffer, written by one kernel.
    three, rows, pooled = (g.unary("tanh", v, sh) for v, sh in ((three, st), (rows, sr), (pooled, spo)))
    text = g.function("main", [("%x", "x", x_shape)],
                      [(three, "three", st), (rows, "rows", sr), (mixed, "mixed", sm), (pooled, "pooled", spo)])

    def ref(inp):
        x = inp["x"].astype(np.float64)
        f = np.concatenate([np.maximum(np_conv2d(x, wa, ba, (1, 1), (0, 0, 0, 0), (1, 1)), 0),
                            np.maximum(np_conv2d(x, wb, bb, (1, 1), (1, 1, 1, 1), (1, 1)), 0)], axis=3)
        three = np.concatenate([np_conv2d(f, wc, bc, (1, 1), (0, 0, 0, 0), (1, 1)),
                                np_conv2d(f, wd, bd, (1, 1), (1, 1, 1, 1), (1, 1)),
                                np_conv2d(f, we, be, (1, 1), (0, 0, 0, 0), (1, 1))], axis=3)
        return {"three": np.tanh(three), "rows": np.tanh(np.concatenate([1 / (1 + np.exp(-x)), np.exp(x)], axis=1)),
                "mixed": np.concatenate([x, np.tanh(x)], axis=3),
                "pooled": np.tanh(np.concatenate([np_pool("max", np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)),
                                                                         constant_values=-np.inf), (3, 3), (1, 1)),
                                                  np_conv2d(x, wp, bp, (1, 1), (1, 1, 1, 1), (1, 1))], axis=3))}

    return Graph(text, {"x": rng.standard_normal(x_shape).astype(np.float32)}, ref,
                 ["three", "rows", "mixed", "pooled"])


def residual_pads(rng):
    """Pads with a second reader, as in resnet18's basic blocks: each block's input is read
    padded by its first convolution and unpadded by its residual add or by a 1x1 stride-2
    downsampling convolution. The input's producer writes the padded tensor and the other
    readers take its interior (no pad copy). 64 channels (two packed panels, read through the
    channel view) and 8 (one panel, unpacked)."""
    g = Builder()
    x_shape = (1, 9, 9, 64)
    params = []

    def conv(x, sx, oc, k, stride):
        w = rng.standard_normal((oc, k, k, sx[3])).astype(np.float32) * (0.6 / np.sqrt(k * k * sx[3]))
        b = rng.standard_normal((oc,)).astype(np.float32) * 0.1
        params.append((w, b))
        p = k // 2
        return g.conv2d(x, g.const(w), g.const(b), sx, w.shape, (stride, stride), (p, p, p, p), (1, 1))

    # Two blocks of 64 channels, a downsampling block, a 1x1 to 8 channels and a block of 8.
    x, sx = "%x", x_shape
    for _ in range(2):
        h, sh = conv(x, sx, 64, 3, 1)
        h = g.relu(h, sh)
        h, sh = conv(h, sh, 64, 3, 1)
        x = g.relu(g.binary("add", h, x, sh, sx, sh), sh)
    h, sh = conv(x, sx, 64, 3, 2)
    h = g.relu(h, sh)
    h, sh = conv(h, sh, 64, 3, 1)
    d, sd = conv(x, sx, 64, 1, 2)
    x, sx = g.relu(g.binary("add", h, d, sh, sd, sh), sh), sh
    x, sx = conv(x, sx, 8, 1, 1)
    h, sh = conv(x, sx, 8, 3, 1)
    h = g.relu(h, sh)
    h, sh = conv(h, sh, 8, 3, 1)
    y = g.relu(g.binary("add", h, x, sh, sx, sh), sh)
    text = g.function("main", [("%x", "x", x_shape)], [(y, "y", sh)])

    def ref(inp):
        it = iter(params)

        def c(x, stride):
            w, b = next(it)
            p = w.shape[1] // 2
            return np_conv2d(x, w, b, (stride, stride), (p, p, p, p), (1, 1))

        x = inp["x"].astype(np.float64)
        for _ in range(2):
            h = np.maximum(c(x, 1), 0)
            x = np.maximum(c(h, 1) + x, 0)
        h = np.maximum(c(x, 2), 0)
        h = c(h, 1)
        x = np.maximum(h + c(x, 2), 0)
        x = c(x, 1)
        h = np.maximum(c(x, 1), 0)
        return {"y": np.maximum(c(h, 1) + x, 0)}

    return Graph(text, {"x": rng.standard_normal(x_shape).astype(np.float32)}, ref, ["y"])


def runtime_matmuls(rng):
    """Matmuls whose B is an input, not a constant: packed into panels where enough rows of A
    read it (64 rows; 32 where B's rows are 4 KiB apart; always when B is read with k innermost,
    a Gemm with transB), read as it is by 8 rows. Up to 128 rows pack B inside the matmul's
    kernel, block by block (y6: blocks of 100 reduction steps and 3 of 6 panels); 200 rows
    (y5) by a kernel of its own. B of the first matmul is also read unpacked by the fourth; the
    first takes a bias and a ReLU."""
    def matmul(name, a, b, sa, sb, trans_b=False):
        m, k = sa
        n = sb[0] if trans_b else sb[1]
        b_map = "(m, n, k) -> (n, k)" if trans_b else "(m, n, k) -> (k, n)"
        return f"""  %{name}_e = tensor.empty() : tensor<{m}x{n}xf32>
  %{name}_z = linalg.fill ins(%zero : f32) outs(%{name}_e : tensor<{m}x{n}xf32>) -> tensor<{m}x{n}xf32>
  %{name} = linalg.generic {{indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<{b_map}>, affine_map<(m, n, k) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}}
      ins({a}, {b} : tensor<{m}x{k}xf32>, tensor<{sb[0]}x{sb[1]}xf32>) outs(%{name}_z : tensor<{m}x{n}xf32>) {{
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }} -> tensor<{m}x{n}xf32>
"""
    shapes = {"a": (64, 40), "b": (40, 48), "bias": (48,), "c": (32, 24), "d": (1024, 24), "e": (32, 56),
              "f": (56, 1024), "g": (8, 40),
              "h": (200, 72), "h_b": (72, 48), "l": (96, 400), "l_b": (400, 96)}
    inputs = {k: (rng.standard_normal(s) * 0.5).astype(np.float32) for k, s in shapes.items()}
    args = ", ".join(f'%{k}: {ty(s)} {{hexir.name = "{k}"}}' for k, s in shapes.items())
    outs = {"y1": (64, 48), "y2": (32, 1024), "y3": (32, 1024), "y4": (8, 48), "y5": (200, 48), "y6": (96, 96)}
    res = ", ".join(f'{ty(s)} {{hexir.name = "{k}"}}' for k, s in outs.items())
    body = "  %zero = arith.constant 0.0 : f32\n"
    body += matmul("mm1", "%a", "%b", (64, 40), (40, 48))
    body += """  %y1_e = tensor.empty() : tensor<64x48xf32>
  %y1 = linalg.generic {indexing_maps = [affine_map<(m, n) -> (m, n)>, affine_map<(m, n) -> (n)>, affine_map<(m, n) -> (m, n)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%mm1, %bias : tensor<64x48xf32>, tensor<48xf32>) outs(%y1_e : tensor<64x48xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<64x48xf32>
"""
    body += matmul("y2", "%c", "%d", (32, 24), (1024, 24), trans_b=True)
    body += matmul("y3", "%e", "%f", (32, 56), (56, 1024))
    body += matmul("y4", "%g", "%b", (8, 40), (40, 48))
    body += matmul("y5", "%h", "%h_b", (200, 72), (72, 48))
    body += matmul("y6", "%l", "%l_b", (96, 400), (400, 96))
    ret = "  return %y1, %y2, %y3, %y4, %y5, %y6 : " + ", ".join(ty(s) for s in outs.values())
    text = f"func.func @main({args}) -> ({res}) {{\n{body}{ret}\n}}\n"

    def ref(inp):
        return {"y1": np.maximum(inp["a"] @ inp["b"] + inp["bias"], 0), "y2": inp["c"] @ inp["d"].T,
                "y3": inp["e"] @ inp["f"], "y4": inp["g"] @ inp["b"],
                "y5": inp["h"] @ inp["h_b"], "y6": inp["l"] @ inp["l_b"]}

    return Graph(text, inputs, ref, list(outs))


def scf_control_flow(rng):
    """MLIR control flow: an scf.while (while sum(|acc|) < 20: acc = acc * 1.5 + x) and an
    scf.if on a bool input (acc or -acc), each condition read from a tensor<i8> by
    tensor.extract; hexir-outline-control-flow makes them hexir.loop and hexir.if."""
    text = """func.func @main(%x: tensor<4xf32> {hexir.name = "x"}, %c: tensor<i8> {hexir.name = "c"})
    -> (tensor<4xf32> {hexir.name = "r"}, tensor<4xf32> {hexir.name = "y"}) {
  %limit = arith.constant dense<20.0> : tensor<f32>
  %shift = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %r = scf.while (%acc = %x) : (tensor<4xf32>) -> tensor<4xf32> {
    %e = tensor.empty() : tensor<f32>
    %zero = arith.constant 0.0 : f32
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
    %s = linalg.generic {indexing_maps = [affine_map<(d) -> (d)>, affine_map<(d) -> ()>], iterator_types = ["reduction"]}
        ins(%acc : tensor<4xf32>) outs(%init : tensor<f32>) {
    ^bb0(%a: f32, %o: f32):
      %m = math.absf %a : f32
      %t = arith.addf %o, %m : f32
      linalg.yield %t : f32
    } -> tensor<f32>
    %eb = tensor.empty() : tensor<i8>
    %less = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
        ins(%s, %limit : tensor<f32>, tensor<f32>) outs(%eb : tensor<i8>) {
    ^bb0(%a: f32, %l: f32, %o: i8):
      %p = arith.cmpf olt, %a, %l : f32
      %b = arith.extui %p : i1 to i8
      linalg.yield %b : i8
    } -> tensor<i8>
    %byte = tensor.extract %less[] : tensor<i8>
    %go = arith.trunci %byte : i8 to i1
    scf.condition(%go) %acc : tensor<4xf32>
  } do {
  ^bb0(%acc: tensor<4xf32>):
    %k = arith.constant dense<1.5> : tensor<4xf32>
    %m = tosa.mul %acc, %k, %shift : (tensor<4xf32>, tensor<4xf32>, tensor<1xi8>) -> tensor<4xf32>
    %n = tosa.add %m, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    scf.yield %n : tensor<4xf32>
  }
  %cb = tensor.extract %c[] : tensor<i8>
  %zero8 = arith.constant 0 : i8
  %p = arith.cmpi ne, %cb, %zero8 : i8
  %y = scf.if %p -> tensor<4xf32> {
    scf.yield %r : tensor<4xf32>
  } else {
    %en = tensor.empty() : tensor<4xf32>
    %neg = linalg.generic {indexing_maps = [affine_map<(d) -> (d)>, affine_map<(d) -> (d)>], iterator_types = ["parallel"]}
        ins(%r : tensor<4xf32>) outs(%en : tensor<4xf32>) {
    ^bb0(%a: f32, %o: f32):
      %n = arith.negf %a : f32
      linalg.yield %n : f32
    } -> tensor<4xf32>
    scf.yield %neg : tensor<4xf32>
  }
  return %r, %y : tensor<4xf32>, tensor<4xf32>
}
"""
    x = (rng.uniform(0.05, 0.4, size=4) * rng.choice([-1, 1], size=4)).astype(np.float32)

    def ref(inp):
        acc = inp["x"].copy()
        while np.abs(acc).sum(dtype=np.float32) < 20:
            acc = acc * np.float32(1.5) + inp["x"]
        return {"r": acc, "y": acc if inp["c"] else -acc}

    return Graph(text, {"x": x, "c": np.array(rng.integers(0, 2), np.bool_)}, ref, ["r", "y"])


GRAPHS = {
    "mlp": mlp,
    "cnn": cnn,
    "softmax": softmax,
    "two_outputs": two_outputs,
    "misc_ops": misc_ops,
    "linalg": linalg_graph,
    "in_place_chain": in_place_chain,
    "views": views,
    "splat": splat,
    "resnet_blocks": resnet_blocks,
    "branches": branches,
    "kv_cache": kv_cache,
    "concats": concats,
    "residual_pads": residual_pads,
    "runtime_matmuls": runtime_matmuls,
    "scf_control_flow": scf_control_flow,
}
