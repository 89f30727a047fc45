#!/usr/bin/env python3
"""End-to-end check of one test graph through the command-line tools.

Generates the graph and random inputs, runs hexir-compile and hexir-run, and compares every
output with the NumPy reference: max |hexir - ref| must be within rtol * max(|ref|, 1) elementwise
relative plus that absolute floor. Usage: run_graph.py NAME --bin BUILD/tools [--seed N]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graphs  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("name", choices=sorted(graphs.GRAPHS))
    p.add_argument("--bin", required=True, help="folder holding hexir-compile and hexir-run")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rtol", type=float, default=1e-5)
    args = p.parse_args()

    rng = np.random.default_rng(args.seed)
    g = graphs.GRAPHS[args.name](rng)
    with tempfile.TemporaryDirectory(prefix=f"hexir-e2e-{args.name}-") as tmp:
        src = os.path.join(tmp, "graph.mlir")
        exe = os.path.join(tmp, "graph.hxb")
        with open(src, "w") as f:
            f.write(g.mlir)
        subprocess.run([os.path.join(args.bin, "hexir-compile"), src, "-o", exe], check=True)
        cmd = [os.path.join(args.bin, "hexir-run"), exe]
        for name, value in g.inputs.items():
            path = os.path.join(tmp, f"in_{name}.npy")
            np.save(path, value)
            cmd += ["--input", f"{name}={path}"]
        for name in g.outputs:
            cmd += ["--output", f"{name}={os.path.join(tmp, 'out_' + name + '.npy')}"]
        subprocess.run(cmd, check=True)
        ref = g.reference(graphs.f64(g.inputs))
        ok = True
        for name in g.outputs:
            got = np.load(os.path.join(tmp, f"out_{name}.npy"))
            want = ref[name]
            if got.shape != want.shape or got.dtype != np.float32:
                print(f"{name}: got {got.shape} {got.dtype}, want {want.shape} float32")
                ok = False
                continue
            scale = max(float(np.abs(want).max()), 1.0)
            err = np.abs(got.astype(np.float64) - want)
            worst = float((err / (np.abs(want) + scale * args.rtol)).max())
            rel = float(err.max()) / scale
            good = bool(np.all(err <= args.rtol * (np.abs(want) + scale)))
            print(f"{args.name}/{name}: shape {got.shape}, max abs err {err.max():.3g}, "
                  f"max err / max|ref| {rel:.3g} -> {'ok' if good else 'MISMATCH'}")
            ok &= good
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
