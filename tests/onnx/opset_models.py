#!/usr/bin/python3
"""Models of every opset Hexir imports, through hexir-compile and hexir-run.

Opsets 7 to 12 (ONNX's version converter raises them to 13) and 13 to 17: a small CNN exported
by PyTorch at that opset, with the ops whose definitions moved between opsets (Clip's bounds and
Pad's pads as attributes, then inputs; Softmax's 2-D coercion before 13; Squeeze, Unsqueeze,
Split and the reductions' axes as attributes, then inputs; Slice's attributes before 10),
against PyTorch. Opsets 18 to 21, which Debian's PyTorch and ONNX cannot write: a graph built
with onnx.helper (no checker) of the ops that changed in 18 (the reductions' axes as an input,
Split's num_outputs, Pad's axes) and others, against NumPy.
Usage: opset_models.py --bin BUILD/tools [--opsets 7,9,...]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper
import onnx

RTOL, ATOL = 1e-4, 1e-5


class OpsetNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, stride=2, groups=2)
        self.fc = nn.Linear(10, 10)

    def forward(self, x):
        y = F.relu(self.bn(self.conv(x)))                       # Conv, BatchNormalization, Relu
        y = F.max_pool2d(y, 2)                                  # MaxPool
        y = F.pad(y, (1, 0, 2, 1), value=0.25)                  # Pad
        y = torch.clamp(self.conv2(y), -0.5, 0.75)              # grouped Conv, Clip
        a, b = torch.split(y, 4, dim=1)                         # Split
        y = torch.cat([a * torch.sigmoid(b), b[:, 1:3]], 1)     # Slice, Sigmoid, Mul, Concat
        y = F.avg_pool2d(y, 2, ceil_mode=False)                 # AveragePool
        y = y.mean(dim=3, keepdim=True).squeeze(3)              # ReduceMean, Squeeze
        y = y.unsqueeze(1).flatten(1)                           # Unsqueeze, Flatten
        y = self.fc(y[:, 1:11])                                 # Slice, Gemm
        return torch.softmax(y, dim=1)                          # Softmax (2-D)


def exported(opset, path):
    torch.manual_seed(opset)
    model = OpsetNet().eval()
    with torch.no_grad():
        model.bn.running_mean.normal_(0, 0.1)
        model.bn.running_var.uniform_(0.8, 1.2)
    x = torch.randn(2, 3, 16, 16)
    with torch.no_grad():
        ref = model(x).numpy()
    torch.onnx.export(model, (x,), path, opset_version=opset, input_names=["input"], output_names=["output"],
                      do_constant_folding=False)
    got = onnx.load(path).opset_import[0].version
    assert got == opset, f"PyTorch wrote opset {got}, not {opset}"
    return {"input": x.numpy()}, {"output": ref}


def handmade(opset, path):
    """Opset 18-21 semantics: reductions' axes as inputs, Split's num_outputs, Pad's axes."""
    rng = np.random.default_rng(opset)
    x = rng.uniform(-1, 1, (2, 6, 5, 4)).astype(np.float32)
    w = rng.uniform(-1, 1, (6, 6)).astype(np.float32)
    i64 = lambda *v: np.array(v, np.int64)  # noqa: E731
    inits = {"pads": i64(1, 2, 0, 1), "pad_axes": i64(2, 3), "value": np.array(0.5, np.float32),
             "mean_axes": i64(1), "max_axes": i64(-1), "ssq_axes": i64(2, 3), "w": w, "shape": i64(2, 36, 7)}
    nodes = [
        helper.make_node("Pad", ["x", "pads", "value", "pad_axes"], ["p"]),               # [2, 6, 6, 7]
        helper.make_node("ReduceMean", ["p", "mean_axes"], ["mean"]),                    # [2, 1, 6, 7]
        helper.make_node("ReduceMax", ["p", "max_axes"], ["max"], keepdims=0),           # [2, 6, 6]
        helper.make_node("Split", ["p"], ["s0", "s1", "s2"], axis=3, num_outputs=3),     # 3, 3, 1
        helper.make_node("ReduceSumSquare", ["s0", "ssq_axes"], ["ssq"]),                # [2, 6, 1, 1]
        helper.make_node("ReduceMin", ["s2"], ["min"], keepdims=0),                      # all axes
        helper.make_node("Transpose", ["p"], ["t"], perm=[0, 2, 3, 1]),                  # [2, 6, 7, 6]
        helper.make_node("MatMul", ["t", "w"], ["mm"]),
        helper.make_node("Reshape", ["mm", "shape"], ["r"]),
        helper.make_node("Softmax", ["r"], ["soft"], axis=1),
        helper.make_node("Relu", ["s1"], ["relu"]),
    ]
    outs = ["mean", "max", "ssq", "min", "soft", "relu"]
    p = np.full((2, 6, 6, 7), 0.5, np.float32)
    p[:, :, 1:, 2:6] = x
    s0, s1, s2 = p[..., :3], p[..., 3:6], p[..., 6:]
    mm = p.transpose(0, 2, 3, 1).astype(np.float64) @ w
    r = mm.reshape(2, 36, 7)
    e = np.exp(r - r.max(axis=1, keepdims=True))
    ref = {"mean": p.mean(axis=1, keepdims=True), "max": p.max(axis=-1), "ssq": (s0.astype(np.float64) ** 2).sum(
        axis=(2, 3), keepdims=True), "min": np.array(s2.min(), np.float32), "soft": e / e.sum(axis=1, keepdims=True),
        "relu": np.maximum(s1, 0)}
    graph = helper.make_graph(
        nodes, f"opset{opset}", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info(k, TensorProto.FLOAT, list(np.shape(ref[k]))) for k in outs],
        initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = {18: 8, 19: 9, 20: 9, 21: 10}[opset]
    onnx.save(m, path)  # no checker: ONNX 1.12 does not know these opsets
    return {"x": x}, {k: np.asarray(ref[k], np.float32) for k in outs}


