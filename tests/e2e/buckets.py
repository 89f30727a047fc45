#!/usr/bin/env python3
"""Shape buckets through the tools: ONNX models with symbolic dimensions (made here, and a
torchvision model exported with a dynamic batch) compiled with
hexir-compile --dim into one function per size (constants stored once); hexir-run takes inputs
of any size a bucket holds (the exact bucket, or the next larger one, padded along the batch
axis and sliced back), against NumPy; sizes no bucket takes, and --dim misuse, are errors that
name the buckets or the model's dimensions.
Usage: buckets.py --bin BUILD/tools
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from checks import check, constant_bytes, summary


def dense_model(path, dims, w, b):
    """y = relu(x @ w + b) with x of shape `dims` (names for symbolic ones) x K."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [*dims, w.shape[0]])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [*dims, w.shape[1]])
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "b"], ["a"]),
             helper.make_node("Relu", ["a"], ["y"])]
    graph = helper.make_graph(nodes, "dense", [x], [y],
                              [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def donated_cache(compile_, run_, run):
    """--donate: an ONNX cache input updated in place (cache_out = cache * 0.5 + x, a KV
    cache's shape), bound onto its input with hexir-run --in-place, at two sequence buckets;
    without --donate the output is not tied, and a wrong name is refused."""
    rng = np.random.default_rng(2)
    cache = helper.make_tensor_value_info("cache", TensorProto.FLOAT, [4, 8])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["seq", 8])
    out = helper.make_tensor_value_info("cache_out", TensorProto.FLOAT, [4, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["seq", 8])
    nodes = [helper.make_node("Mul", ["cache", "half"], ["scaled"]),
             helper.make_node("ReduceSum", ["x", "axes"], ["rows"], keepdims=1),
             helper.make_node("Add", ["scaled", "rows"], ["cache_out"]),
             helper.make_node("Relu", ["x"], ["y"])]
    graph = helper.make_graph(nodes, "cache", [cache, x], [out, y],
                              [numpy_helper.from_array(np.array(0.5, np.float32), "half"),
                               numpy_helper.from_array(np.array([0], np.int64), "axes")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), "cache.onnx")
    r = run([compile_, "cache.onnx", "-o", "cache.hxb", "--dim", "seq=1,16", "--donate", "cache"])
    check("--donate cache with --dim seq=1,16", r.returncode == 0, r.stderr)
    c = rng.standard_normal((4, 8)).astype(np.float32)
    for seq in (1, 16):
        xs = rng.standard_normal((seq, 8)).astype(np.float32)
        np.save("cache.npy", c)
        np.save("xs.npy", xs)
        r = run([run_, "cache.hxb", "--input", "cache=cache.npy", "--input", "x=xs.npy", "--in-place", "cache_out",
                 "--output", "cache_out=cache_out.npy", "--output", "y=y.npy"])
        if not check(f"seq {seq}: cache_out computed in place over the donated cache", r.returncode == 0, r.stderr):
            continue
        want = c.astype(np.float64) * 0.5 + xs.sum(axis=0, keepdims=True)
        err = float(np.abs(np.load("cache_out.npy") - want).max())
        check(f"seq {seq}: the updated cache against NumPy (max err {err:.2g})", err < 1e-5)
    run([compile_, "cache.onnx", "-o", "plain.hxb", "--dim", "seq=1,16"])
    r = run([run_, "plain.hxb", "--input", "cache=cache.npy", "--input", "x=xs.npy", "--in-place", "cache_out"])
    check("without --donate the cache is not tied", r.returncode == 1 and "is not tied to a donated input" in r.stderr,
          r.stderr)
    r = run([compile_, "cache.onnx", "-o", "bad.hxb", "--dim", "seq=1,16", "--donate", "kv"])
    check("--donate of a missing input names the inputs",
          r.returncode != 0 and "--donate names 'kv', which is not an input of the model (inputs: cache, x)" in r.stderr,
          r.stderr)


def torchvision_buckets(compile_, run_, run):
    """A torchvision model exported as a user would, with a dynamic batch: buckets 1 and 4 run
    batch 3 (padded) against PyTorch, and store the weights once."""
    import torch
    import torchvision
    torch.manual_seed(0)
    model = torchvision.models.mobilenet_v3_small(num_classes=10).eval()
    x = torch.randn(3, 3, 64, 64)
    torch.onnx.export(model, x, "mobilenet.onnx", input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}}, opset_version=17)
    r = run([compile_, "mobilenet.onnx", "-o", "mobilenet.hxb", "--dim", "batch=1,4"])
    check("torchvision export with a dynamic batch: --dim batch=1,4", r.returncode == 0, r.stderr)
    np.save("input.npy", x.numpy())
    r = run([run_, "mobilenet.hxb", "--input", "input=input.npy", "--output", "logits=logits.npy"])
    if r.returncode != 0:
        check("mobilenet_v3_small batch 3", False, r.stderr)
        return
    with torch.no_grad():
        want = model(x).numpy()
    got = np.load("logits.npy")
    err = float(np.abs(got - want).max() / np.abs(want).max()) if got.shape == want.shape else float("inf")
    check(f"mobilenet_v3_small batch 3 over buckets 1 and 4 against PyTorch (max err / max|ref| {err:.2g})", err < 1e-4)
    run([compile_, "mobilenet.onnx", "-o", "mobilenet1.hxb", "--input-shape", "input=1x3x64x64"])
    one, both = constant_bytes(run_, "mobilenet1.hxb", "main"), constant_bytes(run_, "mobilenet.hxb", "main_batch4")
    check(f"its weights stored once: {both} bytes with two buckets, {one} with one", one is not None and one == both)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    args = p.parse_args()
    compile_, run_, dump = (os.path.join(args.bin, t) for t in ("hexir-compile", "hexir-run", "hexir-dump"))
    rng = np.random.default_rng(11)
    w, b = rng.standard_normal((16, 8)).astype(np.float32), rng.standard_normal(8).astype(np.float32)
    with tempfile.TemporaryDirectory(prefix="hexir-buckets-") as tmp:
        os.chdir(tmp)
        dense_model("batch.onnx", ["batch"], w, b)
        dense_model("seq.onnx", ["batch", "seq"], w, b)

        def run(cmd):
            return subprocess.run(cmd, capture_output=True, text=True)

        r = run([compile_, "batch.onnx", "-o", "batch.hxb", "--dim", "batch=16,1,4"])
        check("hexir-compile --dim batch=16,1,4", r.returncode == 0, r.stderr)
        dumped = run([dump, "batch.hxb"]).stdout
        functions = re.findall(r"^function (\S+)", dumped, re.M)
        check("one function per size, smallest first", functions == ["main_batch1", "main_batch4", "main_batch16"],
              f"{functions}")
        check("hexir-dump names each bucket's sizes", "function main_batch4 (shape bucket of main: batch=4)" in dumped,
              dumped[:2000])
        run([compile_, "batch.onnx", "-o", "one.hxb", "--input-shape", "x=4x16"])

        check("the buckets share their weights",
              constant_bytes(run_, "batch.hxb", "main_batch4") == constant_bytes(run_, "one.hxb", "main"))

        def run_model(hxb, x, expect_error=None):
            np.save("x.npy", x)
            if os.path.exists("y.npy"):
                os.remove("y.npy")
            r = run([run_, hxb, "--input", "x=x.npy", "--output", "y=y.npy"])
            shape = "x".join(map(str, x.shape))
            if expect_error is not None:
                check(f"{hxb} x={shape}: refused", r.returncode == 1 and expect_error in r.stderr
                      and not os.path.exists("y.npy"), r.stderr)
                return
            if r.returncode != 0:
                check(f"{hxb} x={shape}", False, r.stderr)
                return
            got = np.load("y.npy")
            want = np.maximum(x.astype(np.float64) @ w + b, 0)
            err = float(np.abs(got - want).max()) if got.shape == want.shape else float("inf")
            check(f"{hxb} x={shape}: y {got.shape} against NumPy (max err {err:.2g})", err < 1e-5)

        for n in [1, 2, 3, 4, 5, 11, 16]:  # exact buckets and padded ones
            run_model("batch.hxb", rng.standard_normal((n, 16)).astype(np.float32))
        run_model("batch.hxb", np.zeros((17, 16), np.float32),
                  "no shape bucket of 'main' takes x 17x16 f32: its buckets take x: batchx16 with batch in "
                  "(1, 4, 16), smaller sizes padded")
        run_model("batch.hxb", np.zeros((4, 15), np.float32), "no shape bucket of 'main' takes x 4x15 f32")
        np.save("x.npy", np.zeros((3, 16), np.float32))
        r = run([run_, "batch.hxb", "--input", "x=x.npy", "--resident"])
        check("device memory needs an exact bucket", r.returncode == 1 and "only an exact bucket takes it (the nearest "
              "is 'main_batch4')" in r.stderr, r.stderr)

        # Two dimensions: the batch (leading axis) is padded, the sequence must match exactly.
        r = run([compile_, "seq.onnx", "-o", "seq.hxb", "--dim", "batch=1,4", "--dim", "seq=8,4"])
        check("hexir-compile --dim batch=1,4 --dim seq=8,4", r.returncode == 0, r.stderr)
        functions = re.findall(r"^function (\S+)", run([dump, "seq.hxb"]).stdout, re.M)
        check("a function per combination", sorted(functions) == sorted(
            ["main_batch1_seq4", "main_batch1_seq8", "main_batch4_seq4", "main_batch4_seq8"]), f"{functions}")
        for shape in [(1, 4), (4, 8), (3, 8), (2, 4)]:
            run_model("seq.hxb", rng.standard_normal((*shape, 16)).astype(np.float32))
        run_model("seq.hxb", np.zeros((2, 6, 16), np.float32),
                  "its buckets take x: batchxseqx16 with batch in (1, 4), smaller sizes padded; seq in (4, 8), exactly")

        # Misuse of --dim.
        r = run([compile_, "batch.onnx", "-o", "bad.hxb", "--dim", "seq=1,2"])
        check("--dim of a dimension the model lacks names the model's",
              r.returncode != 0 and "--dim names 'seq', which is not a symbolic dimension of the model's inputs "
              "(it has 'batch')" in r.stderr and not os.path.exists("bad.hxb"), r.stderr)
        for text, message in [("batch=1,0", "--dim 'batch=1,0' is not NAME=V1,V2,..."),
                              ("batch=2,2", "--dim 'batch=2,2' is not NAME=V1,V2,..."),
                              ("batch", "--dim 'batch' is not NAME=V1,V2,...")]:
            r = run([compile_, "batch.onnx", "-o", "bad.hxb", "--dim", text])
            check(f"--dim {text} refused", r.returncode != 0 and message in r.stderr, r.stderr)
        with open("g.mlir", "w") as f:
            f.write("func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n  return %x : tensor<4xf32>\n}\n")
        r = run([compile_, "g.mlir", "-o", "bad.hxb", "--dim", "batch=1,2"])
        check("--dim on an MLIR graph refused", r.returncode != 0 and "--dim fixes an ONNX model's symbolic "
              "dimensions" in r.stderr, r.stderr)
        donated_cache(compile_, run_, run)
        torchvision_buckets(compile_, run_, run)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
