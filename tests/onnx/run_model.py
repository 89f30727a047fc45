#!/usr/bin/python3
"""End-to-end check of one PyTorch model through ONNX and the command-line tools.

Exports the model (tests/onnx/models.py, fixed seed) with PyTorch's reference output, compiles
it with hexir-compile, runs it with hexir-run and requires |hexir - torch| <= 1e-5 + 1e-4 |torch|
elementwise, and the same bits with 1 and 2 threads. Also checks the memory plan: the arena is
no larger than the max-load lower bound.
Usage: run_model.py NAME --bin BUILD/tools [--work DIR]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

RTOL, ATOL = 1e-4, 1e-5


def main():
    p = argparse.ArgumentParser()
    p.add_argument("name")
    p.add_argument("--bin", required=True)
    p.add_argument("--work", help="keep files here instead of a temporary directory")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--target", default="host",
                   help="hexir-compile --target; cuda-emulator runs the CUDA kernels on this CPU")
    args = p.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or tmp
        os.makedirs(work, exist_ok=True)
        base = os.path.join(work, args.name)
        t0 = time.time()
        subprocess.run([sys.executable, os.path.join(here, "make_model.py"), args.name, "--out-dir", work],
                       check=True, stdout=subprocess.DEVNULL)
        t1 = time.time()
        r = subprocess.run([os.path.join(args.bin, "hexir-compile"), base + ".onnx", "-o", base + ".hxb",
                            "--plan-json", base + ".plan.json", "--target", args.target],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stdout + r.stderr)
            print(f"{args.name}: hexir-compile failed")
            return 1
        t2 = time.time()
        r = subprocess.run([os.path.join(args.bin, "hexir-run"), base + ".hxb", "--input", "input=" + base + ".input.npy",
                            "--output", "output=" + base + ".out.npy", "--threads", str(args.threads)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stdout + r.stderr)
            print(f"{args.name}: hexir-run failed")
            return 1
        t3 = time.time()
        out, ref = np.load(base + ".out.npy"), np.load(base + ".ref.npy")
        plan = json.load(open(base + ".plan.json"))
        ok = True
        if out.shape != ref.shape or out.dtype != ref.dtype:
            print(f"{args.name}: output {out.dtype}{out.shape}, PyTorch gives {ref.dtype}{ref.shape}")
            return 1
        err = np.abs(out.astype(np.float64) - ref.astype(np.float64))
        bound = ATOL + RTOL * np.abs(ref.astype(np.float64))
        worst = float(err.max())
        rel = float((err / np.maximum(np.abs(ref), 1e-30)).max())
        if not np.all(err <= bound) or not np.all(np.isfinite(out)):
            print(f"{args.name}: {int((err > bound).sum())} of {err.size} values off; worst |diff| {worst:.3e}")
            ok = False
        print(f"{args.name}: worst |diff| {worst:.2e} (max |ref| {float(np.abs(ref).max()):.3g}); "
              f"arena {plan['arena_bytes']} B, lower bound {plan['lower_bound_bytes']} B "
              f"({plan['lower_bound_before_in_place_bytes']} B before in-place and views), "
              f"naive {plan['naive_bytes']} B, constants {plan['constant_bytes']} B; "
              f"export {t1 - t0:.1f} s, compile {t2 - t1:.1f} s, run {t3 - t2:.2f} s")
        # The reduction order of every output is fixed at compile time: another thread count
        # must give the same bits.
        other = 2 if args.threads == 1 else 1
        r = subprocess.run([os.path.join(args.bin, "hexir-run"), base + ".hxb", "--input", "input=" + base + ".input.npy",
                            "--output", "output=" + base + ".out2.npy", "--threads", str(other)],
                           capture_output=True, text=True)
        if r.returncode != 0 or not np.array_equal(np.load(base + ".out2.npy"), out):
            print(r.stdout + r.stderr)
            print(f"{args.name}: {args.threads} and {other} threads give different results")
            ok = False
        if plan["arena_bytes"] > plan["lower_bound_bytes"]:
            print(f"{args.name}: arena above the lower bound")
            ok = False
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
