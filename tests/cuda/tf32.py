#!/usr/bin/python3
"""TF32 tensor cores (--allow-tf32) through the CUDA code generator, without a GPU.

Each case is an ONNX graph of a matrix product (MatMul, Gemm with bias and ReLU, convolutions
whose output pixels, channels or reduction are not multiples of the 16x8x8 mma shape, a
full-size resnet stem, and a depthwise convolution, which keeps the FMA path). For --target cuda --allow-tf32 the PTX must
hold mma.sync of TF32 (and the first case none without the flag); ptxas assembles it where a
toolkit exists.
For the cuda-emulator targets (forward and reversed thread order) the outputs must equal a
NumPy reference that rounds both inputs to TF32 as cvt.rna.tf32.f32 does and sums in float64,
within 2e-6 of max |ref| (f32 accumulation), while differing from the f32 product by more than
that: the rounding is modelled, not skipped. Without the flag the first case's emulated output
equals the f32 product instead.

A whole test model (mobilenet_v2) compiled with --allow-tf32: no kernel of its PTX
spills (ptxas -v, where a toolkit exists), and the emulated output is within TF32's error of
PyTorch's f32 outputs (1e-3 of max |ref|).

Usage: tf32.py --bin BUILD/tools
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TIGHT = 2e-6  # of max |ref|: f32 sums of exact TF32 products
MODELS = ["mobilenet_v2"]  # (convolutions, a classifier Gemm; the cases above cover MatMul)
MODEL_TOLERANCE = 1e-3  # of max |ref|: TF32 rounding through a whole network (measured 2e-4)


def tf32(x):
    """x rounded to 10 mantissa bits, to nearest, ties away from zero (cvt.rna.tf32.f32)."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x1000) & 0xFFFFE000).astype(np.uint32)
    return rounded.view(np.float32)


def conv_ref(x, w, bias, pads, strides, group, relu):
    """NCHW convolution in float64 by explicit loops over the kernel window."""
    n, c, h, wd = x.shape
    f, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (xp.shape[2] - kh) // strides[0] + 1
    ow = (xp.shape[3] - kw) // strides[1] + 1
    out = np.zeros((n, f, oh, ow))
    fg = f // group
    for g in range(group):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i:i + strides[0] * oh:strides[0], j:j + strides[1] * ow:strides[1]]
                out[:, g * fg:(g + 1) * fg] += np.einsum("nchw,fc->nfhw", patch, w[g * fg:(g + 1) * fg, :, i, j])
    out += bias.reshape(1, -1, 1, 1)
    return np.maximum(out, 0) if relu else out


