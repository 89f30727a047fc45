#!/usr/bin/python3
"""Full-size CNNs (224x224, batch 1) through the CUDA code generator, without a GPU.

The test models are small (64x64); a full-size image gives the kernels other tile shapes, and
one of them (mobilenet_v2's first convolution, 3 input channels) read shared memory misaligned
on an H200. For each model: exported once with PyTorch's output (tests/onnx/models.py, full
size), compiled for --target cuda and checked as tests/cuda/compile_all.py checks (PTX for the
chip, nothing imported, every shared buffer declared 16-byte aligned, assembled by ptxas where a
toolkit happens to exist), then compiled for the cuda-emulator target, whose kernels check the
alignment of every vector access as the GPU would, run on this CPU and compared with PyTorch.

Usage: full_size_models.py --bin BUILD/tools [--models mobilenet_v2,resnet18,efficientnet_b0]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "onnx"))
sys.path.insert(0, HERE)
import compile_all  # noqa: E402
import models  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5
MODELS = ["mobilenet_v2", "resnet18", "efficientnet_b0"]


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def check_model(name, bin_dir, ptxas, tmp):
    """Returns a list of problems."""
    base = os.path.join(tmp, name)
    t0 = time.time()
    _, x, ref = models.export(name, base + ".onnx", full=True)
    np.save(base + ".input.npy", x)
    t1 = time.time()
    problems = []
    cuda = base + ".cuda.hxb"
    rc, out = run([os.path.join(bin_dir, "hexir-compile"), base + ".onnx", "--target", "cuda", "-o", cuda])
    if rc != 0:
        return [f"hexir-compile --target cuda failed:\n{out}"]
    found, dispatches, _ = compile_all.check(name, cuda, bin_dir, "sm_90", ptxas, tmp)
    problems += found
    ptx = run([os.path.join(bin_dir, "hexir-dump"), "--ptx", cuda])[1]
    unaligned = sorted(set(re.findall(r"\.shared \.align ([0-9]+) ", ptx)) - {"16"})
    if unaligned:
        problems.append(f"shared memory declared {unaligned}-byte aligned, not 16")
    emu = base + ".emu.hxb"
    rc, out = run([os.path.join(bin_dir, "hexir-compile"), base + ".onnx", "--target", "cuda-emulator", "-o", emu])
    if rc != 0:
        return problems + [f"hexir-compile --target cuda-emulator failed:\n{out}"]
    t2 = time.time()
    rc, out = run([os.path.join(bin_dir, "hexir-run"), emu, "--input", "input=" + base + ".input.npy", "--output",
                   "output=" + base + ".out.npy", "--threads", "2"])
    if rc != 0:
        return problems + [f"hexir-run failed on the emulator:\n{out}"]
    t3 = time.time()
    got = np.load(base + ".out.npy").astype(np.float64)
    want = ref.astype(np.float64)
    err = np.abs(got - want)
    if got.shape != want.shape or not np.all(err <= ATOL + RTOL * np.abs(want)) or not np.all(np.isfinite(got)):
        problems.append(f"emulated output differs from PyTorch: worst |diff| {float(err.max()):.3e}")
    print(f"{name} 224x224: {dispatches} CUDA kernels, worst |diff| {float(err.max()):.2e} "
          f"(max |ref| {float(np.abs(want).max()):.3g}); export {t1 - t0:.1f} s, compile {t2 - t1:.1f} s, "
          f"emulated run {t3 - t2:.2f} s")
    return problems


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--bin", required=True)
    p.add_argument("--models", default=",".join(MODELS))
    args = p.parse_args()
    ptxas = compile_all.ptxas_path()
    failed = 0
    with tempfile.TemporaryDirectory(prefix="hexir-cuda-full-") as tmp:
        for name in [m for m in args.models.split(",") if m]:
            problems = check_model(name, args.bin, ptxas, tmp)
            for problem in problems:
                print(f"{name}: {problem}")
            failed += bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
