#!/usr/bin/python3
"""Compile time against graph length (not a test): hexir-compile on chains of ReLU nodes and on
transformer encoders of increasing depth, in one run, printing seconds per ONNX node and the
ratio of the longest graph's to the shortest's (flat: near 1; quadratic: the length ratio).

  benchmarks/compile_time.py [--bin build/tools] [--chains 1000,2000,4000,8000,20000]
                             [--layers 4,12,24,48] [--smoke]
  benchmarks/compile_time.py --families convnext_base,densenet201,... [--ort-dir build/ort-node]

--families: torchvision builders as tests/onnx/model_families.py exports them; for each, the
seconds of hexir-compile (import, kernels, plan, file) next to ONNX Runtime's session creation
(onnxruntime-node: graph optimizations, kernel selection, weight prepacking) on the same file,
interleaved, the median of --rounds rounds each, and their ratio.

Transformers are tests/onnx/models.py's BertLike (width 64, 4 heads) with `layers` encoder
layers, each its own weights. --smoke (CI): chains of 200 and 400 nodes, 1 and 2 layers.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "onnx"))
sys.path.insert(0, HERE)


def relu_chain(n, path):
    nodes, prev = [], "x"
    for i in range(n):
        nodes.append(helper.make_node("Relu", [prev], [f"r{i}"]))
        prev = f"r{i}"
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                              [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, 64])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def transformer(layers, path):
    import torch
    import models
    torch.manual_seed(0)
    model = models.BertLike(layers=layers).eval()
    for layer in model.encoder.layers:  # each layer its own weights, as a trained model has
        layer.self_attn._reset_parameters()
        layer.linear1.reset_parameters()
        layer.linear2.reset_parameters()
    ids = torch.randint(0, 1000, (1, 16))
    torch.onnx.export(model, (ids,), path, opset_version=14, input_names=["input"], output_names=["output"])


def measure(bin_dir, path):
    """(ONNX nodes, seconds) of compiling `path`."""
    nodes = len(onnx.load(path, load_external_data=False).graph.node)
    t0 = time.perf_counter()
    r = subprocess.run([os.path.join(bin_dir, "hexir-compile"), path, "-o", path + ".hxb"], capture_output=True,
                       text=True)
    seconds = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"hexir-compile {path} failed:\n{r.stderr}")
    return nodes, seconds


def series(name, sizes, make, bin_dir, tmp):
    rows = []
    for size in sizes:
        path = os.path.join(tmp, f"{name}_{size}.onnx")
        make(size, path)
        nodes, seconds = measure(bin_dir, path)
        rows.append((size, nodes, seconds))
        print(f"{name:12s} {size:>6d} {nodes:>7d} nodes {seconds:8.2f} s {1000 * seconds / nodes:8.3f} ms/node",
              flush=True)
    first, last = rows[0], rows[-1]
    ratio = (last[2] / last[1]) / (first[2] / first[1])
    print(f"{name}: ms per node at {last[1]} nodes / at {first[1]} nodes = {ratio:.2f} "
          f"(graph {last[1] / first[1]:.0f}x longer)")
    return ratio


def families(names, bin_dir, ort_dir, rounds, tmp):
    import numpy as np
    import compare_ort
    import model_families
    found = model_families.builders()
    ort_pkg = compare_ort.ensure_ort(ort_dir)
    ratios = []
    print(f"{'model':20s} {'hexir-compile s':>16s} {'ORT session s':>14s} {'hx/ort':>7s}")
    for name in names:
        family, ctor = found[name]
        path = os.path.join(tmp, name + ".onnx")
        x, _ = model_families.make(name, family, ctor, path)
        np.save(os.path.join(tmp, "x.npy"), x)
        hx, ort = [], []
        for _ in range(rounds):
            hx.append(measure(bin_dir, path)[1])
            r = subprocess.run(["node", os.path.join(HERE, "ort_bench.js"), "--ort", ort_pkg, "--model", path, "--input",
                                f"input={os.path.join(tmp, 'x.npy')}", "--runs", "1", "--warmup", "0", "--threads", "1"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"ort_bench {name} failed:\n{r.stderr}")
            ort.append(json.loads(r.stdout.strip().splitlines()[-1])["session_ms"] / 1000)
        h, o = sorted(hx)[len(hx) // 2], sorted(ort)[len(ort) // 2]
        ratios.append(h / o)
        print(f"{name:20s} {h:16.2f} {o:14.2f} {h / o:7.2f}", flush=True)
        for f in os.listdir(tmp):
            os.remove(os.path.join(tmp, f))
    geomean = float(np.exp(np.mean(np.log(ratios))))
    print(f"compile_time: hexir-compile / ORT session creation, geometric mean {geomean:.2f} over {len(ratios)} models")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "tools"))
    p.add_argument("--chains", default="1000,2000,4000,8000,20000")
    p.add_argument("--layers", default="4,12,24,48")
    p.add_argument("--smoke", action="store_true")
    p.add_argument("--families", help="comma-separated torchvision builders, against ORT's session creation")
    p.add_argument("--ort-dir", default=os.path.join(ROOT, "build", "ort-node"))
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    if args.families:
        with tempfile.TemporaryDirectory(prefix="hexir-compile-time-") as tmp:
            families(args.families.split(","), args.bin, args.ort_dir, args.rounds, tmp)
        return 0
    chains = [200, 400] if args.smoke else [int(n) for n in args.chains.split(",")]
    layers = [1, 2] if args.smoke else [int(n) for n in args.layers.split(",")]
    print("== hexir-compile time per ONNX node (one run)")
    with tempfile.TemporaryDirectory(prefix="hexir-compile-time-") as tmp:
        series("relu chain", chains, relu_chain, args.bin, tmp)
        series("transformer", layers, transformer, args.bin, tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
