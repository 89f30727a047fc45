#!/usr/bin/env python3
"""What an ONNX model says of itself reaches its users: metadata_props (author, labels) and the
model's own fields (producer, graph name, description, version) are carried into the executable,
printed by hexir-dump, served as the model metadata's "parameters" by hexir-serve, and given by
Python's Module.metadata; a model without them has none.
Usage: model_metadata.py --bin BUILD/tools
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper

from checks import check, summary

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "serve"))
from serving import request, start  # noqa: E402

PROPS = {"author": "Hexir tests", "labels": "cat,dog,bird", "license": "Apache-2.0"}


def model(path, with_metadata):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    m = helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu_graph", [x], [y]),
                          opset_imports=[helper.make_opsetid("", 13)])
    if with_metadata:
        m.producer_name, m.producer_version, m.model_version = "pytorch", "1.13.1", 7
        m.doc_string = "A model\nover two lines."
        helper.set_model_props(m, PROPS)
    onnx.save(m, path)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    tools = p.parse_args().bin
    want = dict(PROPS, **{"onnx:producer_name": "pytorch", "onnx:producer_version": "1.13.1", "onnx:version": "7",
                          "onnx:graph_name": "relu_graph", "onnx:description": "A model\nover two lines."})
    with tempfile.TemporaryDirectory(prefix="hexir-metadata-") as tmp:
        os.chdir(tmp)
        for name, with_metadata in (("with", True), ("without", False)):
            model(f"{name}.onnx", with_metadata)
            subprocess.run([os.path.join(tools, "hexir-compile"), f"{name}.onnx", "-o", f"{name}.hxb"], check=True)
        dump = subprocess.run([os.path.join(tools, "hexir-dump"), "with.hxb"], capture_output=True, text=True).stdout
        check("hexir-dump prints the metadata, one line each (the description's newline as a space)",
              "metadata:\n" in dump and "  author: Hexir tests\n" in dump and "  labels: cat,dog,bird\n" in dump and
              "  onnx:producer_name: pytorch\n" in dump and "  onnx:description: A model over two lines.\n" in dump,
              dump[:800])
        dump = subprocess.run([os.path.join(tools, "hexir-dump"), "without.hxb"], capture_output=True, text=True).stdout
        check("a model without metadata: only its graph name", "metadata:\n  onnx:graph_name: relu_graph\nsections" in dump,
              dump[:400])
        server, port, line = start(tools, "--model", "m=with.hxb", "--model", "plain=without.hxb")
        check("hexir-serve starts", port is not None, line)
        if port is not None:
            try:
                status, body = request(port, "GET", "/v2/models/m")
                meta = json.loads(body) if status == 200 else {}
                check("GET /v2/models/m: the metadata as the model's parameters",
                      meta.get("parameters") == want, body)
                status, body = request(port, "GET", "/v2/models/plain")
                check("GET /v2/models/plain: only its graph name",
                      status == 200 and json.loads(body).get("parameters") == {"onnx:graph_name": "relu_graph"}, body)
            finally:
                server.terminate()
                server.wait(timeout=30)
        code = ("import sys, hexir; m = hexir.load(sys.argv[1]); import json; print(json.dumps(m.metadata))")
        python_dir = os.path.join(os.path.dirname(tools), "python")
        r = subprocess.run([sys.executable, "-c", code, "with.hxb"], capture_output=True, text=True,
                           env=dict(os.environ, PYTHONPATH=python_dir))
        if os.path.isdir(python_dir):
            check("Python: Module.metadata", r.returncode == 0 and json.loads(r.stdout) == want, r.stderr or r.stdout)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
