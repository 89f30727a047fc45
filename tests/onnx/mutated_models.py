#!/usr/bin/python3
"""Robustness: hexir-compile on structurally mutated ONNX models never crashes.

Takes the op-case models (tests/onnx/op_cases.py) and applies random, seeded mutations to their
protobufs: attribute values, initializer dims and types, dropped or renamed inputs, op types,
declared input shapes. Each mutant must either compile or fail with an `error:` message; a
signal, a stack dump or a message-less failure fails the test.
Usage: mutated_models.py --bin BUILD/tools [--count N] [--seed S]
"""
import argparse
import copy
import os
import random
import subprocess
import sys
import tempfile

import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import op_cases  # noqa: E402

OPS = ["Add", "Conv", "MaxPool", "Reshape", "Gather", "Slice", "Concat", "MatMul", "Softmax", "Transpose",
       "Split", "Pad", "Expand", "Where", "Cast", "LayerNormalization", "Unsqueeze", "Gemm"]


def mutate(m, rnd):
    m = copy.deepcopy(m)
    g = m.graph
    kind = rnd.randrange(7)
    nodes = list(g.node)
    if kind == 0 and nodes:  # an attribute value
        n = rnd.choice(nodes)
        if n.attribute:
            a = rnd.choice(n.attribute)
            if a.type == onnx.AttributeProto.INT:
                a.i = rnd.choice([-2, -1, 0, 1, 2, 3, 7, 1 << 40])
            elif a.type == onnx.AttributeProto.INTS and len(a.ints):
                a.ints[rnd.randrange(len(a.ints))] = rnd.choice([-3, -1, 0, 1, 5, 100])
            elif a.type == onnx.AttributeProto.FLOAT:
                a.f = rnd.choice([0.0, -1.0, float("nan"), 1e30])
    elif kind == 1 and g.initializer:  # initializer dims
        t = rnd.choice(g.initializer)
        if len(t.dims):
            t.dims[rnd.randrange(len(t.dims))] = rnd.choice([0, 1, 2, 3, 1 << 33])
        else:
            t.dims.append(rnd.choice([0, 2]))
    elif kind == 2 and g.initializer:  # initializer element type
        rnd.choice(g.initializer).data_type = rnd.choice([1, 6, 7, 9, 10, 11])
    elif kind == 3 and nodes:  # drop or rename an input
        n = rnd.choice(nodes)
        if n.input:
            i = rnd.randrange(len(n.input))
            n.input[i] = rnd.choice(["", "nowhere", n.input[0]])
    elif kind == 4 and nodes:  # op type
        rnd.choice(nodes).op_type = rnd.choice(OPS)
    elif kind == 5 and g.input:  # declared input shape
        t = rnd.choice(g.input).type.tensor_type
        if t.shape.dim:
            t.shape.dim[rnd.randrange(len(t.shape.dim))].dim_value = rnd.choice([0, 1, 5, 1 << 20])
    elif kind == 6 and nodes:  # an extra output or a dropped node
        if rnd.random() < 0.5:
            rnd.choice(nodes).output.append("extra")
        else:
            g.node.remove(rnd.choice(nodes))
    return m


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--count", type=int, default=300)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--target", default="host", help="hexir-compile --target")
    args = p.parse_args()
    rnd = random.Random(args.seed)
    bases = [op_cases.CASES[name]()[0] for name in op_cases.CASES
             if name not in ("external_data", "symbolic_batch_with_input_shape")]
    failures = 0
    refused = 0
    with tempfile.TemporaryDirectory() as tmp:
        path, out = os.path.join(tmp, "m.onnx"), os.path.join(tmp, "m.hxb")
        for k in range(args.count):
            m = mutate(rnd.choice(bases), rnd)
            for _ in range(rnd.randrange(3)):
                m = mutate(m, rnd)
            onnx.save(m, path)
            r = subprocess.run([os.path.join(args.bin, "hexir-compile"), path, "-o", out, "--target", args.target],
                               capture_output=True, text=True, timeout=120)
            crashed = r.returncode < 0 or "Stack dump" in r.stderr or "Assertion" in r.stderr or \
                (r.returncode != 0 and "error:" not in r.stderr)
            if crashed:
                failures += 1
                keep = os.path.join(os.getcwd(), f"mutant_{args.seed}_{k}.onnx")
                onnx.save(m, keep)
                print(f"mutant {k}: rc={r.returncode}, kept as {keep}\n{r.stderr[-2000:]}")
            refused += r.returncode != 0
    print(f"{args.count} mutants: {refused} refused with a message, {args.count - refused} compiled, "
          f"{failures} crashed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
