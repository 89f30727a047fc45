#!/usr/bin/python3
"""Writes a small ONNX model for the importer's FileCheck tests: make_onnx.py NAME OUT.onnx."""
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save


def folded_reshape():
    # x.view(x.size(0), -1) as PyTorch exports it: Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
             helper.make_node("Unsqueeze", ["n", "ax0"], ["n1"]), helper.make_node("Concat", ["n1", "m1"], ["shape"], axis=0),
             helper.make_node("Reshape", ["x", "shape"], ["flat"]), helper.make_node("Relu", ["flat"], ["y"])]
    inits = {"zero": np.array(0, np.int64), "ax0": np.array([0], np.int64), "m1": np.array([-1], np.int64)}
    return nodes, {"x": [2, 3, 4]}, {"y": [2, 12]}, inits


def conv_bias_relu():
    w = np.ones((8, 3, 3, 3), np.float32)
    b = np.arange(8, dtype=np.float32)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Relu", ["c"], ["y"])]
    return nodes, {"x": [1, 3, 8, 8]}, {"y": [1, 8, 4, 4]}, {"w": w, "b": b}


def grouped_conv():
    w = np.ones((4, 2, 3, 3), np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], group=2)]
    return nodes, {"x": [1, 4, 5, 5]}, {"y": [1, 4, 3, 3]}, {"w": w}


def maxpool_ceil():
    nodes = [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)]
    return nodes, {"x": [1, 2, 6, 6]}, {"y": [1, 2, 3, 3]}, {}


def main():
    nodes, ins, outs, inits = globals()[sys.argv[1]]()
    graph = helper.make_graph(
        nodes, sys.argv[1], [helper.make_tensor_value_info(k, TensorProto.FLOAT, v) for k, v in ins.items()],
        [helper.make_tensor_value_info(k, TensorProto.FLOAT, v) for k, v in outs.items()],
        initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    save(model, sys.argv[2])


if __name__ == "__main__":
    main()
