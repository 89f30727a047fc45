#!/usr/bin/python3
"""float16 models, as models exported for GPUs are, against their float32 twins.

Each test model (tests/onnx/models.py, fixed seed) is exported in float32 with PyTorch's output,
then made a float16 model the way float16 converters make one (onnxconverter-common's
convert_float_to_float16 without keep_io_types): every float tensor becomes float16 - the
initializers, Constant and ConstantOfShape values, Cast targets, the graph's inputs and outputs.
The float16 model must pass ONNX's checker, compile, run on the target (float16 inputs and
outputs: Hexir computes in float32 inside) and match PyTorch's float32 output within float16's
error: max|hexir - torch| <= TOLERANCE * max|torch|. (A wrong kernel is off by the order of
max|torch|; float16 weights and activations by about 1e-3 of it.)
Usage: fp16_models.py --bin BUILD/tools [--target T] [NAME ...]
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402

TOLERANCE = 5e-3
DEFAULT_MODELS = ["resnet18", "mobilenet_v2", "bert_like"]


def _half_tensor(t):
    """A FLOAT TensorProto as FLOAT16 (values rounded to nearest), others unchanged."""
    if t.data_type != TensorProto.FLOAT:
        return t
    h = numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name)
    return h


def to_float16(model):
    """`model` (float32) with every float tensor float16, in place."""
    def graph(g):
        for k, init in enumerate(g.initializer):
            g.initializer[k].CopyFrom(_half_tensor(init))
        for v in list(g.input) + list(g.output) + list(g.value_info):
            if v.type.tensor_type.elem_type == TensorProto.FLOAT:
                v.type.tensor_type.elem_type = TensorProto.FLOAT16
        for node in g.node:
            for a in node.attribute:
                if a.type == onnx.AttributeProto.TENSOR:
                    a.t.CopyFrom(_half_tensor(a.t))
                if node.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT:
                    a.i = TensorProto.FLOAT16
                if a.type == onnx.AttributeProto.GRAPH:
                    graph(a.g)
    graph(model.graph)
    return model


def constant_bytes(bin_dir, hxb):
    """Bytes of an executable's constant sections (Constants and NarrowConstants), by hexir-dump."""
    text = subprocess.run([os.path.join(bin_dir, "hexir-dump"), hxb], capture_output=True, text=True,
                          check=True).stdout
    sizes = re.findall(r"^\s+#\d+ (?:Constants|NarrowConstants)\s+offset \d+\s+size (\d+)", text, re.M)
    return sum(int(v) for v in sizes)


def run(bin_dir, target, name, work):
    base = os.path.join(work, name)
    _, x, ref = models.export(name, base + ".onnx")
    m = to_float16(onnx.load(base + ".onnx"))
    onnx.checker.check_model(m)
    onnx.save(m, base + ".fp16.onnx")
    r = subprocess.run([os.path.join(bin_dir, "hexir-compile"), base + ".fp16.onnx", "-o", base + ".hxb",
                        "--target", target], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout + r.stderr)
        return f"{name}: hexir-compile failed"
    # The float16 weights are stored in 16 bits (widened at load): about half the constant
    # bytes of the float32 twin's executable.
    r = subprocess.run([os.path.join(bin_dir, "hexir-compile"), base + ".onnx", "-o", base + ".f32.hxb",
                        "--target", target], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout + r.stderr)
        return f"{name}: hexir-compile of the float32 twin failed"
    half, full = constant_bytes(bin_dir, base + ".hxb"), constant_bytes(bin_dir, base + ".f32.hxb")
    print(f"{name} ({target}): constants {half} bytes in float16, {full} in float32 ({half / full:.2f}x)")
    if half > 0.6 * full:
        return f"{name}: the float16 model's constants take {half} bytes, more than 0.6x the float32 twin's {full}"
    xin = x.astype(np.float16) if x.dtype == np.float32 else x
    np.save(base + ".in.npy", xin)
    r = subprocess.run([os.path.join(bin_dir, "hexir-run"), base + ".hxb", "--input", "input=" + base + ".in.npy",
                        "--output", "output=" + base + ".out.npy"], capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout + r.stderr)
        return f"{name}: hexir-run failed"
    out = np.load(base + ".out.npy")
    if out.dtype != np.float16 or out.shape != ref.shape:
        return f"{name}: got {out.dtype}{list(out.shape)}, expected float16{list(ref.shape)}"
    err = float(np.max(np.abs(out.astype(np.float64) - ref.astype(np.float64))))
    scale = float(np.max(np.abs(ref)))
    print(f"{name} ({target}): max|fp16 hexir - fp32 torch| = {err:.3g} = {err / scale:.2g} of max|torch| "
          f"({scale:.3g})")
    if not np.all(np.isfinite(out)) or err > TOLERANCE * scale:
        return f"{name}: off by {err / scale:.2g} of max|torch|, more than {TOLERANCE}"
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("names", nargs="*", default=DEFAULT_MODELS)
    p.add_argument("--bin", required=True)
    p.add_argument("--target", default="host")
    args = p.parse_args()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.names:
            why = run(args.bin, args.target, name, tmp)
            if why:
                failures.append(why)
                print("FAIL " + why)
    print(f"fp16_models: {len(args.names) - len(failures)} of {len(args.names)} match their float32 twins")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
