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


def qdq_conv_chain():
    # ONNX Runtime's S8S8 QDQ form: x quantized per tensor, a per-channel int8 weight with a
    # float bias, ReLU, requantized for the next convolution (a per-tensor weight), dequantized.
    rng = np.random.default_rng(0)
    q = lambda a, s, z: [helper.make_node("QuantizeLinear", [a, s, z], [a + "_q"]),
                         helper.make_node("DequantizeLinear", [a + "_q", s, z], [a + "_d"])]
    nodes = q("x", "sx", "zx") + [
        helper.make_node("DequantizeLinear", ["w1", "s1", "z1"], ["w1_d"], axis=0),
        helper.make_node("Conv", ["x_d", "w1_d", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r"])] + q("r", "sr", "zr") + [
        helper.make_node("DequantizeLinear", ["w2", "s2", "z2"], ["w2_d"]),
        helper.make_node("Conv", ["r_d", "w2_d"], ["c2"]),
        helper.make_node("QuantizeLinear", ["c2", "sy", "zy"], ["c2_q"]),
        helper.make_node("DequantizeLinear", ["c2_q", "sy", "zy"], ["y"])]
    inits = {"sx": np.float32(0.05), "zx": np.int8(3), "w1": rng.integers(-127, 128, (8, 4, 3, 3)).astype(np.int8),
             "s1": np.full(8, 0.01, np.float32), "z1": np.zeros(8, np.int8), "b1": np.ones(8, np.float32),
             "sr": np.float32(0.1), "zr": np.int8(-128), "w2": rng.integers(-127, 128, (8, 8, 1, 1)).astype(np.int8),
             "s2": np.float32(0.02), "z2": np.int8(0), "sy": np.float32(0.2), "zy": np.int8(0)}
    return nodes, {"x": [1, 4, 6, 6]}, {"y": [1, 8, 6, 6]}, inits


def qdq_u8_conv_matmul():
    # U8S8 (ONNX Runtime's QUInt8 activations): a uint8 activation (zero point 128) into a
    # convolution, requantized to uint8 (zero point 0) after ReLU for a 1x1 one; a uint8
    # activation into a MatMul by an int8 weight.
    rng = np.random.default_rng(1)
    q = lambda a, s, z: [helper.make_node("QuantizeLinear", [a, s, z], [a + "_q"]),
                         helper.make_node("DequantizeLinear", [a + "_q", s, z], [a + "_d"])]
    nodes = q("x", "sx", "zx") + [
        helper.make_node("DequantizeLinear", ["w1", "s1", "z1"], ["w1_d"], axis=0),
        helper.make_node("Conv", ["x_d", "w1_d"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r"])] + q("r", "sr", "zr") + [
        helper.make_node("DequantizeLinear", ["w2", "s2", "z2"], ["w2_d"]),
        helper.make_node("Conv", ["r_d", "w2_d"], ["y"])] + q("m", "sx", "zx") + [
        helper.make_node("DequantizeLinear", ["w3", "s2", "z2"], ["w3_d"]),
        helper.make_node("MatMul", ["m_d", "w3_d"], ["z"])]
    inits = {"sx": np.float32(0.05), "zx": np.uint8(128), "w1": rng.integers(-127, 128, (8, 4, 3, 3)).astype(np.int8),
             "s1": np.full(8, 0.01, np.float32), "z1": np.zeros(8, np.int8), "sr": np.float32(0.1),
             "zr": np.uint8(0), "w2": rng.integers(-127, 128, (8, 8, 1, 1)).astype(np.int8), "s2": np.float32(0.02),
             "z2": np.int8(0), "w3": rng.integers(-127, 128, (16, 32)).astype(np.int8)}
    return nodes, {"x": [1, 4, 6, 6], "m": [4, 16]}, {"y": [1, 8, 6, 6], "z": [4, 32]}, inits


def qdq_maxpool():
    # A QDQ max pooling, requantized with its input's scale and zero point (ONNX Runtime's form).
    q = lambda a, s, z: [helper.make_node("QuantizeLinear", [a, s, z], [a + "_q"]),
                         helper.make_node("DequantizeLinear", [a + "_q", s, z], [a + "_d"])]
    nodes = q("x", "sx", "zx") + [
        helper.make_node("MaxPool", ["x_d"], ["p"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])] + \
        q("p", "sx", "zx") + [helper.make_node("Identity", ["p_d"], ["y"])]
    inits = {"sx": np.float32(0.05), "zx": np.int8(3)}
    return nodes, {"x": [1, 4, 8, 8]}, {"y": [1, 4, 4, 4]}, inits


def qdq_u8_maxpool():
    # The same pooling of a uint8 activation (U8S8), zero point 200.
    nodes, ins, outs, inits = qdq_maxpool()
    inits["zx"] = np.uint8(200)
    return nodes, ins, outs, inits


def qdq_attention():
    # A QDQ attention's Q x K^T: two run-time activations, each per tensor with a zero point,
    # K^T a Transpose quantized after it; the scores requantized.
    q = lambda a, s, z: [helper.make_node("QuantizeLinear", [a, s, z], [a + "_q"]),
                         helper.make_node("DequantizeLinear", [a + "_q", s, z], [a + "_d"])]
    nodes = q("x", "sx", "zx") + [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1])] + \
        q("kt", "sk", "zk") + [helper.make_node("MatMul", ["x_d", "kt_d"], ["s"])] + q("s", "ss", "zs") + [
        helper.make_node("Identity", ["s_d"], ["y"])]
    inits = {"sx": np.float32(0.05), "zx": np.int8(3), "sk": np.float32(0.04), "zk": np.int8(-5),
             "ss": np.float32(0.1), "zs": np.int8(1)}
    return nodes, {"x": [2, 8, 16], "k": [2, 32, 16]}, {"y": [2, 8, 32]}, inits


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
