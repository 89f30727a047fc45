#!/usr/bin/python3
"""Writes one test model: NAME.onnx, NAME.input.npy and NAME.ref.npy (PyTorch's output)."""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("name")
    p.add_argument("--out-dir", required=True)
    args = p.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    base = os.path.join(args.out_dir, args.name)
    _, x, ref = models.export(args.name, base + ".onnx")
    np.save(base + ".input.npy", x)
    np.save(base + ".ref.npy", ref)


if __name__ == "__main__":
    main()
