#!/usr/bin/python3
"""Hostile models: each case is a model file (and, where it matters, files beside it) that an
inference server might be handed. Every case must end in one of two ways:

- `error`: hexir-compile exits 1 within the time limit with an `error:` message containing the
  expected text (the numbers it names included), leaves no output file, and prints no stack
  dump, LLVM error or MLIR internals;
- `valid`: the model is legal ONNX at an edge (rank 0, a zero-sized dimension, rank 8, an empty
  slice, a matmul over K = 0): it compiles, hexir-run loads and runs it, and the outputs match
  NumPy.

Families: size arithmetic overflows, extreme integers, malformed external data (numbers,
directories, FIFOs, symbolic links out of the model's folder), invalid graphs (duplicate names,
shadowed inputs), inputs ONNX defines as one value given empty or longer, undefined arithmetic
and reads past a tensor (each found by the fuzzer or a review), and edge shapes for every
elementwise op. Prints how many cases it ran.
Usage: hostile_models.py --bin BUILD/tools [--only PREFIX] [--list]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TIMEOUT = 60  # seconds; a hang is a failure
INTERNALS = ("Stack dump", "LLVM ERROR", "PLEASE submit", "Assertion", "terminate called",
             "out-of-bounds", "LLVMTranslationDialectInterface", "'tensor.", "'linalg.", "'arith.")

CASES = {}  # name -> function(dir) returning (model, expectation)


def case(name):
    def register(fn):
        CASES[name] = fn
        return fn
    return register


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def model(nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def error(text):
    return ("error", text)


def valid(inputs, outputs):
    return ("valid", inputs, outputs)


def i64(name, values):
    return numpy_helper.from_array(np.array(values, np.int64), name)


def f32(name, values):
    return numpy_helper.from_array(np.array(values, np.float32), name)


# --- size arithmetic ---------------------------------------------------------------------

@case("size.pad_to_2^32_squared")
def _(d):
    m = model([helper.make_node("Pad", ["x", "pads"], ["y"], name="pad")],
              [vi("x", TensorProto.FLOAT, [2, 2])], [vi("y", TensorProto.FLOAT, None)],
              [i64("pads", [2**31, 2**31, 2**31 - 2, 2**31 - 2])])
    return m, error("4294967296x4294967296")


@case("size.pad_wraps_int64")
def _(d):
    m = model([helper.make_node("Pad", ["x", "pads"], ["y"], name="pad")],
              [vi("x", TensorProto.FLOAT, [2, 2])], [vi("y", TensorProto.FLOAT, None)],
              [i64("pads", [2**62, 0, 2**62, 0])])
    return m, error("node 'pad'")


@case("size.expand_huge")
def _(d):
    m = model([helper.make_node("Expand", ["x", "s"], ["y"], name="expand")],
              [vi("x", TensorProto.FLOAT, [1, 1])], [vi("y", TensorProto.FLOAT, None)],
              [i64("s", [2**33, 2**33])])
    return m, error("8589934592x8589934592")


@case("size.broadcast_huge")
def _(d):
    m = model([helper.make_node("Add", ["a", "b"], ["y"], name="add")],
              [vi("a", TensorProto.FLOAT, [2**31, 1]), vi("b", TensorProto.FLOAT, [1, 2**31])],
              [vi("y", TensorProto.FLOAT, None)])
    return m, error("2147483648x2147483648")


@case("size.constant_of_shape_huge")
def _(d):
    m = model([helper.make_node("ConstantOfShape", ["s"], ["c"], name="cos"),
               helper.make_node("Add", ["x", "c"], ["y"], name="add")],
              [vi("x", TensorProto.FLOAT, [1])], [vi("y", TensorProto.FLOAT, None)],
              [i64("s", [2**20, 2**20, 2**20])])
    return m, error("1048576x1048576x1048576")


@case("size.tile_huge")
def _(d):
    m = model([helper.make_node("Tile", ["x", "r"], ["y"], name="tile")],
              [vi("x", TensorProto.FLOAT, [4, 4])], [vi("y", TensorProto.FLOAT, None)],
              [i64("r", [2**40, 2**40])])
    return m, error("node 'tile'")


@case("size.reshape_huge_product")
def _(d):
    m = model([helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape")],
              [vi("x", TensorProto.FLOAT, [4])], [vi("y", TensorProto.FLOAT, None)],
              [i64("s", [2**40, 2**40, -1])])
    return m, error("node 'reshape'")


@case("size.input_shape_huge")
def _(d):
    m = model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
              [vi("x", TensorProto.FLOAT, [2**40, 2**40])], [vi("y", TensorProto.FLOAT, None)])
    return m, error("1099511627776x1099511627776")


@case("size.conv_huge_pads")
def _(d):
    w = f32("w", np.ones((1, 1, 1, 1)))
    m = model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[2**62, 0, 2**62, 0])],
              [vi("x", TensorProto.FLOAT, [1, 1, 4, 4])], [vi("y", TensorProto.FLOAT, None)], [w])
    return m, error("node 'conv'")


@case("size.conv_huge_dilation")
def _(d):
    w = f32("w", np.ones((1, 1, 3, 3)))
    m = model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv", dilations=[2**62, 1])],
              [vi("x", TensorProto.FLOAT, [1, 1, 4, 4])], [vi("y", TensorProto.FLOAT, None)], [w])
    return m, error("node 'conv'")


@case("size.range_huge")
def _(d):
    m = model([helper.make_node("Range", ["a", "b", "c"], ["r"], name="range"),
               helper.make_node("Cast", ["r"], ["y"], to=TensorProto.FLOAT)],
              [vi("x", TensorProto.FLOAT, [1])], [vi("y", TensorProto.FLOAT, None)],
              [i64("a", -2**62), i64("b", 2**62), i64("c", 1)])
    return m, error("node 'range'")


# --- extreme integers ----------------------------------------------------------------------

@case("int.slice_step_int64_min")
def _(d):
    x = np.arange(10, dtype=np.float32)
    m = model([helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"], name="slice")],
              [vi("x", TensorProto.FLOAT, [10])], [vi("y", TensorProto.FLOAT, None)],
              [i64("s", [9]), i64("e", [-2**63]), i64("a", [0]), i64("st", [-2**63])])
    return m, valid({"x": x}, {"y": x[9::-(2**63)]})


@case("int.slice_extreme_bounds")
def _(d):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    m = model([helper.make_node("Slice", ["x", "s", "e", "a"], ["y"], name="slice")],
              [vi("x", TensorProto.FLOAT, [3, 4])], [vi("y", TensorProto.FLOAT, None)],
              [i64("s", [-2**63, 2**63 - 1]), i64("e", [2**63 - 1, -2**63]), i64("a", [0, 1])])
    return m, valid({"x": x}, {"y": x[:, 4:0]})


@case("int.slice_mixed_steps")
def _(d):
    # Found by the importer fuzzer in CI: a negative step on one axis and a one-element
    # negative-step axis (clamped start) on another built a copy linalg's verifier refused.
    # ONNX clamps a negative-step start into [0, dim - 1] (numpy would give an empty axis).
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    m = model([helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"], name="slice")],
              [vi("x", TensorProto.FLOAT, [2, 3, 4])], [vi("y", TensorProto.FLOAT, None)],
              [i64("s", [-236394999971841, 3]), i64("e", [-10, 0]), i64("a", [1, 2]), i64("st", [-1, -2])])
    return m, valid({"x": x}, {"y": x[:, [0], :][:, :, [3, 1]]})


@case("size.resize_taps_past_fold_bound")
def _(d):
    # Found by the importer fuzzer: a Resize to 2^40 columns built 2 GiB of tap tables at import
    # (and more) before any size check. Past the bound of what it builds: an error.
    m = model([helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="resize", mode="linear")],
              [vi("x", TensorProto.FLOAT, [1, 1, 2, 2])], [vi("y", TensorProto.FLOAT, None)],
              [i64("sizes", [1, 1, 2, 2 ** 40])])
    return m, error("node 'resize'")


@case("size.dft_twiddles_past_fold_bound")
def _(d):
    # 65536 samples into 65536 frequencies would be 2^33 twiddle factors built at import.
    m = model([helper.make_node("DFT", ["x", "n"], ["y"], name="dft")],
              [vi("x", TensorProto.FLOAT, [1, 65536, 1])], [vi("y", TensorProto.FLOAT, None)],
              [i64("n", 65536)], opset=17)
    return m, error("node 'dft'")


@case("size.range_past_fold_bound_cast")
def _(d):
    # Found by the importer fuzzer: 268,435,455 int64 values (2 GiB) folded, then their float Cast
    # (1 GiB more) took the importer past 4 GiB under ASan. Past the fold bound: an error.
    m = model([helper.make_node("Range", ["a", "b", "c"], ["r"], name="range"),
               helper.make_node("Cast", ["r"], ["y"], to=TensorProto.FLOAT)],
              [vi("x", TensorProto.FLOAT, [1])], [vi("y", TensorProto.FLOAT, None)],
              [i64("a", -2**62), i64("b", 2**62), i64("c", 34376515585)])
    return m, error("node 'range'")


@case("int.range_extreme_bounds")
def _(d):
    # Found by the importer fuzzer: start -2^63, limit 2^62 + 2^61, delta 2^52 + 2^40 + 1; the
    # count was computed in doubles and the values overflowed int64.
    start, limit, delta = -2**63, 2**62 + 2**61, 2**52 + 2**40 + 1
    ref = np.array([start + k * delta for k in range(-(-(limit - start) // delta))], np.int64)
    m = model([helper.make_node("Range", ["a", "b", "c"], ["y"], name="range")],
              [vi("x", TensorProto.FLOAT, [1])], [vi("y", TensorProto.INT64, None)],
              [i64("a", start), i64("b", limit), i64("c", delta)])
    return m, valid({"x": np.zeros(1, np.float32)}, {"y": ref})


@case("int.gather_index_out_of_range")
def _(d):
    m = model([helper.make_node("Gather", ["x", "i"], ["y"], name="gather")],
              [vi("x", TensorProto.FLOAT, [3, 4])], [vi("y", TensorProto.FLOAT, None)],
              [i64("i", [2**62])])
    return m, error("node 'gather'")


@case("int.transpose_bad_perm")
def _(d):
    m = model([helper.make_node("Transpose", ["x"], ["y"], name="transpose", perm=[0, 2**40])],
              [vi("x", TensorProto.FLOAT, [3, 4])], [vi("y", TensorProto.FLOAT, None)])
    return m, error("node 'transpose'")


@case("int.axis_huge")
def _(d):
    m = model([helper.make_node("Softmax", ["x"], ["y"], name="softmax", axis=-2**63)],
              [vi("x", TensorProto.FLOAT, [3, 4])], [vi("y", TensorProto.FLOAT, None)])
    return m, error("node 'softmax'")


# --- external data -------------------------------------------------------------------------

def _external(d, entries, data=None, filename="w.bin"):
    """A model with initializer 'w' (2 floats) stored externally with the given key/values."""
    if data is not None:
        with open(os.path.join(d, filename), "wb") as f:
            f.write(data)
    w = f32("w", [1.0, 2.0])
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    for k, v in entries:
        w.external_data.add(key=k, value=v)
    return model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
                 [vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, [2])], [w])


TWO_FLOATS = np.array([1.0, 2.0], np.float32).tobytes()


@case("external.offset_not_a_number")
def _(d):
    return _external(d, [("location", "w.bin"), ("offset", "abc")], TWO_FLOATS), error("offset 'abc'")


@case("external.offset_out_of_range")
def _(d):
    return _external(d, [("location", "w.bin"), ("offset", "99999999999999999999999")], TWO_FLOATS), \
        error("offset '99999999999999999999999'")


@case("external.length_negative")
def _(d):
    return _external(d, [("location", "w.bin"), ("length", "-8")], TWO_FLOATS), error("length '-8'")


@case("external.length_wrong")
def _(d):
    return _external(d, [("location", "w.bin"), ("length", "4")], TWO_FLOATS), error("length 4")


@case("external.offset_past_end")
def _(d):
    return _external(d, [("location", "w.bin"), ("offset", "8")], TWO_FLOATS), error("offset 8")


@case("external.directory")
def _(d):
    os.mkdir(os.path.join(d, "adir"))
    return _external(d, [("location", "adir")]), error("not a regular file")


@case("external.fifo")
def _(d):
    os.mkfifo(os.path.join(d, "pipe"))
    return _external(d, [("location", "pipe")]), error("not a regular file")


@case("external.symlink_out_of_folder")
def _(d):
    outside = tempfile.mkdtemp()
    with open(os.path.join(outside, "secret"), "wb") as f:
        f.write(TWO_FLOATS)
    os.symlink(os.path.join(outside, "secret"), os.path.join(d, "link.bin"))
    return _external(d, [("location", "link.bin")]), error("outside the model's directory")


@case("external.symlinked_folder_out")
def _(d):
    outside = tempfile.mkdtemp()
    with open(os.path.join(outside, "w.bin"), "wb") as f:
        f.write(TWO_FLOATS)
    os.symlink(outside, os.path.join(d, "sub"))
    return _external(d, [("location", "sub/w.bin")]), error("outside the model's directory")


@case("external.parent_component")
def _(d):
    return _external(d, [("location", "../w.bin")]), error("inside the model's directory")


@case("external.absolute")
def _(d):
    return _external(d, [("location", "/etc/passwd")]), error("inside the model's directory")


@case("external.nul_in_location")
def _(d):
    return _external(d, [("location", "w.bin\0.txt")], TWO_FLOATS), error("inside the model's directory")


@case("external.missing_file")
def _(d):
    return _external(d, [("location", "nothere.bin")]), error("nothere.bin")


@case("external.dots_in_name_ok")
def _(d):
    m = _external(d, [("location", "w..v2.bin")], TWO_FLOATS, filename="w..v2.bin")
    x = np.array([3.0, 4.0], np.float32)
    return m, valid({"x": x}, {"y": x + np.array([1.0, 2.0], np.float32)})


@case("external.symlink_inside_ok")
def _(d):
    os.mkdir(os.path.join(d, "data"))
    with open(os.path.join(d, "data", "real.bin"), "wb") as f:
        f.write(TWO_FLOATS)
    os.symlink("data/real.bin", os.path.join(d, "w.bin"))
    m = _external(d, [("location", "w.bin"), ("offset", "0"), ("length", "8")])
    x = np.array([3.0, 4.0], np.float32)
    return m, valid({"x": x}, {"y": x + np.array([1.0, 2.0], np.float32)})


# --- invalid graphs ------------------------------------------------------------------------

@case("graph.two_nodes_one_output")
def _(d):
    m = model([helper.make_node("Relu", ["x"], ["t"], name="a"), helper.make_node("Neg", ["x"], ["t"], name="b"),
               helper.make_node("Abs", ["t"], ["y"], name="c")],
              [vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, [2])])
    return m, error("'t'")


@case("graph.two_initializers_one_name")
def _(d):
    m = model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
              [vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, [2])],
              [f32("w", [1, 2]), f32("w", [3, 4])])
    return m, error("two initializers are named 'w'")


@case("graph.two_inputs_one_name")
def _(d):
    m = model([helper.make_node("Add", ["x", "x"], ["y"], name="add")],
              [vi("x", TensorProto.FLOAT, [2]), vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, [2])])
    return m, error("two inputs are named 'x'")


@case("graph.node_shadows_input")
def _(d):
    m = model([helper.make_node("Relu", ["x"], ["x"], name="relu"), helper.make_node("Neg", ["x"], ["y"], name="neg")],
              [vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, [2])])
    return m, error("'x'")


@case("graph.node_shadows_initializer")
def _(d):
    m = model([helper.make_node("Relu", ["x"], ["w"], name="relu"), helper.make_node("Add", ["x", "w"], ["y"], name="add")],
              [vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, [2])], [f32("w", [1, 2])])
    return m, error("'w'")


@case("graph.use_before_definition")
def _(d):
    m = model([helper.make_node("Neg", ["t"], ["y"], name="neg"), helper.make_node("Relu", ["x"], ["t"], name="relu")],
              [vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, [2])])
    return m, error("'t'")


@case("graph.conv_kernel_shape_mismatch")
def _(d):
    # Found by the importer fuzzer: kernel_shape [3, 1] with a 7x1 weight.
    w = f32("w", np.ones((3, 4, 7, 1)))
    m = model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv", kernel_shape=[3, 1], pads=[3, 0, 3, 0])],
              [vi("x", TensorProto.FLOAT, [1, 4, 12, 12])], [vi("y", TensorProto.FLOAT, None)], [w])
    return m, error("kernel_shape 3x1 differs from the weight's spatial shape 7x1")


@case("graph.output_listed_twice")
def _(d):
    m = model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
              [vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, [2]), vi("y", TensorProto.FLOAT, [2])])
    return m, error("'y'")


@case("graph.one_node_output_twice")
def _(d):
    m = model([helper.make_node("Split", ["x"], ["a", "a"], name="split", axis=0)],
              [vi("x", TensorProto.FLOAT, [4])], [vi("a", TensorProto.FLOAT, [2])])
    return m, error("'a'")


# An input ONNX defines as one value, given empty or longer (the fuzzer's Clip with a max of
# shape 0x0x8128 read element 0 of nothing): an error naming the input and its shape.
ONE_VALUE = {  # case -> (op, opset, initializers in input order, expected text)
    "clip_min_0x0x8128": ("Clip", 13, [("lo", np.zeros((0, 0, 8128), np.float32)), ("hi", np.float32(1.5))],
                          "min (input 1) must hold one value; it has shape 0x0x8128"),
    "clip_max_empty": ("Clip", 13, [("lo", np.float32(0)), ("hi", np.zeros((0,), np.float32))],
                       "max (input 2) must hold one value; it has shape 0"),
    "clip_max_two": ("Clip", 13, [("lo", np.float32(0)), ("hi", np.array([1, 2], np.float32))],
                     "max (input 2) must hold one value; it has shape 2"),
    "range_start_empty": ("Range", 13, [("s", np.zeros((0,), np.float32)), ("l", np.float32(4)),
                                        ("dl", np.float32(1))], "start (input 0) must hold one value; it has shape 0"),
    "range_limit_empty": ("Range", 13, [("s", np.float32(0)), ("l", np.zeros((0,), np.float32)),
                                        ("dl", np.float32(1))], "limit (input 1) must hold one value; it has shape 0"),
    "range_delta_2x0": ("Range", 13, [("s", np.float32(0)), ("l", np.float32(4)), ("dl", np.zeros((2, 0), np.float32))],
                        "delta (input 2) must hold one value; it has shape 2x0"),
    "dropout_training_empty": ("Dropout", 13, [("r", np.float32(0.5)), ("t", np.zeros((0,), np.bool_))],
                               "training_mode (input 2) must hold one value; it has shape 0"),
    "trilu_k_empty": ("Trilu", 14, [("x", np.ones((3, 3), np.float32)), ("k", np.zeros((0,), np.int64))],
                      "k (input 1) must hold one value; it has shape 0"),
}


def _one_value(op, opset, inits, text):
    def build(d):
        names = [n for n, _ in inits]
        # Clip and Dropout take a run-time x first; Range and Trilu only constants here.
        takes_x = op in ("Clip", "Dropout")
        node = helper.make_node(op, (["x"] if takes_x else []) + names, ["y"], name="n")
        m = model([node], [vi("x", TensorProto.FLOAT, [2, 3])] if takes_x else [],
                  [vi("y", TensorProto.FLOAT, None)],
                  [numpy_helper.from_array(np.asarray(v), n) for n, v in inits], opset=opset)
        return m, error(text)
    return build


for _name, _spec in ONE_VALUE.items():
    CASES[f"one_value.{_name}"] = _one_value(*_spec)


# --- undefined arithmetic and reads past a tensor (fuzzer and review findings) -----------------

I64_MIN, I64_MAX = -2**63, 2**63 - 1


@case("graph.node_without_outputs")
def _(d):
    m = model([helper.make_node("Split", ["x"], [], name="split", axis=0)],
              [vi("x", TensorProto.FLOAT, [4])], [vi("x", TensorProto.FLOAT, [4])])
    return m, error("node 'split' (Split, domain ai.onnx, opset 13): has no outputs")


@case("int.split_sizes_overflow")
def _(d):
    # The sizes' sum wraps to exactly 4, the axis: it was accepted, then sliced past the input.
    outs = ["a", "b", "c"]
    m = model([helper.make_node("Split", ["x", "s"], outs, name="split", axis=0)],
              [vi("x", TensorProto.FLOAT, [4])], [vi(o, TensorProto.FLOAT, None) for o in outs],
              [i64("s", [I64_MAX, I64_MAX, 6])])
    return m, error("split sizes do not cover axis 0")


@case("int.range_float_limit_-1e30")
def _(d):
    # ceil((limit - start) / delta) is -1e30 steps: no elements (converting it to int64 was undefined).
    x = np.array([1, 2], np.float32)
    m = model([helper.make_node("Range", ["s", "l", "dl"], ["r"], name="range"),
               helper.make_node("Concat", ["x", "r"], ["y"], name="concat", axis=0)],
              [vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, None)],
              [f32("s", 0), f32("l", -1e30), f32("dl", 1)])
    return m, valid({"x": x}, {"y": x})


@case("type.range_mixed_types")
def _(d):
    # An int64 range with a float delta of 0.5 divided by the delta truncated to 0.
    m = model([helper.make_node("Range", ["s", "l", "dl"], ["y"], name="range")],
              [vi("x", TensorProto.FLOAT, [1])], [vi("y", TensorProto.INT64, None)],
              [i64("s", 0), i64("l", 4), f32("dl", 0.5)])
    return m, error("start, limit and delta must have one type, got int64, int64 and float")


@case("shape.matmul_integer_rank1_zero_point_per_row")
def _(d):
    # Found by the importer fuzzer: a's zero point per row of a 1-D a read shape[-1].
    m = model([helper.make_node("MatMulInteger", ["a", "b", "az"], ["y"], name="mmi")],
              [vi("a", TensorProto.UINT8, [5])], [vi("y", TensorProto.INT32, None)],
              [numpy_helper.from_array(np.ones((5, 3), np.uint8), "b"),
               numpy_helper.from_array(np.zeros(2, np.uint8), "az")], opset=13)
    return m, error("zero point (input 2) of shape 2 must be one value for a matrix of rank 1")


@case("shape.dequantize_scalar_with_scale_[1]")
def _(d):
    # A per-tensor scale of shape [1] broadcast a constant scalar x to [1] (out of bounds).
    x = np.array(1.5, np.float32)
    m = model([helper.make_node("DequantizeLinear", ["q", "s", "z"], ["dq"], name="dq"),
               helper.make_node("Add", ["x", "dq"], ["y"], name="add")],
              [vi("x", TensorProto.FLOAT, [])], [vi("y", TensorProto.FLOAT, None)],
              [numpy_helper.from_array(np.array(-6, np.int8), "q"), f32("s", [0.5]),
               numpy_helper.from_array(np.array([2], np.int8), "z")])
    return m, valid({"x": x}, {"y": np.array(1.5 + (-6 - 2) * 0.5, np.float32)})


@case("edge.loop_concat_of_empty_carried")
def _(d):
    # A loop carrying a [0] tensor whose body concatenates it with itself (a concat of nothing),
    # beside a sum it returns: the empty carried value had a 0-byte buffer in no arena.
    body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"]),
         helper.make_node("Concat", ["v", "v"], ["v_out"], axis=0),
         helper.make_node("Add", ["s", "x"], ["s_out"])],
        "body", [vi("i", TensorProto.INT64, []), vi("c", TensorProto.BOOL, []), vi("v", TensorProto.FLOAT, [0]),
                 vi("s", TensorProto.FLOAT, [2])],
        [vi("c_out", TensorProto.BOOL, []), vi("v_out", TensorProto.FLOAT, [0]), vi("s_out", TensorProto.FLOAT, [2])])
    x = np.array([1, 2], np.float32)
    m = model([helper.make_node("Loop", ["m", "", "v0", "x"], ["v", "s"], name="loop", body=body),
               helper.make_node("Concat", ["s", "v"], ["y"], name="concat", axis=0)],
              [vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, None)],
              [i64("m", 2), f32("v0", np.zeros(0))])
    return m, valid({"x": x}, {"y": 3 * x})


@case("interface.bool_bytes_other_than_0_and_1")
def _(d):
    # A bool input's bytes may be anything (raw gRPC contents, a .npy written byte by byte): any
    # non-zero byte is true, as NumPy and ONNX read it. Not and Cast used to pass 2, 128, 255 on.
    raw = np.array([2, 128, 255, 0, 1, 64], np.uint8)
    b = raw.view(np.bool_)
    truth = raw != 0
    m = model([helper.make_node("Not", ["b"], ["n"], name="not"),
               helper.make_node("Cast", ["b"], ["i"], name="cast", to=TensorProto.INT32),
               helper.make_node("Identity", ["b"], ["same"], name="same")],
              [vi("b", TensorProto.BOOL, [6])],
              [vi("n", TensorProto.BOOL, [6]), vi("i", TensorProto.INT32, [6]), vi("same", TensorProto.BOOL, [6])])
    return m, valid({"b": b}, {"n": ~truth, "i": truth.astype(np.int32), "same": truth})


@case("edge.loops_nested_32_deep")
def _(d):
    # 32 nested Loops, the nesting Hexir compiles: protobuf's default recursion limit (100)
    # refused the file ("protobuf parse failed") before the importer saw it.
    def level(depth):
        if depth == 0:
            nodes = [helper.make_node("Add", ["v", "one"], ["v_out"], name="add")]
        else:
            nodes = [helper.make_node("Loop", ["m", "", "v"], ["v_out"], name=f"loop{depth}", body=level(depth - 1))]
        return helper.make_graph(
            [helper.make_node("Identity", ["c"], ["c_out"], name=f"id{depth}")] + nodes, f"body{depth}",
            [vi("i", TensorProto.INT64, []), vi("c", TensorProto.BOOL, []), vi("v", TensorProto.FLOAT, [2])],
            [vi("c_out", TensorProto.BOOL, []), vi("v_out", TensorProto.FLOAT, [2])])
    x = np.array([1, 2], np.float32)
    m = model([helper.make_node("Loop", ["m", "", "x"], ["y"], name="loop32", body=level(31))],
              [vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, [2])],
              [i64("m", 1), f32("one", np.ones(2))])
    return m, valid({"x": x}, {"y": x + 1})


@case("size.average_pool_output_huge")
def _(d):
    m = model([helper.make_node("AveragePool", ["x"], ["y"], name="pool", kernel_shape=[1, 1], pads=[2**31] * 4)],
              [vi("x", TensorProto.FLOAT, [1, 1, 1, 1])], [vi("y", TensorProto.FLOAT, None)])
    return m, error("an output of 4294967297x4294967297 positions is too large")


@case("size.matmul_k0_2^40_zeros")
def _(d):
    # Sums over K = 0 are zeros: 2^30 x 2^10 of them were built on the host (out of memory).
    # Past the fold bound they are a fill at run time, here 4 TiB: the size error.
    m = model([helper.make_node("MatMul", ["a", "b"], ["y"], name="matmul")],
              [vi("a", TensorProto.FLOAT, [2**30, 0]), vi("b", TensorProto.FLOAT, [0, 2**10])],
              [vi("y", TensorProto.FLOAT, None)])
    return m, error("1073741824x1024")


@case("edge.matmul_k0_past_fold_bound")
def _(d):
    # 2^29 zeros (past the 2^27 fold bound, 2 GiB): a fill at run time, of which a corner is read.
    m = model([helper.make_node("MatMul", ["a", "b"], ["z"], name="matmul"),
               helper.make_node("Slice", ["z", "st", "en"], ["c"], name="slice"),
               helper.make_node("Add", ["x", "c"], ["y"], name="add")],
              [vi("x", TensorProto.FLOAT, [2, 3]), vi("a", TensorProto.FLOAT, [2**15, 0]),
               vi("b", TensorProto.FLOAT, [0, 2**14])], [vi("y", TensorProto.FLOAT, None)],
              [i64("st", [5, 7]), i64("en", [7, 10])])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    return m, valid({"x": x, "a": np.zeros((2**15, 0), np.float32), "b": np.zeros((0, 2**14), np.float32)}, {"y": x})


@case("size.concat_of_empty_2^38_rows")
def _(d):
    # Empty inputs of 2^38 rows (1 TiB if they held a column): folding their concat looped over
    # every empty row (hours); as a gather of nothing too.
    m = model([helper.make_node("Concat", ["a", "a"], ["c"], name="concat", axis=1),
               helper.make_node("Gather", ["a", "i"], ["g"], name="gather", axis=1),
               helper.make_node("Shape", ["c"], ["sc"], name="shape_c"),
               helper.make_node("Shape", ["g"], ["sg"], name="shape_g"),
               helper.make_node("Concat", ["sc", "sg"], ["y"], name="shapes", axis=0)],
              [vi("a", TensorProto.FLOAT, [2**38, 0])], [vi("y", TensorProto.INT64, None)],
              [i64("i", np.zeros(0, np.int64))])
    return m, valid({"a": np.zeros((2**38, 0), np.float32)}, {"y": np.array([2**38, 0, 2**38, 0], np.int64)})


@case("size.matmul_k0_huge")
def _(d):
    # Sums over K = 0 are zeros: of 2^38 x 2^38 they were folded on the host before any size check.
    m = model([helper.make_node("MatMul", ["a", "b"], ["y"], name="matmul")],
              [vi("a", TensorProto.FLOAT, [2**38, 0]), vi("b", TensorProto.FLOAT, [0, 2**38])],
              [vi("y", TensorProto.FLOAT, None)])
    return m, error("274877906944x274877906944")


@case("size.add_of_empty_inputs_huge")
def _(d):
    # Empty inputs (folded as constants) whose other dimensions broadcast past int64: 2^37 x 2^37 x 0.
    m = model([helper.make_node("Add", ["a", "b"], ["c"], name="add"),
               helper.make_node("Add", ["x", "c"], ["y"], name="add2")],
              [vi("x", TensorProto.FLOAT, [1]), vi("a", TensorProto.FLOAT, [2**37, 1, 0]),
               vi("b", TensorProto.FLOAT, [1, 2**37, 0])], [vi("y", TensorProto.FLOAT, None)])
    return m, error("137438953472x137438953472x0")


@case("size.initializer_empty_with_huge_dims")
def _(d):
    # Dimensions after a 0 were not bounded: two [0, 2^62] concatenated on axis 1 overflowed.
    a = TensorProto(name="a", data_type=TensorProto.FLOAT, dims=[0, 2**62])
    m = model([helper.make_node("Concat", ["a", "a"], ["c"], name="concat", axis=1),
               helper.make_node("Add", ["x", "x"], ["y"], name="add")],
              [vi("x", TensorProto.FLOAT, [1])], [vi("y", TensorProto.FLOAT, None)], [a])
    return m, error("tensor 'a' of shape 0x4611686018427387904 has dimensions whose product")


@case("int.abs_int64_min")
def _(d):
    x = np.array([0, 5], np.int64)
    m = model([helper.make_node("Abs", ["c"], ["a"], name="abs"),
               helper.make_node("Add", ["x", "a"], ["y"], name="add")],
              [vi("x", TensorProto.INT64, [2])], [vi("y", TensorProto.INT64, None)],
              [i64("c", [I64_MIN, -3])])
    return m, valid({"x": x}, {"y": np.array([I64_MIN, 8], np.int64)})


@case("int.min_max_pad_clip_int64_extremes")
def _(d):
    # Integer constants went through double: INT64_MAX became 2^63, out of int64's range.
    x = np.array([I64_MIN, -1, 0, 7, I64_MAX], np.int64)
    m = model([helper.make_node("Min", ["x", "big"], ["mn"], name="min"),
               helper.make_node("Max", ["mn", "small"], ["mx"], name="max"),
               helper.make_node("Pad", ["mx", "pads", "big"], ["p"], name="pad"),
               helper.make_node("Clip", ["p", "small", "big"], ["y"], name="clip")],
              [vi("x", TensorProto.INT64, [5])], [vi("y", TensorProto.INT64, None)],
              [i64("big", I64_MAX), i64("small", I64_MIN + 1), i64("pads", [1, 1])])
    ref = np.concatenate([[I64_MAX], np.maximum(x, I64_MIN + 1), [I64_MAX]]).astype(np.int64)
    return m, valid({"x": x}, {"y": ref})


@case("int.min_of_nearby_large_integers")
def _(d):
    # [2^53, 2^53 + 1] is not a splat, though the two are one double.
    x = np.array([2**60, 2**60], np.int64)
    m = model([helper.make_node("Min", ["x", "c"], ["y"], name="min")],
              [vi("x", TensorProto.INT64, [2])], [vi("y", TensorProto.INT64, None)],
              [i64("c", [2**53, 2**53 + 1])])
    return m, valid({"x": x}, {"y": np.array([2**53, 2**53 + 1], np.int64)})


@case("type.clip_bounds_of_another_type")
def _(d):
    # A float +inf bound on an int64 x became INT64_MIN (everything clamped to it).
    m = model([helper.make_node("Clip", ["x", "lo", "hi"], ["y"], name="clip")],
              [vi("x", TensorProto.INT64, [3])], [vi("y", TensorProto.INT64, None)],
              [i64("lo", 0), f32("hi", np.inf)])
    return m, error("max (input 2) is float and x int64; Clip takes bounds of x's type")


@case("int.compare_nearby_large_integers")
def _(d):
    # Folded through double, 2^53 and 2^53 + 1 were equal.
    x = np.array([True, True])
    m = model([helper.make_node("Equal", ["a", "b"], ["e"], name="eq"),
               helper.make_node("Less", ["a", "b"], ["l"], name="lt"),
               helper.make_node("And", ["e", "x"], ["y0"], name="and0"),
               helper.make_node("And", ["l", "x"], ["y1"], name="and1")],
              [vi("x", TensorProto.BOOL, [2])], [vi("y0", TensorProto.BOOL, None), vi("y1", TensorProto.BOOL, None)],
              [i64("a", [2**53, 2**53 + 1]), i64("b", [2**53 + 1, 2**53 + 1])])
    return m, valid({"x": x}, {"y0": np.array([False, True]), "y1": np.array([True, False])})


@case("int.cast_nan_to_int64")
def _(d):
    # A folded float -> int64 cast of NaN and 1e30 (undefined in C++): INT64_MIN, as x86 and NumPy.
    x = np.array([1, 1], np.int64)
    with np.errstate(invalid="ignore"):
        ref = np.array([np.nan, 1e30], np.float32).astype(np.int64) + x
    m = model([helper.make_node("Cast", ["c"], ["i"], name="cast", to=TensorProto.INT64),
               helper.make_node("Add", ["x", "i"], ["y"], name="add")],
              [vi("x", TensorProto.INT64, [2])], [vi("y", TensorProto.INT64, None)],
              [f32("c", [np.nan, 1e30])])
    return m, valid({"x": x}, {"y": ref})


@case("int.cast_nan_and_3e9_to_int32")
def _(d):
    # To int32: NaN and 3e9 are INT32_MIN (x86 and NumPy); they folded to 0 and -1294967296.
    x = np.array([1, 1, 1], np.int32)
    with np.errstate(invalid="ignore"):
        ref = np.array([np.nan, 3e9, -7.5], np.float32).astype(np.int32) + x
    m = model([helper.make_node("Cast", ["c"], ["i"], name="cast", to=TensorProto.INT32),
               helper.make_node("Add", ["x", "i"], ["y"], name="add")],
              [vi("x", TensorProto.INT32, [3])], [vi("y", TensorProto.INT32, None)],
              [f32("c", [np.nan, 3e9, -7.5])])
    return m, valid({"x": x}, {"y": ref})


@case("type.reshape_float_nan_shape")
def _(d):
    # Found by the importer fuzzer: a float shape holding NaN, converted to int64.
    m = model([helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape")],
              [vi("x", TensorProto.FLOAT, [2, 3])], [vi("y", TensorProto.FLOAT, None)],
              [f32("s", [np.nan])])
    return m, error("node 'reshape'")


@case("int.int8_int32_data_out_of_range")
def _(d):
    # int8 values in int32_data beyond a byte: truncated to it, as raw bytes would be.
    w = helper.make_tensor("w", TensorProto.INT8, [2], [1000, -129])
    x = np.zeros(2, np.float32)
    m = model([helper.make_node("DequantizeLinear", ["w", "s"], ["dq"], name="dq"),
               helper.make_node("Add", ["x", "dq"], ["y"], name="add")],
              [vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, None)], [w, f32("s", 1.0)])
    return m, valid({"x": x}, {"y": np.array([1000, -129]).astype(np.int8).astype(np.float32)})


# --- edge shapes that are valid --------------------------------------------------------------

UNARY = {"Relu": lambda x: np.maximum(x, 0), "Neg": np.negative, "Abs": np.abs, "Exp": np.exp,
         "Tanh": np.tanh, "Sigmoid": lambda x: 1 / (1 + np.exp(-x)), "Sqrt": lambda x: np.sqrt(np.abs(x)),
         "Floor": np.floor, "Ceil": np.ceil}
BINARY = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide, "Max": np.maximum,
          "Min": np.minimum}


def _edge_shapes():
    return {"rank0": [], "zero_dim": [3, 0, 2], "rank8": [1, 2, 1, 2, 1, 3, 1, 2]}


def _unary_case(op, shape):
    def build(d):
        x = np.random.default_rng(1).uniform(0.5, 2, shape).astype(np.float32)
        nodes = [helper.make_node(op, ["x"], ["y"], name=op.lower())]
        inp = x if op != "Sqrt" else x
        ref = UNARY[op](inp.astype(np.float64)).astype(np.float32)
        return model(nodes, [vi("x", TensorProto.FLOAT, shape)], [vi("y", TensorProto.FLOAT, shape)]), \
            valid({"x": x}, {"y": ref})
    return build


def _binary_case(op, shape):
    def build(d):
        rng = np.random.default_rng(2)
        a = rng.uniform(0.5, 2, shape).astype(np.float32)
        b = rng.uniform(0.5, 2, shape).astype(np.float32)
        ref = BINARY[op](a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
        nodes = [helper.make_node(op, ["a", "b"], ["y"], name=op.lower())]
        return model(nodes, [vi("a", TensorProto.FLOAT, shape), vi("b", TensorProto.FLOAT, shape)],
                     [vi("y", TensorProto.FLOAT, shape)]), valid({"a": a, "b": b}, {"y": ref})
    return build


def _erf(x):
    import math
    return np.vectorize(math.erf, otypes=[np.float64])(x)


# Ops with attributes or several inputs at the edge shapes: (nodes, inputs -> reference,
# extra initializers); x is the input, of the edge shape.
def _structured(shape):
    r = len(shape)
    ops = {
        "Softmax": ([helper.make_node("Softmax", ["x"], ["y"], axis=-1)] if r else None,
                    lambda x: np.exp(x - x.max(-1, keepdims=True)) / np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True)
                    if x.size else x, []),
        "ReduceSum": ([helper.make_node("ReduceSum", ["x"], ["y"], keepdims=1)], lambda x: x.sum(keepdims=True), []),
        "ReduceMean": ([helper.make_node("ReduceMean", ["x"], ["y"], keepdims=0)] if np.prod(shape) else None,
                       lambda x: np.array(x.mean()), []),
        "Transpose": ([helper.make_node("Transpose", ["x"], ["y"], perm=list(range(r))[::-1])],
                      lambda x: x.transpose(list(range(r))[::-1]), []),
        "Reshape": ([helper.make_node("Reshape", ["x", "flat"], ["y"])], lambda x: x.reshape(-1),
                    [i64("flat", [-1])]),
        "Concat": ([helper.make_node("Concat", ["x", "x"], ["y"], axis=0)] if r else None,
                   lambda x: np.concatenate([x, x], 0), []),
        "Cast": ([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.INT32)],
                 lambda x: x.astype(np.int32), []),
        "Pow": ([helper.make_node("Pow", ["x", "two"], ["y"])], lambda x: x * x, [f32("two", 2.0)]),
        "Clip": ([helper.make_node("Clip", ["x", "lo", "hi"], ["y"])], lambda x: np.clip(x, 0.8, 1.5),
                 [f32("lo", 0.8), f32("hi", 1.5)]),
        "LeakyRelu": ([helper.make_node("LeakyRelu", ["x"], ["y"], alpha=0.1)],
                      lambda x: np.where(x > 0, x, 0.1 * x), []),
        "Erf": ([helper.make_node("Erf", ["x"], ["y"])], _erf, []),
        "Where": ([helper.make_node("Greater", ["x", "one"], ["c"]), helper.make_node("Where", ["c", "x", "zero"], ["y"])],
                  lambda x: np.where(x > 1, x, 0), [f32("one", 1.0), f32("zero", 0.0)]),
        "MatMul": ([helper.make_node("MatMul", ["x", "w"], ["y"])] if r >= 1 else None,
                   lambda x: x @ np.full((shape[-1], 3), 0.5, np.float32) if r else None,
                   [f32("w", np.full((shape[-1] if r else 1, 3), 0.5))]),
    }
    return {k: v for k, v in ops.items() if v[0] is not None}


def _structured_case(op, shape):
    def build(d):
        nodes, ref, inits = _structured(shape)[op]
        x = np.random.default_rng(3).uniform(0.5, 2, shape).astype(np.float32)
        y = np.asarray(ref(x.astype(np.float64)))
        y = y.astype(np.int32 if op == "Cast" else np.float32)
        if op == "Cast":
            y = x.astype(np.int32)
        out_type = TensorProto.INT32 if op == "Cast" else TensorProto.FLOAT
        return model(nodes, [vi("x", TensorProto.FLOAT, shape)], [vi("y", out_type, None)], inits), \
            valid({"x": x}, {"y": y})
    return build


for _name, _shape in _edge_shapes().items():
    for _op in _structured(_shape):
        CASES[f"edge.{_name}.{_op}"] = _structured_case(_op, _shape)
    for _op in UNARY:
        CASES[f"edge.{_name}.{_op}"] = _unary_case(_op, _shape)
    for _op in BINARY:
        CASES[f"edge.{_name}.{_op}"] = _binary_case(_op, _shape)


@case("edge.empty_slice")
def _(d):
    x = np.arange(10, dtype=np.float32)
    m = model([helper.make_node("Slice", ["x", "s", "e"], ["t"], name="slice"),
               helper.make_node("Concat", ["t", "x"], ["y"], name="concat", axis=0)],
              [vi("x", TensorProto.FLOAT, [10])], [vi("y", TensorProto.FLOAT, None)],
              [i64("s", [10]), i64("e", [10])])
    return m, valid({"x": x}, {"y": x})


@case("edge.empty_slice_output")
def _(d):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    m = model([helper.make_node("Slice", ["x", "s", "e", "a"], ["y"], name="slice")],
              [vi("x", TensorProto.FLOAT, [3, 4])], [vi("y", TensorProto.FLOAT, None)],
              [i64("s", [2]), i64("e", [1]), i64("a", [1])])
    return m, valid({"x": x}, {"y": x[:, 2:1]})


@case("edge.reverse_empty_axis")
def _(d):
    # x[:, ::-1] of an empty axis (ONNX: starts -1, ends INT64_MIN, steps -1): clamping into
    # [0, -1] broke std::clamp's precondition (found in review).
    x = np.zeros((3, 0), np.float32)
    m = model([helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"], name="slice")],
              [vi("x", TensorProto.FLOAT, [3, 0])], [vi("y", TensorProto.FLOAT, None)],
              [i64("s", [-1]), i64("e", [-2**63]), i64("a", [1]), i64("st", [-1])])
    return m, valid({"x": x}, {"y": x[:, ::-1]})


@case("edge.matmul_k0")
def _(d):
    a = np.zeros((3, 0), np.float32)
    b = np.zeros((0, 4), np.float32)
    m = model([helper.make_node("MatMul", ["a", "b"], ["t"], name="matmul"),
               helper.make_node("Add", ["t", "one"], ["y"], name="add")],
              [vi("a", TensorProto.FLOAT, [3, 0])], [vi("y", TensorProto.FLOAT, None)],
              [numpy_helper.from_array(b, "b"), f32("one", 1.0)])
    return m, valid({"a": a}, {"y": np.ones((3, 4), np.float32)})


@case("edge.gemm_k0_bias")
def _(d):
    a = np.zeros((2, 0), np.float32)
    m = model([helper.make_node("Gemm", ["a", "b", "c"], ["y"], name="gemm")],
              [vi("a", TensorProto.FLOAT, [2, 0])], [vi("y", TensorProto.FLOAT, None)],
              [numpy_helper.from_array(np.zeros((0, 3), np.float32), "b"), f32("c", [1.0, 2.0, 3.0])])
    return m, valid({"a": a}, {"y": np.tile(np.array([1.0, 2.0, 3.0], np.float32), (2, 1))})


# Weights, biases and statistics of another element type than the data (the importer fuzzer
# found a Gemm whose int32 C reached an arith.addf): refused by the type constraint.
@case("type.gemm_int_bias")
def _(d):
    m = model([helper.make_node("Gemm", ["a", "b", "c"], ["y"], name="gemm", transA=1)],
              [vi("a", TensorProto.FLOAT, [5, 3])], [vi("y", TensorProto.FLOAT, None)],
              [f32("b", np.ones((5, 4))), numpy_helper.from_array(np.ones(4, np.int32), "c")])
    return m, error("node 'gemm' (Gemm, domain ai.onnx, opset 13): input 2 has element type int32; Gemm takes "
                    "float tensors here")


@case("type.conv_int_bias")
def _(d):
    m = model([helper.make_node("Conv", ["x", "w", "b"], ["y"], name="conv")],
              [vi("x", TensorProto.FLOAT, [1, 2, 4, 4])], [vi("y", TensorProto.FLOAT, None)],
              [f32("w", np.ones((3, 2, 1, 1))), i64("b", [1, 2, 3])])
    return m, error("input 2 has element type int64; Conv takes float tensors here")


@case("type.batchnorm_int_mean")
def _(d):
    m = model([helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], name="bn")],
              [vi("x", TensorProto.FLOAT, [1, 2, 3])], [vi("y", TensorProto.FLOAT, None)],
              [f32("s", [1, 1]), f32("b", [0, 0]), i64("m", [0, 0]), f32("v", [1, 1])])
    return m, error("input 3 has element type int64; BatchNormalization takes float tensors here")


@case("type.layernorm_int_scale")
def _(d):
    m = model([helper.make_node("LayerNormalization", ["x", "s"], ["y"], name="ln")],
              [vi("x", TensorProto.FLOAT, [2, 3])], [vi("y", TensorProto.FLOAT, None)],
              [i64("s", [1, 1, 1])], opset=17)
    return m, error("input 1 has element type int64; LayerNormalization takes float tensors here")


@case("edge.reduce_sum_rank0")
def _(d):
    x = np.array(2.5, np.float32)
    m = model([helper.make_node("ReduceSum", ["x"], ["y"], name="sum", keepdims=0)],
              [vi("x", TensorProto.FLOAT, [])], [vi("y", TensorProto.FLOAT, None)])
    return m, valid({"x": x}, {"y": x})


@case("edge.reduce_over_empty_axis")
def _(d):
    x = np.zeros((3, 0), np.float32)
    m = model([helper.make_node("ReduceSum", ["x", "ax"], ["s"], name="sum", keepdims=1),
               helper.make_node("ReduceMax", ["x"], ["m"], name="max", axes=[1], keepdims=0)],
              [vi("x", TensorProto.FLOAT, [3, 0])], [vi("s", TensorProto.FLOAT, None), vi("m", TensorProto.FLOAT, None)],
              [i64("ax", [1])])
    return m, valid({"x": x}, {"s": np.zeros((3, 1), np.float32), "m": np.full((3,), -np.inf, np.float32)})


@case("edge.concat_with_empty")
def _(d):
    a = np.zeros((0, 3), np.float32)
    b = np.arange(6, dtype=np.float32).reshape(2, 3)
    m = model([helper.make_node("Concat", ["a", "b"], ["y"], name="concat", axis=0)],
              [vi("a", TensorProto.FLOAT, [0, 3]), vi("b", TensorProto.FLOAT, [2, 3])],
              [vi("y", TensorProto.FLOAT, [2, 3])])
    return m, valid({"a": a, "b": b}, {"y": b})


# --- the harness ---------------------------------------------------------------------------

def run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return None


KINDS = {}  # name -> "error" or "valid", as each case says


TARGET_ARGS = []  # --target for every compilation


def check(name, bin_dir, root):
    d = os.path.join(root, name)
    os.makedirs(d)
    m, expect = CASES[name](d)
    KINDS[name] = expect[0]
    path = os.path.join(d, "model.onnx")
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    hxb = os.path.join(d, "model.hxb")
    r = run([os.path.join(bin_dir, "hexir-compile"), path, "-o", hxb, *TARGET_ARGS])
    if r is None:
        return f"hexir-compile did not finish within {TIMEOUT} s"
    text = r.stdout + r.stderr
    leaked = [s for s in INTERNALS if s in text]
    if r.returncode < 0 or leaked:
        return f"hexir-compile crashed or leaked internals (exit {r.returncode}):\n{text}"
    if expect[0] == "error":
        if r.returncode != 1 or "error:" not in text or expect[1] not in text:
            return f"expected exit 1 with {expect[1]!r}, got exit {r.returncode}:\n{text}"
        if os.path.exists(hxb):
            return "a failed compilation left an output file"
        return None
    if r.returncode != 0:
        return f"hexir-compile failed on a valid model (exit {r.returncode}):\n{text}"
    inputs, outputs = expect[1], expect[2]
    cmd = [os.path.join(bin_dir, "hexir-run"), hxb]
    for k, v in inputs.items():
        np.save(os.path.join(d, f"in.{k}.npy"), v)
        cmd += ["--input", f"{k}={os.path.join(d, f'in.{k}.npy')}"]
    for k in outputs:
        cmd += ["--output", f"{k}={os.path.join(d, f'out.{k}.npy')}"]
    r = run(cmd)
    if r is None or r.returncode != 0:
        return f"hexir-run failed:\n{'' if r is None else r.stdout + r.stderr}"
    for k, ref in outputs.items():
        got = np.load(os.path.join(d, f"out.{k}.npy"))
        if ref.dtype == np.bool_:  # bools by their bytes: 0 or 1 (NumPy would read 2 as True)
            same = got.shape == ref.shape and got.dtype == np.bool_ and np.array_equal(got.view(np.uint8),
                                                                                      ref.astype(np.uint8))
        elif np.issubdtype(ref.dtype, np.integer):  # integers exactly (float64 rounds near 2^63)
            same = got.shape == ref.shape and np.array_equal(got, ref)
        else:
            same = got.shape == ref.shape and np.allclose(got, ref, rtol=1e-5, atol=1e-6, equal_nan=True)
        if not same:
            return f"output {k}: got {got.dtype}{got.shape} {got.ravel()[:8]}, expected {ref.shape} {ref.ravel()[:8]}"
    return None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--only", help="run only the cases whose names start with this")
    p.add_argument("--list", action="store_true")
    p.add_argument("--target", help="compile for this target (cuda-emulator: the CUDA kernels, run on this CPU)")
    args = p.parse_args()
    if args.target:
        TARGET_ARGS.append("--target=" + args.target)
    names = [n for n in CASES if not args.only or n.startswith(args.only)]
    if args.list:
        print("\n".join(names))
        return 0
    failed = []
    with tempfile.TemporaryDirectory() as root:
        for name in names:
            problem = check(name, args.bin, root)
            print(f"{'ok  ' if problem is None else 'FAIL'} {name}")
            if problem:
                print("     " + problem.replace("\n", "\n     ")[:3000])
                failed.append(name)
    errors = sum(1 for n in names if KINDS.get(n) == "error")
    print(f"{len(names)} hostile cases ({errors} must be refused, {len(names) - errors} are valid edges), "
          f"{len(failed)} failed" + (": " + ", ".join(failed) if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
