#!/usr/bin/python3
"""Randomized differential test of the window operators against references that are not Hexir.

Each run draws a fresh seed (printed first; `--seed S` replays the run, `--seed S --case K` one
case of it) and random cases of:
  - Conv: 1-D and 2-D; dense, grouped (group widths 1-16), depthwise, and depthwise with a
    channel multiplier; kernels 1-7 (not always square), strides and dilations 1-3, symmetric
    and asymmetric pads, auto_pad, odd and even sizes, batch 1 and 2, with and without bias;
    against PyTorch's conv in float64 on an explicitly padded input;
  - MaxPool and AveragePool: 1-D and 2-D, kernels 1-7, strides, dilations (MaxPool), pads on each
    side, ceil_mode, count_include_pad; against a NumPy evaluation of ONNX's definition, itself
    checked against PyTorch's pooling wherever PyTorch can express the case;
  - GlobalAveragePool and GlobalMaxPool, against NumPy;
  - ConvTranspose: 1-D and 2-D, dense, grouped and depthwise, kernels 1-5, strides 1-3, dilations
    1-2, symmetric and asymmetric pads (cropping), output_padding, with and without bias; against
    PyTorch's conv_transpose in float64 (unpadded, then the output padding and crop applied).
Cases are compiled 12 to a model (independent nodes, each its own input and output: one compile
for K cases); a model that does not compile is retried case by case, so a refusal names its case.
Every case this test ever failed on is kept in window_regressions.json and runs first, each run.
A case passes when max|hexir - ref| <= 1e-4 max|ref| (+ 1e-6): a wrong tap or channel is off by
the order of max|ref|, float32 rounding by 1e-6 of it.
Usage: random_windows.py --bin BUILD/tools [--python BUILD/python] [--target T] [--target-cpu CPU]
                         [--seed S] [--count N] [--time-box SECONDS] [--case K] [--batch K]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
REGRESSIONS = os.path.join(HERE, "window_regressions.json")
TOLERANCE = 1e-4
MAX_MACS = 3_000_000  # per case: keeps a few hundred cases within a minute of compile and run


# --- Drawing cases -------------------------------------------------------------------------

def _small(rng, high, p_one=0.5):
    """1 with probability p_one, else uniform in [2, high]."""
    return 1 if high < 2 or rng.random() < p_one else int(rng.integers(2, high + 1))


def _spatial(rng, nsp, extents):
    """Input sizes, odd and even, at least as large as each window's extent minus its pads."""
    return [int(rng.integers(max(1, e // 2), max(e, 4) + 14)) for e in extents[:nsp]]


def _pads(rng, nsp, extents, limit_half):
    """pads [begin..., end...]: symmetric or not; each below the window's extent (at most half of
    it with `limit_half`, for pooling)."""
    highs = [((e - 1) // 2 if limit_half else e - 1) for e in extents]
    begin = [int(rng.integers(0, h + 1)) for h in highs]
    if rng.random() < 0.5:
        return begin + begin
    return begin + [int(rng.integers(0, h + 1)) for h in highs]


def draw_conv(rng):
    nsp = 1 if rng.random() < 0.15 else 2
    kind = rng.choice(["dense", "grouped", "grouped", "depthwise", "multiplier"])
    if kind == "dense":
        group, cg, fg = 1, int(rng.integers(1, 33)), int(rng.integers(1, 33))
    elif kind == "grouped":
        group, cg, fg = int(rng.integers(2, 17)), int(rng.integers(1, 17)), int(rng.integers(1, 17))
    elif kind == "depthwise":
        group, cg, fg = int(rng.integers(2, 65)), 1, 1
    else:
        group, cg, fg = int(rng.integers(2, 33)), 1, int(rng.integers(2, 9))
    kernel = [int(rng.integers(1, 8)) for _ in range(nsp)]
    if nsp == 2 and rng.random() < 0.5:
        kernel[1] = kernel[0]
    strides = [_small(rng, 3) for _ in range(nsp)]
    dilations = [_small(rng, 3, p_one=0.7) for _ in range(nsp)]
    extents = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    case = {"op": "Conv", "n": int(rng.integers(1, 3)), "c": group * cg, "f": group * fg, "group": group,
            "kernel": kernel, "strides": strides, "dilations": dilations, "bias": bool(rng.random() < 0.5)}
    if rng.random() < 0.1:
        case["auto_pad"] = str(rng.choice(["SAME_UPPER", "SAME_LOWER", "VALID"]))
        case["pads"] = [0] * (2 * nsp)
    else:
        case["pads"] = _pads(rng, nsp, extents, limit_half=False)
    case["spatial"] = _spatial(rng, nsp, extents)
    return case


def draw_convtranspose(rng):
    nsp = 1 if rng.random() < 0.2 else 2
    kind = rng.choice(["dense", "grouped", "depthwise"])
    if kind == "dense":
        group, cg, fg = 1, int(rng.integers(1, 17)), int(rng.integers(1, 17))
    elif kind == "grouped":
        group, cg, fg = int(rng.integers(2, 9)), int(rng.integers(1, 9)), int(rng.integers(1, 9))
    else:
        group, cg, fg = int(rng.integers(2, 33)), 1, 1
    kernel = [int(rng.integers(1, 6)) for _ in range(nsp)]
    strides = [_small(rng, 3) for _ in range(nsp)]
    dilations = [_small(rng, 2, p_one=0.7) for _ in range(nsp)]
    extents = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    # output_padding must be below the stride or the dilation (ONNX and PyTorch).
    out_pad = [int(rng.integers(0, max(s, d))) if rng.random() < 0.3 else 0 for s, d in zip(strides, dilations)]
    return {"op": "ConvTranspose", "n": int(rng.integers(1, 3)), "c": group * cg, "f": group * fg, "group": group,
            "kernel": kernel, "strides": strides, "dilations": dilations, "bias": bool(rng.random() < 0.5),
            "output_padding": out_pad, "pads": _pads(rng, nsp, extents, limit_half=False),
            "spatial": [int(rng.integers(1, 12)) for _ in range(nsp)]}


def convtranspose_out(case):
    nsp = len(case["spatial"])
    return [case["strides"][i] * (case["spatial"][i] - 1) + case["output_padding"][i] +
            (case["kernel"][i] - 1) * case["dilations"][i] + 1 - case["pads"][i] - case["pads"][i + nsp]
            for i in range(nsp)]


def draw_pool(rng):
    nsp = 1 if rng.random() < 0.15 else 2
    op = str(rng.choice(["MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"], p=[0.45, 0.45, 0.05, 0.05]))
    case = {"op": op, "n": int(rng.integers(1, 3)), "c": int(rng.integers(1, 49))}
    if op.startswith("Global"):
        case["spatial"] = [int(rng.integers(1, 20)) for _ in range(nsp)]
        return case
    kernel = [int(rng.integers(1, 8)) for _ in range(nsp)]
    if nsp == 2 and rng.random() < 0.5:
        kernel[1] = kernel[0]
    dilations = [_small(rng, 3, p_one=0.7) for _ in range(nsp)] if op == "MaxPool" else [1] * nsp
    extents = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    case.update({"kernel": kernel, "strides": [_small(rng, 3) for _ in range(nsp)], "dilations": dilations,
                 "pads": _pads(rng, nsp, extents, limit_half=True), "ceil_mode": int(rng.random() < 0.3)})
    if op == "AveragePool":
        case["count_include_pad"] = int(rng.random() < 0.5)
    case["spatial"] = _spatial(rng, nsp, extents)
    return case


def window_out(size, kernel, stride, dilation, pb, pe, ceil_mode=0):
    """ONNX's output size of one spatial dimension (with PyTorch's rule that a ceil_mode window
    must start inside the input or its left padding); None where no window fits."""
    extent = (kernel - 1) * dilation + 1
    span = size + pb + pe - extent
    if span < 0:
        return None
    out = (-(-span // stride) if ceil_mode else span // stride) + 1
    if ceil_mode and (out - 1) * stride >= size + pb:
        out -= 1
    return out


def resolve_pads(case):
    """The explicit pads of a case, auto_pad resolved as ONNX defines it."""
    nsp = len(case["spatial"])
    auto = case.get("auto_pad")
    if auto in (None, "NOTSET"):
        return list(case["pads"])
    if auto == "VALID":
        return [0] * (2 * nsp)
    begin, end = [], []
    for i in range(nsp):
        extent = (case["kernel"][i] - 1) * case["dilations"][i] + 1
        out = -(-case["spatial"][i] // case["strides"][i])
        total = max(0, (out - 1) * case["strides"][i] + extent - case["spatial"][i])
        small = total // 2
        begin.append(small if auto == "SAME_UPPER" else total - small)
        end.append(total - begin[-1])
    return begin + end


def macs(case):
    """Multiply-adds of a case (or None when its window does not fit the padded input)."""
    nsp = len(case["spatial"])
    if case["op"].startswith("Global"):
        return case["n"] * case["c"] * int(np.prod(case["spatial"]))
    if case["op"] == "ConvTranspose":
        if any(o < 1 for o in convtranspose_out(case)):
            return None
        return (case["n"] * case["c"] * int(np.prod(case["spatial"])) * (case["f"] // case["group"]) *
                int(np.prod(case["kernel"])))
    pads = resolve_pads(case)
    outs = [window_out(case["spatial"][i], case["kernel"][i], case["strides"][i], case["dilations"][i],
                       pads[i], pads[i + nsp], case.get("ceil_mode", 0)) for i in range(nsp)]
    if any(o is None or o < 1 for o in outs):
        return None
    per_out = int(np.prod(case["kernel"])) * (case["c"] // case["group"] if case["op"] == "Conv" else 1)
    return case["n"] * case.get("f", case["c"]) * int(np.prod(outs)) * per_out


def every_window_reads_input(case):
    """Whether every window of a pooling has a tap inside the input. (A window of padding alone
    has no agreed value: PyTorch gives -inf, ONNX Runtime the lowest float.)"""
    if case["op"] not in ("MaxPool", "AveragePool"):
        return True
    nsp = len(case["spatial"])
    pads = resolve_pads(case)
    for i in range(nsp):
        size, k, s, d = case["spatial"][i], case["kernel"][i], case["strides"][i], case["dilations"][i]
        out = window_out(size, k, s, d, pads[i], pads[i + nsp], case.get("ceil_mode", 0))
        p = np.arange(out)[:, None] * s - pads[i] + np.arange(k)[None, :] * d
        if not ((p >= 0) & (p < size)).any(axis=1).all():
            return False
    return True


def draw(seed, index):
    """Case `index` of run `seed`: the same case on every machine."""
    rng = np.random.default_rng([seed, index])
    while True:
        u = rng.random()
        case = draw_conv(rng) if u < 0.55 else draw_convtranspose(rng) if u < 0.75 else draw_pool(rng)
        m = macs(case)
        if m is not None and m <= MAX_MACS and every_window_reads_input(case):
            return case


# --- Data and references -------------------------------------------------------------------

def case_data(case, seed):
    """Input, weight and bias arrays of a case (float32, uniform in [-1, 1])."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, [case["n"], case["c"]] + case["spatial"]).astype(np.float32)
    if case["op"] not in ("Conv", "ConvTranspose"):
        return x, None, None
    wshape = ([case["f"], case["c"] // case["group"]] if case["op"] == "Conv"
              else [case["c"], case["f"] // case["group"]])
    w = rng.uniform(-1, 1, wshape + case["kernel"]).astype(np.float32)
    b = rng.uniform(-1, 1, [case["f"]]).astype(np.float32) if case["bias"] else None
    return x, w, b


def conv_ref(case, x, w, b):
    nsp = len(case["spatial"])
    pads = resolve_pads(case)
    # F.pad takes (last dim begin, last dim end, previous dim begin, ...).
    torch_pads = []
    for i in reversed(range(nsp)):
        torch_pads += [pads[i], pads[i + nsp]]
    xt = F.pad(torch.from_numpy(x).double(), torch_pads)
    bt = torch.from_numpy(b).double() if b is not None else None
    conv = F.conv1d if nsp == 1 else F.conv2d
    return conv(xt, torch.from_numpy(w).double(), bt, stride=case["strides"], dilation=case["dilations"],
                groups=case["group"]).numpy()


def convtranspose_ref(case, x, w, b):
    """PyTorch's conv_transpose without padding, then ONNX's output_padding (zeros at the end)
    and pads (a crop on each side), then the bias."""
    nsp = len(case["spatial"])
    conv = F.conv_transpose1d if nsp == 1 else F.conv_transpose2d
    y = conv(torch.from_numpy(x).double(), torch.from_numpy(w).double(), None, stride=case["strides"],
             dilation=case["dilations"], groups=case["group"])
    grow = []
    for i in reversed(range(nsp)):
        grow += [0, case["output_padding"][i]]
    y = F.pad(y, grow).numpy()
    index = [slice(None), slice(None)]
    for i in range(nsp):
        index.append(slice(case["pads"][i], y.shape[2 + i] - case["pads"][i + nsp]))
    y = y[tuple(index)]
    if b is not None:
        y = y + b.astype(np.float64).reshape([-1] + [1] * nsp)
    return y


def pool_ref_numpy(case, x):
    """ONNX's MaxPool / AveragePool by gathering every window's taps."""
    nsp = len(case["spatial"])
    x = x.astype(np.float64)
    pads = resolve_pads(case)
    positions, valid, counted = [], [], []
    for i in range(nsp):
        size, k, s, d = case["spatial"][i], case["kernel"][i], case["strides"][i], case["dilations"][i]
        pb, pe = pads[i], pads[i + nsp]
        out = window_out(size, k, s, d, pb, pe, case.get("ceil_mode", 0))
        p = np.arange(out)[:, None] * s - pb + np.arange(k)[None, :] * d  # [out, k]
        positions.append(np.clip(p, 0, size - 1))
        valid.append((p >= 0) & (p < size))
        # count_include_pad counts the taps inside the padded input, not those past its end.
        counted.append((p >= -pb) & (p < size + pe) if case.get("count_include_pad") else valid[-1])
    if nsp == 1:
        taps = x[:, :, positions[0]]  # [n, c, o, k]
        mask = valid[0]
        count = counted[0].sum(axis=1)
        axes = (3,)
    else:
        taps = x[:, :, positions[0][:, :, None, None], positions[1][None, None, :, :]]  # [n, c, o0, k0, o1, k1]
        mask = valid[0][:, :, None, None] & valid[1][None, None, :, :]
        count = counted[0].sum(axis=1)[:, None] * counted[1].sum(axis=1)[None, :]
        axes = (3, 5)
    if case["op"] == "MaxPool":
        return np.where(mask, taps, -np.inf).max(axis=axes)
    return np.where(mask, taps, 0.0).sum(axis=axes) / count


def pool_ref_torch(case, x):
    """PyTorch's pooling where it expresses the case (symmetric pads at most half the kernel;
    AveragePool without dilation), else None."""
    nsp = len(case["spatial"])
    pads = resolve_pads(case)
    if pads[:nsp] != pads[nsp:] or any(pads[i] > case["kernel"][i] // 2 for i in range(nsp)):
        return None
    xt = torch.from_numpy(x).double()
    args = dict(kernel_size=case["kernel"], stride=case["strides"], padding=pads[:nsp],
                ceil_mode=bool(case.get("ceil_mode", 0)))
    if case["op"] == "MaxPool":
        pool = F.max_pool1d if nsp == 1 else F.max_pool2d
        return pool(xt, dilation=case["dilations"], **args).numpy()
    pool = F.avg_pool1d if nsp == 1 else F.avg_pool2d
    return pool(xt, count_include_pad=bool(case["count_include_pad"]), **args).numpy()


def reference(case, x, w, b):
    if case["op"] == "Conv":
        return conv_ref(case, x, w, b)
    if case["op"] == "ConvTranspose":
        return convtranspose_ref(case, x, w, b)
    axes = tuple(range(2, x.ndim))
    if case["op"] == "GlobalAveragePool":
        return x.astype(np.float64).mean(axis=axes, keepdims=True)
    if case["op"] == "GlobalMaxPool":
        return x.astype(np.float64).max(axis=axes, keepdims=True)
    ref = pool_ref_numpy(case, x)
    check = pool_ref_torch(case, x)
    if check is not None and (check.shape != ref.shape or not np.allclose(check, ref, rtol=1e-12, atol=1e-12)):
        raise AssertionError(f"the NumPy pooling reference disagrees with PyTorch on {json.dumps(case)}")
    return ref


# --- Models --------------------------------------------------------------------------------

def node_of(case, i, inits, data):
    x, w, b = data
    attrs = {}
    if case["op"] in ("Conv", "ConvTranspose"):
        inits.append(numpy_helper.from_array(w, f"w{i}"))
        inputs = [f"x{i}", f"w{i}"]
        if b is not None:
            inits.append(numpy_helper.from_array(b, f"b{i}"))
            inputs.append(f"b{i}")
        attrs = {"group": case["group"], "kernel_shape": case["kernel"], "strides": case["strides"],
                 "dilations": case["dilations"]}
        if case["op"] == "ConvTranspose":
            attrs["output_padding"] = case["output_padding"]
    else:
        inputs = [f"x{i}"]
        if not case["op"].startswith("Global"):
            attrs = {"kernel_shape": case["kernel"], "strides": case["strides"], "ceil_mode": case["ceil_mode"]}
            if case["op"] == "MaxPool":
                attrs["dilations"] = case["dilations"]
            else:
                attrs["count_include_pad"] = case["count_include_pad"]
    if "kernel" in case:
        if case.get("auto_pad"):
            attrs["auto_pad"] = case["auto_pad"]
        else:
            attrs["pads"] = case["pads"]
    return helper.make_node(case["op"], inputs, [f"y{i}"], name=f"case{i}", **attrs)


def build_model(entries):
    """entries: [(label, case, (x, w, b), ref)]: one model computing every case."""
    nodes, inits, vin, vout = [], [], [], []
    for i, (_, case, data, ref) in enumerate(entries):
        nodes.append(node_of(case, i, inits, data))
        vin.append(helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, list(data[0].shape)))
        vout.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, list(ref.shape)))
    graph = helper.make_graph(nodes, "windows", vin, vout, initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


class Runner:
    """Compiles and runs a model through the tools (or the Python package, in process)."""

    def __init__(self, args, tmp):
        self.bin, self.tmp = args.bin, tmp
        self.target, self.target_cpu = args.target, args.target_cpu
        self.hexir = None
        if args.python:
            sys.path.insert(0, args.python)
            import hexir
            self.hexir = hexir

    def run(self, model, inputs, outputs):
        """(results, None) or (None, the error)."""
        path = os.path.join(self.tmp, "windows.onnx")
        onnx.save(model, path)
        if self.hexir is not None:
            try:
                exe = self.hexir.compile(path, target=self.target, target_cpu=self.target_cpu or "host")
                return self.hexir.load(exe).session().run(inputs), None
            except self.hexir.Error as e:
                return None, str(e)
        hxb = os.path.join(self.tmp, "windows.hxb")
        cmd = [os.path.join(self.bin, "hexir-compile"), path, "-o", hxb, "--target", self.target]
        if self.target_cpu:
            cmd += ["--target-cpu", self.target_cpu]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            return None, "hexir-compile: " + r.stderr.strip()
        cmd = [os.path.join(self.bin, "hexir-run"), hxb]
        for k, v in inputs.items():
            np.save(os.path.join(self.tmp, k + ".npy"), v)
            cmd += ["--input", f"{k}={os.path.join(self.tmp, k + '.npy')}"]
        for k in outputs:
            cmd += ["--output", f"{k}={os.path.join(self.tmp, 'out.' + k + '.npy')}"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            return None, "hexir-run: " + r.stderr.strip()
        return {k: np.load(os.path.join(self.tmp, "out." + k + ".npy")) for k in outputs}, None


def mismatch(got, ref):
    """Why `got` is not `ref` (None if it is)."""
    got = np.asarray(got)
    if got.shape != ref.shape:
        return f"shape {list(got.shape)}, expected {list(ref.shape)}"
    if not np.all(np.isfinite(got)):
        return "non-finite values"
    scale = float(np.abs(ref).max())
    err = float(np.abs(got.astype(np.float64) - ref).max())
    if err > TOLERANCE * scale + 1e-6:
        return f"max|diff| {err:.3e} = {err / max(scale, 1e-30):.3g} of max|ref| {scale:.3g}"
    return None


def check_batch(runner, entries, failures):
    inputs = {f"x{i}": e[2][0] for i, e in enumerate(entries)}
    outputs = [f"y{i}" for i in range(len(entries))]
    results, error = runner.run(build_model(entries), inputs, outputs)
    if results is None:
        if len(entries) > 1:  # find the case that does not compile
            for e in entries:
                check_batch(runner, [e], failures)
            return
        label, case = entries[0][:2]
        failures.append((label, case, "refused or failed: " + error.splitlines()[-1][:300] if error else "failed"))
        return
    for i, (label, case, _, ref) in enumerate(entries):
        why = mismatch(results[f"y{i}"], ref)
        if why:
            failures.append((label, case, why))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", required=True)
    p.add_argument("--python", help="the hexir Python package's folder: compile and run in process")
    p.add_argument("--target", default="host")
    p.add_argument("--target-cpu")
    p.add_argument("--seed", type=int, help="replay this run (default: a fresh seed)")
    p.add_argument("--case", type=int, help="with --seed: only this case")
    p.add_argument("--count", type=int, default=400, help="random cases (default 400)")
    p.add_argument("--time-box", type=float, default=120, help="stop drawing batches after this many seconds")
    p.add_argument("--batch", type=int, default=12, help="cases per model")
    p.add_argument("--no-regressions", action="store_true", help="skip the kept regression cases")
    args = p.parse_args()
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    where = args.target + (f" --target-cpu {args.target_cpu}" if args.target_cpu else "")
    print(f"random_windows: seed {seed} ({where}); replay with --seed {seed} [--case K]", flush=True)

    work = []  # (label, case, data seed)
    if not args.no_regressions and args.case is None:
        for k, case in enumerate(json.load(open(REGRESSIONS))):
            work.append((f"regression {k} ({case.get('found', '')})", {x: v for x, v in case.items() if x != "found"},
                         1_000_003 + k))
    indices = [args.case] if args.case is not None else range(args.count)
    for k in indices:
        work.append((f"case {k} of seed {seed}", draw(seed, k), seed * 7919 + k))

    start = time.time()
    failures, done, random_done, stopped = [], 0, 0, False
    with tempfile.TemporaryDirectory() as tmp:
        runner = Runner(args, tmp)
        for first in range(0, len(work), args.batch):
            chunk = work[first:first + args.batch]
            if time.time() - start > args.time_box and not chunk[0][0].startswith("regression"):
                stopped = True
                break
            entries = []
            for label, case, data_seed in chunk:
                data = case_data(case, data_seed)
                entries.append((label, case, data, reference(case, *data)))
            check_batch(runner, entries, failures)
            done += len(chunk)
            random_done += sum(1 for e in chunk if not e[0].startswith("regression"))
    counts = {}
    for _, case, _ in work[:done]:
        counts[case["op"]] = counts.get(case["op"], 0) + 1
    for label, case, why in failures:
        print(f"FAIL {label}: {why}\n     {json.dumps(case)}")
    print(f"random_windows: seed {seed}: {done - len(failures)} passed, {len(failures)} failed of {done} cases "
          f"({random_done} random{', time box reached' if stopped else ''}; "
          + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + f") in {time.time() - start:.0f} s")
    if failures:
        print("Keep each failing case in tests/onnx/window_regressions.json once it is fixed.")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
