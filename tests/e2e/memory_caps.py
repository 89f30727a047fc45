#!/usr/bin/python3
"""Allocation failures are errors, never aborts: a model whose output is 1 GiB (Expand of one
float) run under a 600 MiB address-space cap, as a container limit would set, by hexir-run
(exit 1, "out of memory", no output file) and by hexir-serve (answered 500, and the server keeps
answering requests that fit).

Usage: memory_caps.py --bin BUILD/tools
"""
import argparse
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "serve"))
from checks import check, summary  # noqa: E402
from serving import request, start  # noqa: E402

CAP = 600 << 20


def expand_model(path, n):
    g = helper.make_graph([helper.make_node("Expand", ["x", "shape"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])],
                          initializer=[numpy_helper.from_array(np.array([n], np.int64), "shape")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)


def capped():
    resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", required=True)
    tools = p.parse_args().bin
    with tempfile.TemporaryDirectory(prefix="hexir-caps-") as tmp:
        big, small = os.path.join(tmp, "big.hxb"), os.path.join(tmp, "small.hxb")
        for exe, n in ((big, 256 << 20), (small, 16)):
            expand_model(exe[:-4] + ".onnx", n)
            subprocess.run([os.path.join(tools, "hexir-compile"), exe[:-4] + ".onnx", "-o", exe], check=True)
        np.save(os.path.join(tmp, "x.npy"), np.full(1, 2.5, np.float32))
        out = os.path.join(tmp, "y.npy")
        r = subprocess.run([os.path.join(tools, "hexir-run"), big, "--input", f"x={tmp}/x.npy", "--output", f"y={out}"],
                           preexec_fn=capped, capture_output=True, text=True, timeout=120)
        check(f"hexir-run: a 1 GiB output under a 600 MiB cap: exit {r.returncode}, {r.stderr.strip()}",
              r.returncode == 1 and "out of memory" in r.stderr and not os.path.exists(out))

        server = subprocess.Popen([os.path.join(tools, "hexir-serve"), "--port", "0", "--model", f"big={big}", "--model",
                                   f"small={small}", "--threads", "2"], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, preexec_fn=capped)
        line = server.stdout.readline()
        port = int(line.rsplit(":", 1)[1]) if "listening on" in line else None
        check("hexir-serve starts under the cap", port is not None, line)
        if port is None:
            server.kill()
            return summary()
        try:
            body = json.dumps({"inputs": [{"name": "x", "shape": [1], "datatype": "FP32", "data": [2.5]}]})
            status, text = request(port, "POST", "/v2/models/big/infer", body, timeout=120)
            check(f"hexir-serve: a 1 GiB answer under the cap: {status}", status == 500 and "out of memory" in text,
                  text[:200])
            status, text = request(port, "POST", "/v2/models/small/infer", body, timeout=60)
            check("hexir-serve still answers a request that fits",
                  status == 200 and json.loads(text)["outputs"][0]["data"] == [2.5] * 16, text[:200])
        finally:
            server.send_signal(signal.SIGTERM)
            code = server.wait(timeout=60)
            check(f"hexir-serve exits 0 on SIGTERM (exit {code})", code == 0)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
