#!/usr/bin/python3
"""hexir-serve --max-batch end to end: a model compiled with shape buckets along its batch
(hexir-compile --dim batch=1,2,4,8) served with dynamic batching. Concurrent clients of 1 to 3
rows each get their own rows, equal to NumPy's (a batch never mixes rows between requests);
the batch-size histogram shows they ran together; metadata shows the batch axis as -1; a
request of too many rows, of another shape, or rows that differ between inputs is a 400; a
model without buckets, or buckets too small for --max-batch, is refused at start.
Usage: batching_test.py --bin BUILD/tools
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
from buckets import dense_model  # noqa: E402
from checks import check, summary  # noqa: E402
from serving import request, start  # noqa: E402


def infer(port, inputs):
    body = json.dumps({"inputs": [{"name": n, "shape": list(x.shape), "datatype": "FP32",
                                   "data": x.flatten().tolist()} for n, x in inputs.items()]})
    return request(port, "POST", "/v2/models/m/infer", body)


def two_input_model(path, w):
    """y = relu(x @ w + z) with x [batch, K] and z [batch, N]."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", w.shape[0]])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, ["batch", w.shape[1]])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", w.shape[1]])
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "z"], ["a"]),
             helper.make_node("Relu", ["a"], ["y"])]
    graph = helper.make_graph(nodes, "two", [x, z], [y], [numpy_helper.from_array(w, "w")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    tools = p.parse_args().bin
    rng = np.random.default_rng(1)
    w = rng.standard_normal((16, 8)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    with tempfile.TemporaryDirectory(prefix="hexir-batching-") as tmp:
        os.chdir(tmp)
        dense_model("dense.onnx", ["batch"], w, b)
        two_input_model("two.onnx", w)
        for src, out, dims in [("dense.onnx", "dense.hxb", "batch=1,2,4,8"), ("dense.onnx", "small.hxb", "batch=1,2"),
                               ("two.onnx", "two.hxb", "batch=1,4,8")]:
            subprocess.run([os.path.join(tools, "hexir-compile"), src, "-o", out, "--dim", dims], check=True)
        dense_model("static.onnx", [4], w, b)
        subprocess.run([os.path.join(tools, "hexir-compile"), "static.onnx", "-o", "static.hxb"], check=True)

        # One session, a long delay: concurrent requests must share runs.
        server, port, line = start(tools, "--model", "m=dense.hxb", "--max-batch", "8", "--batch-delay-us", "200000",
                                   "--sessions", "1", "--threads", "16", "--max-queue", "32")
        check("hexir-serve --max-batch 8 starts", port is not None, line)
        if port is None:
            return 1
        try:
            status, body = request(port, "GET", "/v2/models/m")
            meta = json.loads(body)
            check("metadata shows the batch axis as -1",
                  meta["inputs"][0]["shape"] == [-1, 16] and meta["outputs"][0]["shape"] == [-1, 8], body)
            results = {}

            def client(n):
                x = rng_for(n).standard_normal((1 + n % 3, 16)).astype(np.float32)
                status, body = infer(port, {"x": x})
                results[n] = (x, status, body)

            def rng_for(n):
                return np.random.default_rng(100 + n)

            threads = [threading.Thread(target=client, args=(n,)) for n in range(16)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wrong = []
            for n, (x, status, body) in sorted(results.items()):
                want = np.maximum(x.astype(np.float64) @ w + b, 0)
                if status != 200:
                    wrong.append(f"client {n}: {status} {body[:200]}")
                    continue
                out = json.loads(body)["outputs"][0]
                got = np.array(out["data"], dtype=np.float64).reshape(out["shape"])
                if out["shape"] != [x.shape[0], 8] or np.abs(got - want).max() > 1e-4 * (1 + np.abs(want).max()):
                    wrong.append(f"client {n}: shape {out['shape']}, rows {x.shape[0]}, "
                                 f"max diff {np.abs(got - want).max() if got.shape == want.shape else 'shape'}")
            check("16 concurrent clients of 1 to 3 rows each get their own rows, equal to NumPy's", not wrong,
                  "; ".join(wrong))
            metrics = request(port, "GET", "/metrics")[1]
            count = int(re.search(r'hexir_batch_rows_count\{model="m"\} (\d+)', metrics).group(1))
            rows = int(re.search(r'hexir_batch_rows_sum\{model="m"\} (\d+)', metrics).group(1))
            batched = int(re.search(r'hexir_batch_requests_total\{model="m"\} (\d+)', metrics).group(1))
            total_rows = sum(x.shape[0] for x, _, _ in results.values())
            check("the batch histogram counts every row and request, in fewer runs than requests",
                  rows == total_rows and batched == 16 and count < 16 and
                  'hexir_batch_queue_seconds_total{model="m"}' in metrics and
                  'hexir_batch_compute_seconds_total{model="m"}' in metrics,
                  f"{count} batches, {rows} rows (sent {total_rows}), {batched} requests")
            print(f"     16 requests, {total_rows} rows, ran as {count} batches")
            status, body = infer(port, {"x": np.zeros((9, 16), np.float32)})
            check("9 rows with --max-batch 8: 400 naming the range", status == 400 and "takes 1 to 8" in body, body)
            status, body = infer(port, {"x": np.zeros((2, 15), np.float32)})
            check("another row shape: 400 naming the shape", status == 400 and "[-1,16]" in body, body)
            status, body = infer(port, {"x": np.zeros((0, 16), np.float32)})
            check("0 rows: 400", status == 400, body)
        finally:
            server.terminate()
            server.wait(timeout=30)

        # Two inputs: their rows must agree.
        server, port, line = start(tools, "--model", "m=two.hxb", "--max-batch", "8", "--batch-delay-us", "1000")
        check("a two-input model serves batched", port is not None, line)
        if port is not None:
            try:
                x = rng.standard_normal((3, 16)).astype(np.float32)
                z = rng.standard_normal((3, 8)).astype(np.float32)
                status, body = infer(port, {"x": x, "z": z})
                want = np.maximum(x.astype(np.float64) @ w + z, 0)
                ok = status == 200
                if ok:
                    out = json.loads(body)["outputs"][0]
                    ok = out["shape"] == [3, 8] and np.abs(np.array(out["data"]).reshape(3, 8) - want).max() < 1e-4
                check("two inputs of 3 rows: 3 rows out, equal to NumPy's", ok, body[:300])
                status, body = infer(port, {"x": x, "z": z[:2]})
                check("inputs whose rows differ: 400", status == 400 and "rows" in body, body)
            finally:
                server.terminate()
                server.wait(timeout=30)

        # Models that cannot batch are refused at start, saying why.
        for model, message in [("static.hxb", "shape buckets along its leading axis"),
                                ("small.hxb", "no shape bucket")]:
            server, port, line = start(tools, "--model", f"m={model}", "--max-batch", "8")
            if port is not None:
                server.terminate()
                server.wait(timeout=30)
            check(f"--max-batch 8 with {model} refused at start: {message}",
                  port is None and server.returncode != 0 and message in line, line)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
