#!/usr/bin/python3
"""f32 GEMM benchmark (not a test): Hexir's compiled matmul kernel against OpenBLAS sgemm and
the FMA peak, single-threaded, in one run of build/benchmarks/gemm_bench.

Writes one MLIR graph per shape, C[M,N] = A[M,K] B[K,N] with A and B as inputs, compiles each
with hexir-compile and runs gemm_bench on all of them (see benchmarks/gemm_bench.cc: results
checked against OpenBLAS, GFLOP/s, Hexir/OpenBLAS, Hexir/peak).

  benchmarks/gemm.py [--shapes 128,256,512,1024,128x768x768,...] [--op generic,linalg,tosa]
                     [--const-b] [--min-time S] [--threads N] [--bin build/tools]
                     [--bench build/benchmarks/gemm_bench] [--work-dir build/gemm] [--smoke]

Shapes: N for N x N x N, or MxNxK. --op: how the graph says matmul: `generic` (default) is the
linalg.generic the ONNX importer makes of MatMul and Gemm, `linalg` linalg.matmul, `tosa`
tosa.matmul (batch 1). --const-b: B is a constant of the graph (weights), written beside the
executable as NAME.b.npy for gemm_bench. --smoke (CI): 64x64x64, short timings.
"""
import argparse
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_SHAPES = "128,256,512,1024,128x768x768,128x3072x768,128x768x3072"


def parse_shape(text):
    parts = [int(p) for p in text.lower().split("x")]
    if len(parts) == 1:
        parts *= 3
    if len(parts) != 3 or min(parts) < 1:
        raise ValueError(text)
    return tuple(parts)  # m, n, k


def t(*dims):
    return "tensor<" + "x".join(str(d) for d in dims) + "xf32>"


