#!/usr/bin/env python3
"""Several functions in one executable, through the tools: an MLIR input with three functions
(the same dense layer at batch 4 and batch 16, and another layer) compiles into one executable
whose functions run with hexir-run --function and match NumPy; the weights the two batches
share are stored once (the executable's constants equal one function's); --entry selects
functions, and the errors name what exists.
Usage: functions.py --bin BUILD/tools [--target host|cuda-emulator]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

from checks import check, constant_bytes, summary


def hexdense(a):
    return '"0x' + a.astype(np.float32).tobytes().hex().upper() + '"'


def dense_layer(name, n, w, b):
    """relu(x @ w + b) for x: n x K."""
    k, m = w.shape
    return f"""func.func @{name}(%x: tensor<{n}x{k}xf32> {{hexir.name = "x"}}) -> (tensor<{n}x{m}xf32> {{hexir.name = "y"}}) {{
  %w = arith.constant dense<{hexdense(w)}> : tensor<{k}x{m}xf32>
  %b = arith.constant dense<{hexdense(b)}> : tensor<{m}xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<{n}x{m}xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<{n}x{m}xf32>) -> tensor<{n}x{m}xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<{n}x{k}xf32>, tensor<{k}x{m}xf32>) outs(%f : tensor<{n}x{m}xf32>) -> tensor<{n}x{m}xf32>
  %r = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}}
      ins(%mm, %b : tensor<{n}x{m}xf32>, tensor<{m}xf32>) outs(%e : tensor<{n}x{m}xf32>) {{
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %t = arith.maximumf %s, %z : f32
    linalg.yield %t : f32
  }} -> tensor<{n}x{m}xf32>
  return %r : tensor<{n}x{m}xf32>
}}
"""


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--target", default="host")
    args = p.parse_args()
    compile_, run_, dump = (os.path.join(args.bin, t) for t in ("hexir-compile", "hexir-run", "hexir-dump"))
    rng = np.random.default_rng(7)
    w, b = rng.standard_normal((96, 40)).astype(np.float32), rng.standard_normal(40).astype(np.float32)
    w2, b2 = rng.standard_normal((40, 24)).astype(np.float32), rng.standard_normal(24).astype(np.float32)
    layers = {"b4": (4, w, b), "b16": (16, w, b), "head": (8, w2, b2)}
    with tempfile.TemporaryDirectory(prefix="hexir-functions-") as tmp:
        os.chdir(tmp)
        with open("graph.mlir", "w") as f:
            f.write("".join(dense_layer(name, n, ww, bb) for name, (n, ww, bb) in layers.items()))

        def compile_to(out, *extra):
            return subprocess.run([compile_, "graph.mlir", "-o", out, "--target", args.target, *extra],
                                  capture_output=True, text=True)

        r = compile_to("all.hxb")
        check("hexir-compile: three functions into one executable", r.returncode == 0, r.stderr)
        if r.returncode != 0:
            return 1
        listed = re.findall(r"^function (\S+)", subprocess.run([dump, "all.hxb"], capture_output=True,
                                                              text=True).stdout, re.M)
        check("hexir-dump lists every function in the input's order", listed == list(layers), f"{listed}")
        for name, (n, ww, bb) in layers.items():
            x = rng.standard_normal((n, ww.shape[0])).astype(np.float32)
            np.save(f"x_{name}.npy", x)
            r = subprocess.run([run_, "all.hxb", "--function", name, "--input", f"x=x_{name}.npy", "--output",
                                f"y=y_{name}.npy"], capture_output=True, text=True)
            if r.returncode != 0:
                check(f"hexir-run --function {name}", False, r.stderr)
                continue
            want = np.maximum(x.astype(np.float64) @ ww + bb, 0)
            err = float(np.abs(np.load(f"y_{name}.npy") - want).max()) / max(1.0, float(np.abs(want).max()))
            check(f"hexir-run --function {name}: against NumPy (max err / max|ref| {err:.2g})", err < 1e-5)

        def constants(path, function):
            return constant_bytes(run_, path, function)

        # The batches share w and b: the pool holds them once, plus the head's own.
        compile_to("b4.hxb", "--entry", "b4")
        compile_to("batches.hxb", "--entry", "b4", "--entry", "b16")
        compile_to("head.hxb", "--entry", "head")
        one, two, head, whole = (constants("b4.hxb", "b4"), constants("batches.hxb", "b16"),
                                 constants("head.hxb", "head"), constants("all.hxb", "b4"))
        check(f"shared weights stored once: b4 alone {one} bytes, b4 and b16 {two}", one is not None and one == two)
        # (Each constant starts 64-byte aligned: sums of pools differ by padding only.)
        check(f"every function's constants: {whole} bytes, {one} + the head's {head} but for alignment",
              None not in (one, head, whole) and abs(whole - (one + head)) <= 2 * 64)
        listed = re.findall(r"^function (\S+)", subprocess.run([dump, "batches.hxb"], capture_output=True,
                                                              text=True).stdout, re.M)
        check("--entry selects functions (the others are dropped)", listed == ["b4", "b16"], f"{listed}")
        r = compile_to("none.hxb", "--entry", "b8")
        check("--entry of a missing function names the functions there",
              r.returncode != 0 and "no function @b8 in the input (it has @b4, @b16, @head)" in r.stderr
              and not os.path.exists("none.hxb"), r.stderr)
        # The plans of every function: JSON, SVG and the table.
        r = compile_to("plans.hxb", "--plan-json", "plan.json", "--plan-svg", "plan.svg", "--print-plan")
        ok = r.returncode == 0 and os.path.exists("plan.json") and os.path.exists("plan.svg")
        plans = json.load(open("plan.json"))["functions"] if ok else []
        check("--plan-json of several functions gives each plan",
              [p["function"] for p in plans] == list(layers) and all("lower_bound_bytes" in p for p in plans), r.stderr)
        svg = open("plan.svg").read() if ok else ""
        check("--plan-svg draws each function", all(f"@{name}: arena" in svg for name in layers) and
              svg.count("<svg") == 4, svg[:500])
        tables = re.findall(r"arena (\d+) bytes; lower bound", r.stdout)
        check("--print-plan prints a table per function", len(tables) == 3, r.stdout[:1000])
        r = subprocess.run([run_, "all.hxb", "--function", "b8", "--input", "x=x_b4.npy"], capture_output=True, text=True)
        check("hexir-run --function of a missing function names them",
              r.returncode == 1 and "no function 'b8' in the module (it has: b4, b16, head)" in r.stderr, r.stderr)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
