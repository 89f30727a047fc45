#!/usr/bin/python3
"""Greedy generation in one run: the Python side of examples/generate.

Loads generate.hxb (make_generate.py's model compiled by hexir-compile), runs it once on the
prompt and an empty KV cache, and prints the tokens; the whole decode loop runs inside the run.
With --expect, exits 1 unless the tokens equal those (PyTorch's greedy decode).

  generate.py generate.hxb prompt.npy [--expect pytorch_tokens.npy] [--python build/python]
"""
import argparse
import sys

import numpy as np


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("hxb")
    p.add_argument("prompt")
    p.add_argument("--expect")
    p.add_argument("--python", help="the hexir Python package's folder, if not installed")
    args = p.parse_args()
    if args.python:
        sys.path.insert(0, args.python)
    import hexir

    module = hexir.load(args.hxb)
    session = module.session()
    cache = next(i for i in module.inputs if i.name == "cache")
    out = session.run({"prompt": np.load(args.prompt), "cache": np.zeros(cache.shape, np.float32)})
    tokens = out["tokens"].tolist()
    print(" ".join(map(str, tokens)))
    if args.expect:
        want = np.load(args.expect).tolist()
        if tokens != want:
            print(f"differs from PyTorch's greedy decode: {want}")
            return 1
        print(f"{len(tokens)} tokens, equal to PyTorch's greedy decode")
    return 0


if __name__ == "__main__":
    sys.exit(main())
