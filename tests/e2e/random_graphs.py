#!/usr/bin/env python3
"""Differential testing: random graphs (DAGs of the supported TOSA ops and concatenations over
random static shapes, with broadcasting, reshape views, splat and dense constants, and
elementwise chains that invite in-place updates) compiled and run through the command-line tools and compared
with NumPy. Each graph is reproducible from its seed.

Usage: random_graphs.py --bin BUILD/tools [--first SEED] [--count N]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from graphs import Builder, ty  # noqa: E402


class Value:
    def __init__(self, ssa, shape, ref, bound):
        self.ssa, self.shape, self.ref, self.bound = ssa, tuple(shape), ref, bound


def random_graph(seed):
    rng = np.random.default_rng(seed)
    g = Builder()
    rank = int(rng.integers(2, 4))
    base = tuple(int(rng.integers(1, 7)) for _ in range(rank))
    inputs, values = {}, []
    for i in range(int(rng.integers(1, 3))):
        name = f"in{i}"
        data = rng.uniform(-2, 2, base).astype(np.float32)
        inputs[name] = data
        values.append(Value(f"%{name}", base, data.astype(np.float64), 2.0))
    args = [(v.ssa, v.ssa[1:], v.shape) for v in values]

    def pick(shape=None):
        cands = [v for v in values if shape is None or v.shape == shape]
        return cands[int(rng.integers(len(cands)))] if cands else None

    for _ in range(int(rng.integers(3, 10))):
        kind = rng.choice(["binary", "binary_bcast", "unary", "unary", "reduce", "transpose",
                           "reshape", "const", "matmul", "concat"])
        a = pick()
        if kind in ("binary", "binary_bcast", "const"):
            if kind == "binary":
                b = pick(a.shape)
            elif kind == "binary_bcast":
                bshape = tuple(d if rng.random() < 0.5 else 1 for d in a.shape)
                b = pick(bshape)
                if b is None:
                    data = rng.uniform(-1, 1, bshape).astype(np.float32)
                    b = Value(g.const(data), bshape, data.astype(np.float64), 1.0)
            else:
                if rng.random() < 0.5:
                    c = float(np.float32(rng.uniform(-1, 1)))
                    data = np.full(a.shape, c, np.float32)
                    t = ty(a.shape)
                    ssa = g.op(f'"tosa.const"() {{values = dense<{c!r}> : {t}}} : () -> {t}', "")
                else:
                    data = rng.uniform(-1, 1, a.shape).astype(np.float32)
                    ssa = g.const(data)
                b = Value(ssa, a.shape, data.astype(np.float64), 1.0)
            op = rng.choice(["add", "sub", "mul"])
            if op == "mul":
                ssa = g.mul(a.ssa, b.ssa, a.shape, b.shape, a.shape)
                ref, bound = a.ref * b.ref, a.bound * b.bound
            else:
                ssa = g.binary(op, a.ssa, b.ssa, a.shape, b.shape, a.shape)
                ref = a.ref + b.ref if op == "add" else a.ref - b.ref
                bound = a.bound + b.bound
            if bound > 1e4:
                continue
            values.append(Value(ssa, a.shape, ref, bound))
        elif kind == "unary":
            options = ["tanh", "sigmoid", "clamp"] + (["exp"] if a.bound <= 6 else [])
            op = rng.choice(options)
            if op == "clamp":
                ssa = g.relu(a.ssa, a.shape)
                values.append(Value(ssa, a.shape, np.maximum(a.ref, 0), a.bound))
            elif op == "tanh":
                values.append(Value(g.unary("tanh", a.ssa, a.shape), a.shape, np.tanh(a.ref), 1.0))
            elif op == "sigmoid":
                s = g.unary("sigmoid", a.ssa, a.shape)
                values.append(Value(s, a.shape, 1 / (1 + np.exp(-a.ref)), 1.0))
                if rng.random() < 0.3:  # reciprocal of a positive value away from zero
                    r = g.unary("reciprocal", s, a.shape)
                    values.append(Value(r, a.shape, 1 + np.exp(-a.ref), 1 + np.exp(a.bound)))
            else:
                values.append(Value(g.unary("exp", a.ssa, a.shape), a.shape, np.exp(a.ref), float(np.exp(a.bound))))
        elif kind == "reduce":
            axis = int(rng.integers(len(a.shape)))
            op = rng.choice(["sum", "max"])
            ssa, shape = g.reduce(op, a.ssa, a.shape, axis)
            ref = a.ref.sum(axis=axis, keepdims=True) if op == "sum" else a.ref.max(axis=axis, keepdims=True)
            values.append(Value(ssa, shape, ref, a.bound * (a.shape[axis] if op == "sum" else 1)))
        elif kind == "transpose":
            perm = [int(p) for p in rng.permutation(len(a.shape))]
            shape = tuple(a.shape[p] for p in perm)
            ssa = g.op(f"tosa.transpose {a.ssa} {{perms = array<i32: {', '.join(map(str, perm))}>}} : "
                       f"({ty(a.shape)}) -> {ty(shape)}", "")
            values.append(Value(ssa, shape, np.transpose(a.ref, perm), a.bound))
        elif kind == "reshape":
            n = int(np.prod(a.shape))
            shape = (1, n) if len(a.shape) != 2 or a.shape[0] != 1 else (n, 1)
            values.append(Value(g.reshape(a.ssa, a.shape, shape), shape, a.ref.reshape(shape), a.bound))
        elif kind == "concat":
            # Two or three values of a's shape along a random axis (producers used once become
            # slice writers; a graph input or a value read elsewhere keeps a concatenation).
            # Parts are often fresh (tanh of a value, read only here), and the result often read
            # by an op rather than returned, which is when the slice writers apply.
            parts = [a] + [pick(a.shape) for _ in range(int(rng.integers(1, 3)))]
            for i, v in enumerate(parts):
                if rng.random() < 0.7:
                    parts[i] = Value(g.unary("tanh", v.ssa, v.shape), v.shape, np.tanh(v.ref), 1.0)
            axis = int(rng.integers(len(a.shape)))
            ssa, shape = g.concat([v.ssa for v in parts], [v.shape for v in parts], axis)
            joined = Value(ssa, shape, np.concatenate([v.ref for v in parts], axis=axis), max(v.bound for v in parts))
            if rng.random() < 0.5:
                s = g.unary("sigmoid", joined.ssa, shape)
                joined = Value(s, shape, 1 / (1 + np.exp(-joined.ref)), 1.0)
            values.append(joined)
        elif kind == "matmul" and len(a.shape) == 3:
            k, n = a.shape[2], int(rng.integers(1, 7))
            w = rng.uniform(-1, 1, (a.shape[0], k, n)).astype(np.float32)
            ssa, shape = g.matmul(a.ssa, g.const(w), a.shape, w.shape)
            values.append(Value(ssa, shape, a.ref @ w.astype(np.float64), a.bound * k))
    produced = values[len(inputs):] or values
    outs = [produced[-1]]
    if len(produced) > 2 and rng.random() < 0.5:
        outs.append(produced[int(rng.integers(len(produced) - 1))])
    results = [(v.ssa, f"out{i}", v.shape) for i, v in enumerate(outs)]
    text = g.function("main", args, results)
    return text, inputs, {f"out{i}": v.ref for i, v in enumerate(outs)}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--first", type=int, default=0)
    p.add_argument("--count", type=int, default=50)
    p.add_argument("--rtol", type=float, default=1e-5)
    p.add_argument("--target", default="host", help="hexir-compile --target")
    p.add_argument("--poison", action="store_true", help="hexir-run --poison (arenas start as signalling NaNs)")
    args = p.parse_args()
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="hexir-random-") as tmp:
        for seed in range(args.first, args.first + args.count):
            text, inputs, ref = random_graph(seed)
            src, exe = os.path.join(tmp, "g.mlir"), os.path.join(tmp, "g.hxb")
            with open(src, "w") as f:
                f.write(text)
            ok = True
            try:
                subprocess.run([os.path.join(args.bin, "hexir-compile"), src, "-o", exe, "--target", args.target],
                               check=True,
                               capture_output=True, text=True)
                cmd = [os.path.join(args.bin, "hexir-run"), exe] + (["--poison"] if args.poison else [])
                for name, data in inputs.items():
                    np.save(os.path.join(tmp, name + ".npy"), data)
                    cmd += ["--input", f"{name}={os.path.join(tmp, name + '.npy')}"]
                for name in ref:
                    cmd += ["--output", f"{name}={os.path.join(tmp, 'o_' + name + '.npy')}"]
                subprocess.run(cmd, check=True, capture_output=True, text=True)
                for name, want in ref.items():
                    got = np.load(os.path.join(tmp, "o_" + name + ".npy")).astype(np.float64)
                    scale = max(float(np.abs(want).max()), 1.0)
                    if got.shape != want.shape or not np.all(np.abs(got - want) <= args.rtol * (np.abs(want) + scale)):
                        ok = False
                        print(f"seed {seed}: {name} mismatch, max err {np.abs(got - want).max():.3g}")
            except subprocess.CalledProcessError as e:
                ok = False
                print(f"seed {seed}: {' '.join(e.cmd[:2])} failed:\n{e.stderr}")
            if not ok:
                print(text)
            passed += ok
            failed += not ok
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