def model(nodes, inputs, output, inits):
    graph = helper.make_graph(nodes, "tf32", inputs, [output], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def cases(rng):
    """(name, model, feeds, reference(round) -> float64 output, uses tensor cores)."""
    out = []
    # A plain matmul (blocks of 64x64, K in steps of 16).
    a = rng.standard_normal((256, 192)).astype(np.float32)
    b = rng.standard_normal((192, 128)).astype(np.float32)
    m = model([helper.make_node("MatMul", ["a", "b"], ["y"])],
              [helper.make_tensor_value_info("a", TensorProto.FLOAT, a.shape),
               helper.make_tensor_value_info("b", TensorProto.FLOAT, b.shape)],
              helper.make_tensor_value_info("y", TensorProto.FLOAT, None), [])
    out.append(("matmul", m, {"a": a, "b": b},
                lambda r: r(a).astype(np.float64) @ r(b).astype(np.float64), True))
    # Gemm with a constant weight, bias and ReLU: 197 rows (blocks of 16, the last one shifted
    # back: StageContractions), 72 columns.
    x = rng.standard_normal((197, 96)).astype(np.float32)
    w = rng.standard_normal((72, 96)).astype(np.float32)
    bias = rng.standard_normal(72).astype(np.float32)
    m = model([helper.make_node("Gemm", ["x", "w", "bias"], ["g"], transB=1), helper.make_node("Relu", ["g"], ["y"])],
              [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
              helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
              [numpy_helper.from_array(w, "w"), numpy_helper.from_array(bias, "bias")])
    out.append(("gemm_relu", m, {"x": x},
                lambda r, x=x, w=w, bias=bias: np.maximum(r(x).astype(np.float64) @ r(w).astype(np.float64).T + bias, 0),
                True))
    # Convolutions: 3x3 over 32 channels at 14x14 (7x7 pixel blocks: rows padded to 16s),
    # a strided 3-channel stem (K = 27 per step, padded to 32) and a depthwise one (FMA path).
    for name, (c, f, size, k, stride, pad, group, tc) in {
            "conv3x3": (32, 64, 14, 3, 1, 1, 1, True),
            "conv_stem": (3, 32, 32, 3, 2, 1, 1, True),
            "conv_depthwise": (32, 32, 14, 3, 1, 1, 32, False),
            # resnet's stem at 224x224: 4096-output blocks of a 7x7x3 window, whose emulated
            # block (shared memory and 256 threads' fragments) outgrew a host kernel's 64 KiB stack.
            "conv_stem7x7_224": (3, 64, 224, 7, 2, 3, 1, True)}.items():
        x = rng.standard_normal((1, c, size, size)).astype(np.float32)
        w = (rng.standard_normal((f, c // group, k, k)) / np.sqrt(c * k * k / group)).astype(np.float32)
        bias = rng.standard_normal(f).astype(np.float32)
        pads, strides = [pad] * 4, [stride] * 2
        m = model([helper.make_node("Conv", ["x", "w", "bias"], ["c"], pads=pads, strides=strides, group=group),
                   helper.make_node("Relu", ["c"], ["y"])],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                  helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                  [numpy_helper.from_array(w, "w"), numpy_helper.from_array(bias, "bias")])
        out.append((name, m, {"x": x},
                    lambda r, x=x, w=w, bias=bias, pads=pads, strides=strides, group=group: conv_ref(
                        r(x).astype(np.float64), r(w).astype(np.float64), bias, pads, strides, group, True), tc))
    return out


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def emulate(bin_dir, onnx_path, feeds, target, flags, tmp, output="y"):
    exe = onnx_path + "." + target + ("".join(flags)) + ".hxb"
    rc, text = run([os.path.join(bin_dir, "hexir-compile"), onnx_path, "--target", target, "-o", exe] + flags)
    if rc != 0:
        raise RuntimeError(f"hexir-compile --target {target} {flags} failed:\n{text}")
    cmd = [os.path.join(bin_dir, "hexir-run"), exe, "--output", f"{output}={exe}.y.npy", "--threads", "2"]
    for name, value in feeds.items():
        path = os.path.join(tmp, name + ".npy")
        np.save(path, value)
        cmd += ["--input", f"{name}={path}"]
    rc, text = run(cmd)
    if rc != 0:
        raise RuntimeError(f"hexir-run ({target} {flags}) failed:\n{text}")
    return np.load(exe + ".y.npy").astype(np.float64)


def spills(ptxas, dump, path):
    """ptxas -v on the PTX of a `hexir-dump --ptx` text: the kernels that spill (or the error)."""
    body = dump.split("PTX (", 1)[1].split("\n", 1)[1].split("\nfunction ", 1)[0] if "PTX (" in dump else ""
    with open(path, "w") as f:
        f.write(body)
    rc, text = run([ptxas, "-v", "-arch=sm_90", path, "-o", path + ".cubin"])
    if rc != 0:
        return [text.strip()[:300]]
    bad, kernel = [], None
    for line in text.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            kernel = m.group(1)
        m = re.search(r"(\d+) bytes spill stores", line)
        if m and int(m.group(1)) > 0:
            bad.append(kernel)
    return bad


def check_models(bin_dir, ptxas, tmp, failures):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "onnx"))
    import models  # noqa: E402
    for name in MODELS:
        path = os.path.join(tmp, name + ".onnx")
        input_name, x, ref = models.export(name, path)
        if ptxas:
            exe = path + ".cuda.hxb"
            rc, text = run([os.path.join(bin_dir, "hexir-compile"), path, "--target", "cuda", "--allow-tf32", "-o", exe])
            if rc != 0:
                failures.append(f"{name}: hexir-compile --target cuda --allow-tf32 failed:\n{text}")
                continue
            bad = spills(ptxas, run([os.path.join(bin_dir, "hexir-dump"), "--ptx", exe])[1], exe + ".ptx")
            if bad:
                failures.append(f"{name}: kernels that spill with --allow-tf32: {bad[:5]}")
        try:
            got = emulate(bin_dir, path, {input_name: x}, "cuda-emulator", ["--allow-tf32"], tmp, output="output")
        except RuntimeError as e:
            failures.append(f"{name}: {e}")
            continue
        err = float(np.abs(got - ref).max()) / float(np.abs(ref).max())
        print(f"{name} (cuda-emulator, --allow-tf32): |hexir - PyTorch f32| {err:.2e} of max |ref|")
        if got.shape != ref.shape or not err <= MODEL_TOLERANCE:
            failures.append(f"{name}: off PyTorch by {err:.2e} of max |ref| (TF32 allows {MODEL_TOLERANCE})")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--bin", required=True)
    args = p.parse_args()
    rng = np.random.default_rng(7)
    ptxas = shutil.which("ptxas") or ("/usr/local/cuda/bin/ptxas" if os.path.exists("/usr/local/cuda/bin/ptxas") else None)
    failures = []
    identity = lambda v: v  # noqa: E731
    with tempfile.TemporaryDirectory() as tmp:
        # The flag means tensor cores: refused where there are none.
        for k, (name, m, feeds, reference, tensor_cores) in enumerate(cases(rng)):
            path = os.path.join(tmp, name + ".onnx")
            onnx.save(m, path)
            if k == 0:
                rc, text = run([os.path.join(args.bin, "hexir-compile"), path, "--target", "host", "--allow-tf32", "-o",
                                os.path.join(tmp, "x.hxb")])
                if rc == 0 or "--allow-tf32" not in text:
                    failures.append(f"--target host --allow-tf32 is not refused by name: {text.strip()[:200]}")
            # PTX: mma.sync of TF32 with the flag; none without it (checked once: the flag's default).
            for flags, want in ((["--allow-tf32"], tensor_cores), ([], False))[:2 if k == 0 else 1]:
                exe = path + ".cuda" + "".join(flags) + ".hxb"
                rc, text = run([os.path.join(args.bin, "hexir-compile"), path, "--target", "cuda", "-o", exe] + flags)
                if rc != 0:
                    failures.append(f"{name}: hexir-compile --target cuda {flags} failed:\n{text}")
                    continue
                ptx = run([os.path.join(args.bin, "hexir-dump"), "--ptx", exe])[1]
                mmas = ptx.count("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32")
                if (mmas > 0) != want:
                    failures.append(f"{name} {flags}: {mmas} TF32 mma.sync in the PTX, expected {'some' if want else 'none'}")
                if mmas and "cvt.rna.tf32.f32" not in ptx:
                    failures.append(f"{name}: mma.sync without cvt.rna.tf32.f32 of its inputs")
                if ptxas and flags:
                    bad = spills(ptxas, ptx, exe + ".ptx")
                    if bad:
                        failures.append(f"{name}: ptxas: kernels that spill or an error: {bad}")
            exact = reference(identity)
            rounded = reference(tf32)
            scale = max(float(np.abs(rounded).max()), 1.0)
            for target in ("cuda-emulator", "cuda-emulator-reversed"):
                try:
                    got = emulate(args.bin, path, feeds, target, ["--allow-tf32"], tmp)
                except RuntimeError as e:
                    failures.append(f"{name}: {e}")
                    continue
                want = rounded if tensor_cores else exact
                err = float(np.abs(got - want).max()) / scale
                gap = float(np.abs(rounded - exact).max()) / scale
                print(f"{name} ({target}, --allow-tf32): |hexir - tf32 ref| {float(np.abs(got - rounded).max()) / scale:.2e},"
                      f" |hexir - f32 ref| {float(np.abs(got - exact).max()) / scale:.2e} of max |ref|")
                if got.shape != want.shape or err > TIGHT:
                    failures.append(f"{name} ({target}): off the {'TF32' if tensor_cores else 'f32'} reference by {err:.2e}")
                if tensor_cores and gap <= 4 * TIGHT:
                    failures.append(f"{name}: TF32 and f32 references too close ({gap:.2e}) to tell them apart")
            if k == 0:  # without the flag: the f32 product (the FMA path; every other emulator test runs it)
                got = emulate(args.bin, path, feeds, "cuda-emulator", [], tmp)
                err = float(np.abs(got - exact).max()) / scale
                if err > TIGHT:
                    failures.append(f"{name}: without --allow-tf32, off the f32 reference by {err:.2e}")
        check_models(args.bin, ptxas, tmp, failures)
    for f in failures:
        print("FAIL:", f)
    print("tf32: ok" if not failures else f"tf32: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
