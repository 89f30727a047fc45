#!/usr/bin/python3
"""End-to-end check of one model compiled with --precision bf16, through the command-line tools.

Exports the f32 model (tests/onnx/models.py, test size), evaluates it in NumPy as --precision
bf16 specifies (tests/onnx/onnx_numpy.py, bf16=True: the activation and constant weight of each
MatMul, Gemm and Conv rounded to bf16, sums in float64) as the reference, and compiles and runs
it with hexir-compile --precision bf16:
- within 5e-3 * max|ref| of that reference and the same argmax. The kernels sum in f32, so an
  activation within an f32 rounding of a bf16 tie may round the other way than the float64
  reference's and move the output by about 1e-3 (a few in a model; op_cases' bf16 cases check
  single layers exactly);
- the same bits with 1 and 2 threads;
- on a CPU with AVX512-BF16 (no warning from hexir-compile) its constants are smaller than the
  f32 executable's by at least 45% of the contractions' f32 weights (stored in bf16, a little
  padding aside; biases, normalizations and embeddings stay f32); without, the warning says so
  and the constants stay f32.
Prints the error against the f32 model's PyTorch output (the accuracy bf16 costs), sizes and arenas.
Usage: run_bf16_model.py NAME --bin BUILD/tools [--work DIR] [--target-cpu CPU]
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

import models  # noqa: E402
import onnx_numpy  # noqa: E402

TOL = 5e-3


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr}")
    return r


def constants_of(plan):
    return int(re.search(r"^  constants (\d+) bytes stored", plan, re.M).group(1))


def contraction_weight_bytes(model):
    """f32 bytes of the initializers that --precision bf16 stores in bf16 (onnx_numpy's rule)."""
    inits = {t.name: t for t in model.graph.initializer}
    names = set()
    for node in model.graph.node:
        if node.input[1:2] and node.input[1] in inits and \
                onnx_numpy.bf16_operands(node, set(inits), len(inits[node.input[1]].dims)):
            names.add(node.input[1])
    return sum(4 * int(np.prod(inits[n].dims)) for n in names)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("name")
    p.add_argument("--bin", required=True)
    p.add_argument("--work", help="keep files here instead of a temporary directory")
    p.add_argument("--target-cpu", default="host")
    args = p.parse_args()
    compile_tool = os.path.join(args.bin, "hexir-compile")
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or tmp
        os.makedirs(work, exist_ok=True)
        base = os.path.join(work, args.name)
        _, x, torch_out = models.export(args.name, base + ".onnx", full=False)
        f32 = onnx.load(base + ".onnx")
        in_name, out_name = f32.graph.input[0].name, f32.graph.output[0].name
        ref = onnx_numpy.run(f32, {in_name: x}, bf16=True)[out_name].astype(np.float64)
        np.save(base + ".in.npy", x)
        ok = True
        plans = {}
        for label, flags in (("f32", []), ("bf16", ["--precision", "bf16"])):
            r = run([compile_tool, base + ".onnx", "-o", f"{base}.{label}.hxb", "--print-plan",
                     "--target-cpu", args.target_cpu] + flags)
            plans[label] = (r.stdout, r.stderr)
        plan, warnings = plans["bf16"]
        got = {}
        for threads in (1, 2):
            run([os.path.join(args.bin, "hexir-run"), f"{base}.bf16.hxb", "--threads", str(threads),
                 "--input", f"{in_name}={base}.in.npy", "--output", f"{out_name}={base}.{threads}.npy"])
            got[threads] = np.load(f"{base}.{threads}.npy")
        y = got[1].astype(np.float64)
        scale = max(float(np.abs(ref).max()), 1e-30)
        err = float(np.abs(y - ref).max()) / scale
        accuracy = float(np.abs(y - torch_out).max()) / max(float(np.abs(torch_out).max()), 1e-30)
        same_top = bool(np.array_equal(y.reshape(y.shape[0], -1).argmax(-1), ref.reshape(ref.shape[0], -1).argmax(-1)))
        f32_bytes, bf16_bytes = constants_of(plans["f32"][0]), constants_of(plan)
        ratio = bf16_bytes / f32_bytes
        most = f32_bytes - 0.45 * contraction_weight_bytes(f32)
        arena = re.search(r"^  arena (\d+) bytes", plan, re.M)
        native = "no AVX512-BF16" not in warnings
        print(f"{args.name} bf16 ({'bf16 dot products' if native else 'emulated: ' + warnings.strip()}): "
              f"max|hexir - numpy bf16| / max {err:.2e}, argmax equal {same_top}; "
              f"max|hexir - torch f32| / max {accuracy:.2e}; constants bf16 / f32 {ratio:.2f}, "
              f"arena {int(arena.group(1)) / 1024 if arena else float('nan'):.0f} KiB")
        if err > TOL or not same_top:
            print(f"FAIL error {err:.2e} above {TOL:.0e} or argmax differs")
            ok = False
        if not np.array_equal(got[1], got[2]):
            print("FAIL 1 and 2 threads differ")
            ok = False
        if native and bf16_bytes > most:
            print(f"FAIL constants {bf16_bytes} bytes, more than {most:.0f}: the weights are not bf16")
            ok = False
        if not native and ratio != 1.0:
            print(f"FAIL emulated bf16 should keep f32 constants, got {ratio:.2f} of them")
            ok = False
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
