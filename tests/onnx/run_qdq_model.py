#!/usr/bin/python3
"""End-to-end check of one S8S8 QDQ model (quantized here) through the command-line tools.

Exports the f32 model (tests/onnx/models.py, test size) and checks the NumPy evaluator on it
against PyTorch's output (within 1e-4 * max|torch|: the reference below is only as good as it),
quantizes it as ONNX Runtime's
quantize_static does (benchmarks/quantize_qdq.py: per-channel int8 weights, per-tensor int8
activations calibrated with min/max on seeded inputs), evaluates the QDQ graph in NumPy
(tests/onnx/onnx_numpy.py) on a fresh seeded input as the reference, and compiles and runs it
with hexir twice:
- --int8-kernels (Conv, MatMul and Gemm on the int8 values, exact int32 sums): within
  1e-4 * max|ref| of the reference and the same argmax (a tie rounded the other way in an
  early layer would exceed this; the models here have none with these seeds), the same bits
  with 1 and 2 threads, and fewer constant bytes than the float one (int8 weights: a quarter,
  less what stays float: biases, embeddings, normalizations);
- the float lowering (weights dequantized at import): the same argmax and within 5% of max|ref|
  (its f32 sums round some quantized activations to the neighbouring step).
Prints the error, sizes and arenas of both.
--activations uint8 quantizes the activations to uint8 (U8S8, ONNX Runtime's QUInt8) instead.
Usage: run_qdq_model.py NAME --bin BUILD/tools [--work DIR] [--target-cpu CPU] [--activations uint8]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "benchmarks"))

import models  # noqa: E402
import onnx_numpy  # noqa: E402
import quantize_qdq  # noqa: E402

INT8_TOL, FLOAT_TOL = 1e-4, 5e-2


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr}")
    return r.stdout


def main():
    p = argparse.ArgumentParser()
    p.add_argument("name")
    p.add_argument("--bin", required=True)
    p.add_argument("--work", help="keep files here instead of a temporary directory")
    p.add_argument("--target-cpu", default="host")
    p.add_argument("--activations", choices=["int8", "uint8"], default="int8",
                   help="quantize the activations to int8 (S8S8) or uint8 (U8S8)")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or tmp
        os.makedirs(work, exist_ok=True)
        base = os.path.join(work, args.name)
        _, x, torch_out = models.export(args.name, base + ".onnx", full=False)
        f32 = onnx.load(base + ".onnx")
        mine = onnx_numpy.run(f32, {f32.graph.input[0].name: x})[f32.graph.output[0].name]
        check = float(np.abs(mine.astype(np.float64) - torch_out).max()) / max(float(np.abs(torch_out).max()), 1e-30)
        print(f"{args.name} f32: max|numpy - torch| / max|torch| {check:.2e}")
        if check > 1e-4:
            sys.exit(f"FAIL the NumPy evaluator differs from PyTorch by {check:.2e}")
        qdq = quantize_qdq.quantize(f32, quantize_qdq.random_feeds(f32, 4, 1),
                                    activation_type=np.uint8 if args.activations == "uint8" else np.int8)
        onnx.save(qdq, base + ".qdq.onnx")
        feed = quantize_qdq.random_feeds(f32, 1, 1234)[0]
        inputs = []
        for name, value in feed.items():
            np.save(f"{base}.in.{name}.npy", value)
            inputs += ["--input", f"{name}={base}.in.{name}.npy"]
        out = qdq.graph.output[0].name
        ref = onnx_numpy.run(qdq, feed, [out])[out].astype(np.float64)
        scale = max(float(np.abs(ref).max()), 1e-30)
        ok = True
        results = {}
        for label, flags, tol in (("int8", ["--int8-kernels"], INT8_TOL), ("float", ["--no-int8-kernels"], FLOAT_TOL)):
            hxb = f"{base}.{label}.hxb"
            plan = run([os.path.join(args.bin, "hexir-compile"), base + ".qdq.onnx", "-o", hxb, "--print-plan",
                        "--target-cpu", args.target_cpu] + flags)
            arena = re.search(r"^  arena (\d+) bytes", plan, re.M)
            constants = int(re.search(r"^  constants (\d+) bytes stored", plan, re.M).group(1))
            got = {}
            for threads in (1, 2):
                run([os.path.join(args.bin, "hexir-run"), hxb, "--threads", str(threads), "--output",
                     f"{out}={base}.{label}.{threads}.npy"] + inputs)
                got[threads] = np.load(f"{base}.{label}.{threads}.npy")
            y = got[1].astype(np.float64)
            err = float(np.abs(y - ref).max()) / scale
            same_top = bool(np.array_equal(y.reshape(y.shape[0], -1).argmax(-1), ref.reshape(ref.shape[0], -1).argmax(-1)))
            size = os.path.getsize(hxb)
            results[label] = constants
            print(f"{args.name} {label}: max|hexir - numpy| / max|numpy| {err:.2e}, argmax equal {same_top}, "
                  f"executable {size / 1024:.0f} KiB, constants {constants / 1024:.0f} KiB, "
                  f"arena {int(arena.group(1)) / 1024 if arena else float('nan'):.0f} KiB")
            if err > tol or not same_top:
                print(f"FAIL {label}: error {err:.2e} above {tol:.0e} or argmax differs")
                ok = False
            if label == "int8" and not np.array_equal(got[1], got[2]):
                print("FAIL int8: 1 and 2 threads differ")
                ok = False
        print(f"{args.name}: int8 constants / float constants {results['int8'] / results['float']:.2f}")
        if results["int8"] >= results["float"]:
            print(f"FAIL int8 constants {results['int8']} bytes are not fewer than the float ones' {results['float']}")
            ok = False
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
