#!/usr/bin/env python3
"""Writes examples/mlp.mlir: a 4-16-3 MLP with softmax, in TOSA, with fixed-seed weights.

The file is committed (it is small and readable); this script documents how it was made and
regenerates it byte for byte: python3 examples/make_mlp_example.py > examples/mlp.mlir
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e"))
from graphs import Builder  # noqa: E402


def main():
    rng = np.random.default_rng(2026)
    w1 = np.round(rng.standard_normal((1, 4, 16)) * 0.5, 3).astype(np.float32)
    b1 = np.round(rng.standard_normal((1, 1, 16)) * 0.1, 3).astype(np.float32)
    w2 = np.round(rng.standard_normal((1, 16, 3)) * 0.3, 3).astype(np.float32)
    b2 = np.round(rng.standard_normal((1, 1, 3)) * 0.1, 3).astype(np.float32)
    g = Builder()
    x = g.reshape("%x", (4, 4), (1, 4, 4))
    h, s = g.matmul(x, g.const(w1), (1, 4, 4), w1.shape)
    h = g.relu(g.binary("add", h, g.const(b1), s, b1.shape, s), s)
    z, s = g.matmul(h, g.const(w2), s, w2.shape)
    z = g.binary("add", z, g.const(b2), s, b2.shape, s)
    m, sm = g.reduce("max", z, s, 2)
    e = g.unary("exp", g.binary("sub", z, m, s, sm, s), s)
    total, st = g.reduce("sum", e, s, 2)
    p = g.mul(e, g.unary("reciprocal", total, st), s, st, s)
    probs = g.reshape(p, s, (4, 3))
    print("// A 4-16-3 MLP with softmax over 4 samples (made by examples/make_mlp_example.py).")
    print("// hexir-compile examples/mlp.mlir -o mlp.hxb && hexir-run mlp.hxb --input x=x.npy")
    print(g.function("main", [("%x", "x", (4, 4))], [(probs, "probs", (4, 3))]), end="")


if __name__ == "__main__":
    main()