def check(opset, bin_dir, tmp):
    path = os.path.join(tmp, f"opset{opset}.onnx")
    ins, refs = (handmade if opset >= 18 else exported)(opset, path)
    hxb = path[:-5] + ".hxb"
    r = subprocess.run([os.path.join(bin_dir, "hexir-compile"), path, "-o", hxb], capture_output=True, text=True)
    if r.returncode != 0:
        return f"hexir-compile failed:\n{r.stderr}"
    cmd = [os.path.join(bin_dir, "hexir-run"), hxb]
    for k, v in ins.items():
        np.save(os.path.join(tmp, f"{opset}.{k}.npy"), v)
        cmd += ["--input", f"{k}={os.path.join(tmp, f'{opset}.{k}.npy')}"]
    for k in refs:
        cmd += ["--output", f"{k}={os.path.join(tmp, f'{opset}.out.{k}.npy')}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return f"hexir-run failed:\n{r.stderr}"
    for k, ref in refs.items():
        got = np.load(os.path.join(tmp, f"{opset}.out.{k}.npy"))
        if got.shape != ref.shape:
            return f"{k}: shape {got.shape}, expected {ref.shape}"
        err = np.abs(got.astype(np.float64) - ref)
        if not np.all(err <= ATOL + RTOL * np.abs(ref)):
            return f"{k}: worst |diff| {err.max():.3e}"
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", required=True)
    p.add_argument("--opsets", default="7,8,9,10,11,12,13,14,15,16,17,18,19,20,21")
    args = p.parse_args()
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        for opset in [int(v) for v in args.opsets.split(",")]:
            why = check(opset, args.bin, tmp)
            print(f"{'ok  ' if why is None else 'FAIL'} opset {opset}" + ("" if why is None else ": " + why))
            if why is not None:
                failed.append(opset)
    print(f"{len(failed)} failed" + (f": opsets {failed}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
