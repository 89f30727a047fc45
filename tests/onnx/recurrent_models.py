#!/usr/bin/python3
"""PyTorch's recurrent layers through ONNX against PyTorch itself.

nn.LSTM (two layers, bidirectional), nn.GRU (batch_first, with the initial state as an input)
and nn.RNN (ReLU, bidirectional) are exported with seeded random weights (opset 14, PyTorch's own
export as LSTM/GRU/RNN nodes), compiled, run, and compared output by output:
max|hexir - torch| <= 1e-4 max|torch| + 1e-6. (sequence_lens, which PyTorch does not export,
is checked by ONNX's conformance cases.)
Usage: recurrent_models.py --bin BUILD/tools [--target T]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
from torch import nn

TOLERANCE = 1e-4


class Lstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(6, 5, num_layers=2, bidirectional=True)

    def forward(self, x):
        y, (h, c) = self.rnn(x)
        return y, h, c


class Gru(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(4, 7, batch_first=True)

    def forward(self, x, h0):
        y, h = self.rnn(x, h0)
        return y, h


class Rnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(3, 4, nonlinearity="relu", bidirectional=True)

    def forward(self, x):
        y, h = self.rnn(x)
        return y, h


def cases():
    torch.manual_seed(0)
    yield "lstm", Lstm(), (torch.randn(9, 2, 6),)
    yield "gru", Gru(), (torch.randn(3, 8, 4), torch.randn(1, 3, 7))
    yield "rnn", Rnn(), (torch.randn(5, 2, 3),)


def run(bin_dir, target, name, module, args, work):
    base = os.path.join(work, name)
    module.eval()
    with torch.no_grad():
        refs = module(*args)
    in_names = [f"in{k}" for k in range(len(args))]
    out_names = [f"out{k}" for k in range(len(refs))]
    torch.onnx.export(module, args, base + ".onnx", opset_version=14, input_names=in_names, output_names=out_names)
    r = subprocess.run([os.path.join(bin_dir, "hexir-compile"), base + ".onnx", "-o", base + ".hxb", "--target", target],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout + r.stderr)
        return f"{name}: hexir-compile failed"
    cmd = [os.path.join(bin_dir, "hexir-run"), base + ".hxb"]
    for n, a in zip(in_names, args):
        np.save(f"{base}.{n}.npy", a.numpy())
        cmd += ["--input", f"{n}={base}.{n}.npy"]
    for n in out_names:
        cmd += ["--output", f"{n}={base}.{n}.npy"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout + r.stderr)
        return f"{name}: hexir-run failed"
    for n, ref in zip(out_names, refs):
        got, want = np.load(f"{base}.{n}.npy"), ref.numpy()
        if got.shape != want.shape:
            return f"{name}.{n}: shape {got.shape}, expected {want.shape}"
        err = float(np.max(np.abs(got.astype(np.float64) - want)))
        scale = float(np.max(np.abs(want)))
        print(f"{name}.{n} ({target}): max|diff| {err:.3g} (max|torch| {scale:.3g})")
        if err > TOLERANCE * scale + 1e-6:
            return f"{name}.{n}: off by {err:.3g}"
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", required=True)
    p.add_argument("--target", default="host")
    a = p.parse_args()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, module, args in cases():
            why = run(a.bin, a.target, name, module, args, tmp)
            if why:
                print("FAIL " + why)
                failures.append(why)
    print(f"recurrent_models: {3 - len(failures)} of 3 match PyTorch")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
