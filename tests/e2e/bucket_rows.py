#!/usr/bin/env python3
"""Rows that interact, through the tools. Padding a request to a larger shape bucket, and
hexir-serve --max-batch, are exact only where each output row depends on its own input row;
the compiler proves it per bucket (hexir-check-bucket-rows). Models whose rows are independent
(attention within a row, PyTorch's sequence-first head reshape, a grouped convolution, an
embedding, TopK) run padded and equal NumPy; models whose rows interact (a Softmax or a mean
over the batch, CumSum along it, a gather of rows, a row's position, rows reversed) or that
depend on the batch's size (x / Shape(x)[0], a Reshape to [4, -1], its parity) run at
their buckets' exact sizes only: a padded run is refused naming the ONNX node, the exact run
equals NumPy, hexir-dump shows why, and hexir-serve --max-batch refuses the model at start. Without a bucket
of 1, one row is refused (never probed), three are padded.
Usage: bucket_rows.py --bin BUILD/tools
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from checks import check, summary

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "serve"))
from serving import start  # noqa: E402

RNG = np.random.default_rng(7)
F32 = TensorProto.FLOAT


def save(path, nodes, inputs, outputs, inits=(), opset=17):
    graph = helper.make_graph(nodes, path, inputs, outputs, [numpy_helper.from_array(v, k) for k, v in inits])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)


def vi(name, shape, t=F32):
    return helper.make_tensor_value_info(name, t, shape)


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# Independent rows: (file, build(path), reference(inputs) -> outputs, inputs(rows) -> dict).
def attention(path):
    """Per row: softmax(x x^T) x, then a layer norm over the features."""
    save(path, [helper.make_node("Transpose", ["x"], ["xt"], perm=[0, 2, 1]),
                helper.make_node("MatMul", ["x", "xt"], ["s"]),
                helper.make_node("Softmax", ["s"], ["p"], axis=-1),
                helper.make_node("MatMul", ["p", "x"], ["a"]),
                helper.make_node("LayerNormalization", ["a", "g", "b"], ["y"], axis=-1)],
         [vi("x", ["batch", 4, 8])], [vi("y", ["batch", 4, 8])],
         [("g", np.full(8, 1.5, np.float32)), ("b", np.full(8, 0.25, np.float32))])


def attention_ref(x):
    a = softmax(x @ x.transpose(0, 2, 1), -1) @ x
    mu, var = a.mean(-1, keepdims=True), a.var(-1, keepdims=True)
    return (a - mu) / np.sqrt(var + 1e-5) * 1.5 + 0.25


def heads(path):
    """PyTorch's sequence-first head split: batch x 8 -> 1 x batch x 8 -> 1 x batch*2 x 4, a
    Softmax per head, and back."""
    save(path, [helper.make_node("Reshape", ["x", "s1"], ["r1"]), helper.make_node("Reshape", ["r1", "s2"], ["r2"]),
                helper.make_node("Softmax", ["r2"], ["p"], axis=-1), helper.make_node("Reshape", ["p", "s3"], ["y"])],
         [vi("x", ["batch", 8])], [vi("y", ["batch", 8])],
         [("s1", np.array([1, -1, 8], np.int64)), ("s2", np.array([1, -1, 4], np.int64)),
          ("s3", np.array([-1, 8], np.int64))])


def heads_ref(x):
    return softmax(x.reshape(-1, 2, 4), -1).reshape(-1, 8)


W_CONV = RNG.standard_normal((8, 2, 3, 3)).astype(np.float32)
W_FC = RNG.standard_normal((8, 5)).astype(np.float32)


def conv(path):
    """A grouped convolution (4 groups), global average pooling, flatten, a dense layer."""
    save(path, [helper.make_node("Conv", ["x", "w"], ["c"], group=4, pads=[1, 1, 1, 1]),
                helper.make_node("Relu", ["c"], ["r"]), helper.make_node("GlobalAveragePool", ["r"], ["g"]),
                helper.make_node("Flatten", ["g"], ["f"]), helper.make_node("MatMul", ["f", "wf"], ["y"])],
         [vi("x", ["batch", 8, 6, 6])], [vi("y", ["batch", 5])], [("w", W_CONV), ("wf", W_FC)])


def conv_ref(x):
    n = x.shape[0]
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((n, 8, 6, 6), np.float32)
    for o in range(8):
        g = o // 2
        for c in range(2):
            for i in range(3):
                for j in range(3):
                    out[:, o] += W_CONV[o, c, i, j] * xp[:, 2 * g + c, i:i + 6, j:j + 6]
    return np.maximum(out, 0).mean(axis=(2, 3)) @ W_FC


TABLE = RNG.standard_normal((50, 8)).astype(np.float32)


def embedding(path):
    """Token ids -> embedding rows -> mean over tokens -> the top 3 features."""
    save(path, [helper.make_node("Gather", ["table", "ids"], ["e"]),
                helper.make_node("ReduceMean", ["e"], ["m"], axes=[1], keepdims=0),
                helper.make_node("TopK", ["m", "k"], ["y", "i"], axis=-1)],
         [vi("ids", ["batch", 6], TensorProto.INT64)], [vi("y", ["batch", 3]), vi("i", ["batch", 3], TensorProto.INT64)],
         [("table", TABLE), ("k", np.array([3], np.int64))], opset=13)


def embedding_ref(ids):
    return -np.sort(-TABLE[ids].mean(axis=1), axis=-1)[:, :3]


# Rows that interact: (file, node named in the refusal, build, reference).
def softmax_batch(path):
    save(path, [helper.make_node("Softmax", ["x"], ["y"], axis=0, name="sm")], [vi("x", ["batch", 8])],
         [vi("y", ["batch", 8])])


def center(path):
    save(path, [helper.make_node("ReduceMean", ["x"], ["m"], axes=[0], keepdims=1, name="batch_mean"),
                helper.make_node("Sub", ["x", "m"], ["y"])], [vi("x", ["batch", 8])], [vi("y", ["batch", 8])], opset=13)


def cumsum(path):
    save(path, [helper.make_node("CumSum", ["x", "axis"], ["y"], name="running")], [vi("x", ["batch", 8])],
         [vi("y", ["batch", 8])], [("axis", np.array(0, np.int64))])


def position(path):
    """x + (the row's index): the index from Shape -> Range, as exporters write positions."""
    save(path, [helper.make_node("Shape", ["x"], ["shape"]), helper.make_node("Gather", ["shape", "zero"], ["n"]),
                helper.make_node("Range", ["start", "n", "one"], ["r"]),
                helper.make_node("Cast", ["r"], ["rf"], to=F32),
                helper.make_node("Unsqueeze", ["rf", "axes"], ["col"]),
                helper.make_node("Add", ["x", "col"], ["y"], name="add_position")],
         [vi("x", ["batch", 8])], [vi("y", ["batch", 8])],
         [("zero", np.array(0, np.int64)), ("start", np.array(0, np.int64)), ("one", np.array(1, np.int64)),
          ("axes", np.array([1], np.int64))])


def gather_rows(path):
    save(path, [helper.make_node("Gather", ["x", "idx"], ["y"], axis=0, name="pick")],
         [vi("x", ["batch", 8]), vi("idx", ["batch"], TensorProto.INT64)], [vi("y", ["batch", 8])])


def reverse(path):
    save(path, [helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"], name="flip")],
         [vi("x", ["batch", 8])], [vi("y", ["batch", 8])],
         [("starts", np.array([-1], np.int64)), ("ends", np.array([-(2 ** 63)], np.int64)),
          ("axes", np.array([0], np.int64)), ("steps", np.array([-1], np.int64))])


def per_size(path):
    """x / (its number of rows), the number from Shape: folded to 4 in the 4-row bucket, where
    3 padded rows would be divided by 4 instead of 3."""
    save(path, [helper.make_node("Shape", ["x"], ["shape"]), helper.make_node("Gather", ["shape", "zero"], ["n"]),
                helper.make_node("Cast", ["n"], ["nf"], to=F32),
                helper.make_node("Div", ["x", "nf"], ["y"], name="per_row_count")],
         [vi("x", ["batch", 8])], [vi("y", ["batch", 8])], [("zero", np.array(0, np.int64))])


def regroup(path):
    """A Softmax over groups of a Reshape to [4, -1]: rows of 8 in the 4-row bucket, of 6 at 3."""
    save(path, [helper.make_node("Reshape", ["x", "four"], ["r"]),
                helper.make_node("Softmax", ["r"], ["p"], axis=-1, name="group_softmax"),
                helper.make_node("Reshape", ["p", "back"], ["y"])],
         [vi("x", ["batch", 8])], [vi("y", ["batch", 8])],
         [("four", np.array([4, -1], np.int64)), ("back", np.array([-1, 8], np.int64))])


def parity(path):
    """x + (the number of rows mod 2): equal at 2 and 4 rows, wrong for 3 padded to 4."""
    save(path, [helper.make_node("Shape", ["x"], ["shape"]), helper.make_node("Gather", ["shape", "zero"], ["n"]),
                helper.make_node("Mod", ["n", "two"], ["odd"]), helper.make_node("Cast", ["odd"], ["oddf"], to=F32),
                helper.make_node("Add", ["x", "oddf"], ["y"], name="add_parity")],
         [vi("x", ["batch", 8])], [vi("y", ["batch", 8])],
         [("zero", np.array(0, np.int64)), ("two", np.array(2, np.int64))])


def run_tool(args):
    return subprocess.run(args, capture_output=True, text=True)


def run(tools, hxb, inputs, outputs):
    args = [os.path.join(tools, "hexir-run"), hxb]
    for name, value in inputs.items():
        np.save(f"in_{name}.npy", value)
        args += ["--input", f"{name}=in_{name}.npy"]
    for name in outputs:
        args += ["--output", f"{name}=out_{name}.npy"]
    r = run_tool(args)
    return r, [np.load(f"out_{name}.npy") for name in outputs] if r.returncode == 0 else None


def compile_buckets(tools, name, build):
    """Builds `name`.onnx, compiles it with --dim batch=1,4,16: hexir-dump's text, or None."""
    build(f"{name}.onnx")
    r = run_tool([os.path.join(tools, "hexir-compile"), f"{name}.onnx", "-o", f"{name}.hxb", "--dim", "batch=1,4,16"])
    if not check(f"{name}: compiles with --dim batch=1,4,16", r.returncode == 0, r.stderr):
        return None
    return run_tool([os.path.join(tools, "hexir-dump"), f"{name}.hxb"]).stdout


def close(got, want):
    return got is not None and got.shape == want.shape and np.allclose(got, want, rtol=1e-4, atol=1e-4)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    tools = p.parse_args().bin
    compile_ = os.path.join(tools, "hexir-compile")
    with tempfile.TemporaryDirectory(prefix="hexir-bucket-rows-") as tmp:
        os.chdir(tmp)
        f32 = lambda *shape: RNG.standard_normal(shape).astype(np.float32)  # noqa: E731
        independent = [
            ("attention", attention, lambda n: {"x": f32(n, 4, 8)}, lambda i: [attention_ref(i["x"])], ["y"]),
            ("heads", heads, lambda n: {"x": f32(n, 8)}, lambda i: [heads_ref(i["x"])], ["y"]),
            ("conv", conv, lambda n: {"x": f32(n, 8, 6, 6)}, lambda i: [conv_ref(i["x"])], ["y"]),
            ("embedding", embedding, lambda n: {"ids": RNG.integers(0, 50, (n, 6), dtype=np.int64)},
             lambda i: [embedding_ref(i["ids"])], ["y"]),
        ]
        for name, build, make, ref, outs in independent:
            dump = compile_buckets(tools, name, build)
            if dump is None:
                continue
            check(f"{name}: rows proved independent (hexir-dump shows no 'rows interact')",
                  "main_batch16" in dump and "rows interact" not in dump, dump[-400:])
            for rows in (3, 7):
                inputs = make(rows)
                r, got = run(tools, f"{name}.hxb", inputs, outs)
                check(f"{name}: {rows} rows padded to a bucket equal NumPy",
                      r.returncode == 0 and close(got[0], ref(inputs)[0]), r.stderr)

        interacting = [
            ("softmax_batch", "sm", softmax_batch, lambda x: softmax(x, 0)),
            ("center", "batch_mean", center, lambda x: x - x.mean(axis=0, keepdims=True)),
            ("cumsum", "running", cumsum, lambda x: np.cumsum(x, axis=0)),
            ("position", "add_position", position, lambda x: x + np.arange(x.shape[0], dtype=np.float32)[:, None]),
            ("reverse", "flip", reverse, lambda x: x[::-1]),
            ("gather_rows", "pick", gather_rows, None),
            ("per_size", "per_row_count", per_size, lambda x: x / np.float32(x.shape[0])),
            ("regroup", "group_softmax", regroup, lambda x: softmax(x.reshape(4, -1), -1).reshape(-1, 8)),
            ("parity", "add_parity", parity, lambda x: x + np.float32(x.shape[0] % 2)),
        ]
        for name, node, build, ref in interacting:
            dump = compile_buckets(tools, name, build)
            if dump is None:
                continue
            check(f"{name}: hexir-dump says the rows interact, naming node '{node}'",
                  f"rows interact: dimension 'batch': node '{node}'" in dump, dump[-600:])
            x = f32(3, 8)
            feeds = {"x": x} if ref else {"x": x, "idx": np.array([2, 0, 1], np.int64)}
            r, _ = run(tools, f"{name}.hxb", feeds, ["y"])
            check(f"{name}: 3 rows are not padded to the 4-row bucket: the error names node '{node}'",
                  r.returncode == 1 and "rows interact" in r.stderr and f"node '{node}'" in r.stderr
                  and "exactly" in r.stderr, r.stderr)
            x = f32(4, 8)
            feeds = {"x": x} if ref else {"x": x, "idx": np.array([3, 0, 0, 1], np.int64)}
            want = ref(x) if ref else x[feeds["idx"]]
            r, got = run(tools, f"{name}.hxb", feeds, ["y"])
            check(f"{name}: 4 rows (an exact bucket) equal NumPy", r.returncode == 0 and close(got[0], want), r.stderr)
            server, port, line = start(tools, "--model", f"m={name}.hxb", "--max-batch", "4")
            if port is not None:
                server.terminate()
                server.wait(timeout=30)
            check(f"{name}: hexir-serve --max-batch 4 refuses it at start, naming node '{node}'",
                  port is None and server.returncode != 0 and "rows of this model interact" in line
                  and f"node '{node}'" in line, line)
        # Without a bucket of 1, one row is not padded (one row is never probed); 3 rows are.
        heads(f"{tmp}/two.onnx")
        r = run_tool([compile_, f"{tmp}/two.onnx", "-o", "two.hxb", "--dim", "batch=2,8"])
        if check("heads: compiles with --dim batch=2,8", r.returncode == 0, r.stderr):
            x = f32(1, 8)
            r, _ = run(tools, "two.hxb", {"x": x}, ["y"])
            check("without a bucket of 1, one row is refused: 'smaller sizes from 2 padded'",
                  r.returncode == 1 and "smaller sizes from 2 padded" in r.stderr, r.stderr)
            x = f32(3, 8)
            r, got = run(tools, "two.hxb", {"x": x}, ["y"])
            check("3 rows padded to the 8-row bucket equal NumPy", r.returncode == 0 and close(got[0], heads_ref(x)),
                  r.stderr)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
