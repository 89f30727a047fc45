#!/usr/bin/python3
"""The executables scripts/device-check.sh --prepare carries to the GPU machine (which has no
compiler): compiled here, with their inputs and references.

  OUT/models/  host executables (x86-64-v3) of small ONNX test models, input, PyTorch output
  OUT/cuda/    the same models, full-size CNNs at 224x224 (weights of 5 values per channel:
               they compress) and the end-to-end graphs compiled for --target cuda, inputs,
               references (PyTorch, or float64 NumPy for the graphs), one manifest.json
  OUT/bench/   benchmark graphs for the GPU (a 256 MiB elementwise chain, a 4096^3 matmul in
               f32 and with --allow-tf32,
               100 tiny dispatches) and TorchScript files of the models PyTorch is timed on

Usage: device_prepare.py --root SRC --bin BUILD/tools --out DIR
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

# A device call carries 64 MiB at most: no host resnet18 (47 MB of weights that do not compress).
HOST_MODELS = ["mlp", "bert_like", "gpt_like"]
CUDA_MODELS = ["mlp", "squeezenet1_1", "mobilenet_v2", "bert_like", "gpt_like"]
TORCHSCRIPT_MODELS = ["mobilenet_v2", "bert_like"]
FULL_MODELS = ["mobilenet_v2", "resnet18", "efficientnet_b0"]
# Every model's weights take 5 values per output channel (models.low_entropy; the references
# are computed from those weights): executables and TorchScripts compress about 10x in the
# archive that travels.
WEIGHT_LEVELS = 5
FULL_TORCHSCRIPT_MODELS = ["mobilenet_v2", "resnet18"]


def compile_(bin_dir, src, out, *flags):
    subprocess.run([os.path.join(bin_dir, "hexir-compile"), src, "-o", out, *flags], check=True)


def elementwise_graph(n):
    t = f"tensor<{n}xf32>"
    return (f"// 256 MiB in, one fused add/mul/tanh kernel, 256 MiB out: a memory-bound kernel.\n"
            f"func.func @main(%x: {t}) -> {t} {{\n"
            f"  %c = \"tosa.const\"() {{values = dense<0.5> : tensor<1xf32>}} : () -> tensor<1xf32>\n"
            f"  %s = \"tosa.const\"() {{values = dense<0> : tensor<1xi8>}} : () -> tensor<1xi8>\n"
            f"  %a = tosa.add %x, %c : ({t}, tensor<1xf32>) -> {t}\n"
            f"  %m = tosa.mul %a, %x, %s : ({t}, {t}, tensor<1xi8>) -> {t}\n"
            f"  %y = tosa.tanh %m : ({t}) -> {t}\n"
            f"  return %y : {t}\n}}\n")


def matmul_graph(n):
    t = f"tensor<{n}x{n}xf32>"
    return (f"func.func @main(%a: {t}, %b: {t}) -> {t} {{\n"
            f"  %z = arith.constant 0.0 : f32\n"
            f"  %e = tensor.empty() : {t}\n"
            f"  %f = linalg.fill ins(%z : f32) outs(%e : {t}) -> {t}\n"
            f"  %c = linalg.matmul ins(%a, %b : {t}, {t}) outs(%f : {t}) -> {t}\n"
            f"  return %c : {t}\n}}\n")


def launch_graph(count):
    # `count` dependent 32-element ops; compiled with --no-fusion, each is one dispatch.
    t = "tensor<32xf32>"
    lines = [f"func.func @main(%x: {t}) -> {t} {{"]
    prev = "%x"
    for i in range(count):
        lines.append(f"  %v{i} = tosa.tanh {prev} : ({t}) -> {t}")
        prev = f"%v{i}"
    lines.append(f"  return {prev} : {t}\n}}")
    return "\n".join(lines) + "\n"


def save_torchscript(models, name, full, x, base):
    """PyTorch's baseline on the GPU machine, which has no torchvision: model `name` traced with
    the weights export() used (seeded, perturbed, rounded), as BASE.pt, and its input."""
    import torch
    model, example, _ = models.build(name, full=full)
    model = models.low_entropy(models._perturb(model, 0).eval(), WEIGHT_LEVELS)
    with torch.no_grad():
        traced = torch.jit.trace(model, example)
    traced.save(base + ".pt")
    np.save(base + ".input.npy", x)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--root", required=True)
    p.add_argument("--bin", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()
    sys.path.insert(0, os.path.join(args.root, "tests", "onnx"))
    sys.path.insert(0, os.path.join(args.root, "tests", "e2e"))
    import models  # noqa: E402
    import graphs  # noqa: E402

    host_dir, cuda_dir, bench_dir = (os.path.join(args.out, d) for d in ("models", "cuda", "bench"))
    for d in (host_dir, cuda_dir, bench_dir):
        os.makedirs(d, exist_ok=True)
    manifest = []
    for name in sorted(set(HOST_MODELS) | set(CUDA_MODELS)):
        onnx_path = os.path.join(args.out, name + ".onnx")
        input_name, x, ref = models.export(name, onnx_path, weight_levels=WEIGHT_LEVELS)
        if name in HOST_MODELS:
            compile_(args.bin, onnx_path, os.path.join(host_dir, name + ".hxb"), "--target-cpu=x86-64-v3")
            np.save(os.path.join(host_dir, name + ".input.npy"), x)
            np.save(os.path.join(host_dir, name + ".ref.npy"), ref)
            with open(os.path.join(host_dir, name + ".input_name"), "w") as f:
                f.write(input_name)
        if name in CUDA_MODELS:
            base = "onnx_" + name  # graphs and models share some names (mlp)
            compile_(args.bin, onnx_path, os.path.join(cuda_dir, base + ".hxb"), "--target", "cuda")
            np.save(os.path.join(cuda_dir, base + ".in0.npy"), x)
            np.save(os.path.join(cuda_dir, base + ".ref0.npy"), ref)
            manifest.append({"name": "onnx " + name, "hxb": base + ".hxb", "rtol": 1e-4,
                             "inputs": {input_name: base + ".in0.npy"}, "outputs": {"output": base + ".ref0.npy"}})
        if name in TORCHSCRIPT_MODELS:
            save_torchscript(models, name, False, x, os.path.join(bench_dir, name))
        os.remove(onnx_path)
    # Full-size CNNs at 224x224 (issue 43: mobilenet_v2 at that size read shared memory
    # misaligned on an H200).
    for name in FULL_MODELS:
        onnx_path = os.path.join(args.out, name + "_224.onnx")
        input_name, x, ref = models.export(name, onnx_path, full=True, weight_levels=WEIGHT_LEVELS)
        base = "full_" + name
        compile_(args.bin, onnx_path, os.path.join(cuda_dir, base + ".hxb"), "--target", "cuda")
        np.save(os.path.join(cuda_dir, base + ".in0.npy"), x)
        np.save(os.path.join(cuda_dir, base + ".ref0.npy"), ref)
        manifest.append({"name": name + " 224x224", "hxb": base + ".hxb", "rtol": 1e-4,
                         "inputs": {input_name: base + ".in0.npy"}, "outputs": {"output": base + ".ref0.npy"}})
        if name in FULL_TORCHSCRIPT_MODELS:
            save_torchscript(models, name, True, x, os.path.join(bench_dir, base))
        os.remove(onnx_path)
    rng = np.random.default_rng(0)
    for gname in sorted(graphs.GRAPHS):
        g = graphs.GRAPHS[gname](rng)
        src = os.path.join(args.out, gname + ".mlir")
        with open(src, "w") as f:
            f.write(g.mlir)
        base = "graph_" + gname
        compile_(args.bin, src, os.path.join(cuda_dir, base + ".hxb"), "--target", "cuda",
                 *g.expect.get("compile_args", []))
        os.remove(src)
        entry = {"name": "graph " + gname, "hxb": base + ".hxb", "rtol": 1e-4, "inputs": {}, "outputs": {}}
        for k, (iname, value) in enumerate(g.inputs.items()):
            np.save(os.path.join(cuda_dir, f"{base}.in{k}.npy"), value)
            entry["inputs"][iname] = f"{base}.in{k}.npy"
        ref = g.reference(graphs.f64(g.inputs))
        for k, oname in enumerate(g.outputs):
            np.save(os.path.join(cuda_dir, f"{base}.ref{k}.npy"), np.asarray(ref[oname]))
            entry["outputs"][oname] = f"{base}.ref{k}.npy"
        manifest.append(entry)
    # TF32 tensor cores (--allow-tf32): the cases of tests/cuda/tf32.py, whose references round
    # both inputs to TF32 as the GPU does (the emulator cannot check the fragment layouts of
    # mma.sync: only a GPU can).
    sys.path.insert(0, os.path.join(args.root, "tests", "cuda"))
    import onnx  # noqa: E402
    import tf32  # noqa: E402
    for name, model, feeds, reference, _ in tf32.cases(np.random.default_rng(7)):
        src, base = os.path.join(args.out, name + ".onnx"), "tf32_" + name
        onnx.save(model, src)
        compile_(args.bin, src, os.path.join(cuda_dir, base + ".hxb"), "--target", "cuda", "--allow-tf32")
        os.remove(src)
        entry = {"name": "tf32 " + name, "hxb": base + ".hxb", "rtol": 1e-5, "inputs": {},
                 "outputs": {"y": base + ".ref0.npy"}}
        for k, (iname, value) in enumerate(feeds.items()):
            np.save(os.path.join(cuda_dir, f"{base}.in{k}.npy"), value)
            entry["inputs"][iname] = f"{base}.in{k}.npy"
        np.save(os.path.join(cuda_dir, base + ".ref0.npy"), reference(tf32.tf32).astype(np.float32))
        manifest.append(entry)
    # A whole model with --allow-tf32, against PyTorch's f32 output within TF32's error.
    onnx_path = os.path.join(args.out, "tf32_mobilenet_v2.onnx")
    input_name, x, ref = models.export("mobilenet_v2", onnx_path, weight_levels=WEIGHT_LEVELS)
    compile_(args.bin, onnx_path, os.path.join(cuda_dir, "tf32_mobilenet_v2.hxb"), "--target", "cuda", "--allow-tf32")
    os.remove(onnx_path)
    np.save(os.path.join(cuda_dir, "tf32_mobilenet_v2.in0.npy"), x)
    np.save(os.path.join(cuda_dir, "tf32_mobilenet_v2.ref0.npy"), ref)
    manifest.append({"name": "tf32 onnx mobilenet_v2", "hxb": "tf32_mobilenet_v2.hxb", "rtol": tf32.MODEL_TOLERANCE,
                     "inputs": {input_name: "tf32_mobilenet_v2.in0.npy"},
                     "outputs": {"output": "tf32_mobilenet_v2.ref0.npy"}})
    with open(os.path.join(cuda_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    for name, text, flags in [("elementwise", elementwise_graph(64 * 1024 * 1024), []),
                              ("matmul4096", matmul_graph(4096), []),
                              ("matmul4096_tf32", matmul_graph(4096), ["--allow-tf32"]),
                              ("launch100", launch_graph(100), ["--no-fusion"])]:
        src = os.path.join(bench_dir, name + ".mlir")
        with open(src, "w") as f:
            f.write(text)
        compile_(args.bin, src, os.path.join(bench_dir, name + ".hxb"), "--target", "cuda", *flags)
        os.remove(src)


if __name__ == "__main__":
    main()