def graph(op, m, n, k, b_const=None):
    """MLIR text of C = A B. b_const: B's values (a K x N float32 array) to embed as a constant."""
    ta, tb, tc = t(m, k), t(k, n), t(m, n)
    args = [f'%a: {ta} {{hexir.name = "a"}}']
    lines = []
    if b_const is None:
        args.append(f'%b: {tb} {{hexir.name = "b"}}')
    else:
        hexdata = b_const.astype("<f4").tobytes().hex().upper()
        if op == "tosa":
            lines.append(f'  %b3 = "tosa.const"() {{values = dense<"0x{hexdata}"> : {t(1, k, n)}}} : () -> {t(1, k, n)}')
        else:
            lines.append(f'  %b = arith.constant dense<"0x{hexdata}"> : {tb}')
    head = f'func.func @main({", ".join(args)}) -> ({tc} {{hexir.name = "c"}}) {{'
    if op == "tosa":
        lines.append(f"  %sa = tosa.const_shape {{values = dense<[1, {m}, {k}]> : tensor<3xindex>}} : () -> !tosa.shape<3>")
        lines.append(f"  %a3 = tosa.reshape %a, %sa : ({ta}, !tosa.shape<3>) -> {t(1, m, k)}")
        if b_const is None:
            lines.append(f"  %sb = tosa.const_shape {{values = dense<[1, {k}, {n}]> : tensor<3xindex>}} : () -> !tosa.shape<3>")
            lines.append(f"  %b3 = tosa.reshape %b, %sb : ({tb}, !tosa.shape<3>) -> {t(1, k, n)}")
        lines.append('  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>')
        lines.append(f"  %c3 = tosa.matmul %a3, %b3, %zp, %zp : ({t(1, m, k)}, {t(1, k, n)}, tensor<1xf32>, "
                     f"tensor<1xf32>) -> {t(1, m, n)}")
        lines.append(f"  %sc = tosa.const_shape {{values = dense<[{m}, {n}]> : tensor<2xindex>}} : () -> !tosa.shape<2>")
        lines.append(f"  %c = tosa.reshape %c3, %sc : ({t(1, m, n)}, !tosa.shape<2>) -> {tc}")
    else:
        lines.append("  %zero = arith.constant 0.0 : f32")
        lines.append(f"  %e = tensor.empty() : {tc}")
        lines.append(f"  %acc = linalg.fill ins(%zero : f32) outs(%e : {tc}) -> {tc}")
        if op == "linalg":
            lines.append(f"  %c = linalg.matmul ins(%a, %b : {ta}, {tb}) outs(%acc : {tc}) -> {tc}")
        else:
            lines.append("  %c = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, "
                         "affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], "
                         'iterator_types = ["parallel", "parallel", "reduction"]}')
            lines.append(f"      ins(%a, %b : {ta}, {tb}) outs(%acc : {tc}) {{")
            lines.append("  ^bb0(%x: f32, %y: f32, %s: f32):")
            lines.append("    %p = arith.mulf %x, %y : f32")
            lines.append("    %r = arith.addf %s, %p : f32")
            lines.append("    linalg.yield %r : f32")
            lines.append(f"  }} -> {tc}")
    lines.append(f"  return %c : {tc}")
    return "\n".join([head, *lines, "}", ""])


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shapes", help=f"comma-separated N or MxNxK (default {DEFAULT_SHAPES}; smoke 64)")
    p.add_argument("--op", default="generic", help="comma-separated graph forms: generic, linalg, tosa")
    p.add_argument("--const-b", action="store_true", help="B as a constant of the graph instead of an input")
    p.add_argument("--min-time", type=float, help="seconds of timed runs per kernel (gemm_bench default 1)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "tools"), help="folder of hexir-compile")
    p.add_argument("--bench", default=os.path.join(ROOT, "build", "benchmarks", "gemm_bench"))
    p.add_argument("--work-dir", help="graphs and executables (default build/gemm, smoke build/gemm_smoke)")
    p.add_argument("--smoke", action="store_true", help="CI: one tiny shape, short timings")
    args = p.parse_args()
    try:
        shapes = [parse_shape(s) for s in (args.shapes or ("64" if args.smoke else DEFAULT_SHAPES)).split(",")]
    except ValueError as e:
        p.error(f"bad shape {e}: use N or MxNxK")
    ops = args.op.split(",")
    if any(o not in ("generic", "linalg", "tosa") for o in ops):
        p.error("--op takes generic, linalg or tosa")
    for exe in (os.path.join(args.bin, "hexir-compile"), args.bench):
        if not os.access(exe, os.X_OK):
            print(f"gemm.py: {exe} not found (build it; gemm_bench needs OpenBLAS: apt-get install libopenblas-dev)",
                  file=sys.stderr)
            return 1
    work = args.work_dir or os.path.join(ROOT, "build", "gemm_smoke" if args.smoke else "gemm")
    os.makedirs(work, exist_ok=True)

    rng = np.random.default_rng(0)
    executables, failed = [], []
    for op in ops:
        for m, n, k in shapes:
            name = f"{op}{'_constb' if args.const_b else ''}_{m}x{n}x{k}"
            base = os.path.join(work, name)
            b = None
            if args.const_b:
                b = rng.uniform(-1, 1, size=(k, n)).astype(np.float32)
                np.save(base + ".b.npy", b)
            with open(base + ".mlir", "w") as f:
                f.write(graph(op, m, n, k, b))
            t0 = time.monotonic()
            r = subprocess.run([os.path.join(args.bin, "hexir-compile"), base + ".mlir", "-o", base + ".hxb"],
                               capture_output=True, text=True)
            secs = time.monotonic() - t0
            if r.returncode != 0:
                lines = [l for l in (r.stderr + r.stdout).splitlines() if l.strip()]
                print(f"{name}: hexir-compile failed: {(lines or ['?'])[0][:300]}")
                failed.append(name)
                continue
            print(f"compiled {name} in {secs:.1f} s", file=sys.stderr)
            executables.append(base + ".hxb")
    sys.stdout.flush()
    rc = 0
    if executables:
        cmd = [args.bench, "--threads", str(args.threads)]
        if args.smoke:
            cmd.append("--smoke")
        if args.min_time is not None:
            cmd += ["--min-time", str(args.min_time)]
        rc = subprocess.run(cmd + executables).returncode
    if failed:
        print(f"FAILED to compile: {', '.join(failed)}")
    return 1 if failed or rc != 0 else 0


if __name__ == "__main__":
    sys.exit(main())
