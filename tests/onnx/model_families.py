#!/usr/bin/python3
"""Whole model families against PyTorch: every classification, segmentation and video builder of
Debian's torchvision (0.14), at a small input size with seeded random weights (biases and
normalization statistics perturbed, tests/onnx/models.py), exported to ONNX (opset 17), compiled
by hexir-compile, run by hexir-run, and compared with PyTorch within 1e-4 of max|ref|.

Each model ends as one of: pass; refused (hexir-compile's message: an op, type or opset this
version does not cover, counted and listed, not a failure); export (PyTorch cannot export it);
WRONG (it runs but differs); CRASH (a tool died) or HANG. WRONG, CRASH and HANG fail the run.
Compile time is printed per model, and the slowest.

  model_families.py --bin BUILD/tools --all                 every builder (a benchmark: minutes)
  model_families.py --bin BUILD/tools --sample 6 [--seed S] a random sample (CI; the seed is
                                                            printed and replays it)
  model_families.py --bin BUILD/tools --only regnet_y_400mf,resnet18
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402

TOLERANCE = 1e-4
TIME_LIMIT = 600
# Builders whose weights are too large for a test machine's time (ViT-H: 630M parameters); they
# run with --all only.
HEAVY = {"vit_h_14", "vit_l_16", "vit_l_32", "regnet_y_128gf", "regnet_y_32gf", "regnet_y_16gf",
         "regnet_x_32gf", "regnet_x_16gf", "efficientnet_b7", "efficientnet_b6", "vgg19_bn", "vgg19",
         "vgg16_bn", "vgg16", "vgg13_bn", "vgg13", "vgg11_bn", "vgg11", "wide_resnet101_2", "resnet152",
         "resnext101_64x4d", "resnext101_32x8d", "convnext_large", "swin_b", "swin_v2_b", "efficientnet_v2_l",
         "deeplabv3_resnet101", "fcn_resnet101", "mvit_v1_b", "mvit_v2_s"}
# Builders the CI sample leaves out: each takes past 20 s to export, compile and run here in all
# (their compiles alone took up to 123 s on 02ac6f0; 4 to 12 s since kernels are deduplicated and
# compiled in parallel parts); --all and --only run them.
SLOW = {"convnext_tiny", "convnext_small", "convnext_base", "vit_b_16", "maxvit_t", "regnet_y_8gf", "regnet_x_8gf",
        "regnet_y_3_2gf", "regnet_x_3_2gf", "efficientnet_b4", "efficientnet_b5", "efficientnet_v2_m",
        "wide_resnet50_2", "resnet101", "densenet161", "densenet169", "densenet201", "swin_s", "swin_v2_s"}
# Input sizes where 64x64 is too small for the architecture (AlexNet's adaptive pooling to 6x6
# exports only where it divides evenly).
SIZES = {"alexnet": 224, "vgg11": 224, "vgg11_bn": 224, "vgg13": 224, "vgg13_bn": 224, "vgg16": 224, "vgg16_bn": 224,
         "vgg19": 224, "vgg19_bn": 224, "inception_v3": 96, "googlenet": 64, "vit_b_16": 224, "vit_b_32": 224, "vit_l_16": 224, "vit_l_32": 224,
         "vit_h_14": 224, "maxvit_t": 224, "swin_t": 64, "swin_s": 64, "swin_b": 64, "swin_v2_t": 64,
         "swin_v2_s": 64, "swin_v2_b": 64}


def builders():
    """{name: (family, constructor)} of Debian's torchvision."""
    import torchvision.models as tm
    found = {}
    for family, module in (("classification", tm), ("segmentation", tm.segmentation), ("video", tm.video)):
        for name in tm.list_models(module=module):
            found[name] = (family, tm.get_model_builder(name))
    return found


def make(name, family, ctor, path):
    torch.manual_seed(0)
    kwargs = {"weights": None}
    if name in ("inception_v3", "googlenet"):
        kwargs.update(aux_logits=False, init_weights=False)
    if family == "segmentation":
        kwargs["weights_backbone"] = None
        kwargs["aux_loss"] = False
    model = models._perturb(ctor(**kwargs), 0).eval()
    # Weights a builder initializes to zero (ViT's head) would make the output one bias: give
    # them small random values, so every layer reaches the output.
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2 and not p.any():
                p.copy_(0.02 * torch.randn(p.shape, generator=g))
    if family == "video":
        frames = 16 if name.startswith(("mvit", "s3d")) else 4
        size = 224 if name.startswith(("mvit", "s3d")) else 64  # S3D pools 7x7 at the end
        x = torch.randn(1, 3, frames, size, size)
    else:
        size = SIZES.get(name, 64)
        x = torch.randn(1, 3, size, size)
    with torch.no_grad():
        ref = model(x)
    if isinstance(ref, dict):
        ref = ref["out"]
    torch.onnx.export(model, (x,), path, opset_version=17, input_names=["input"], output_names=["output"])
    return x.numpy(), ref.numpy()


def tool(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIME_LIMIT)
        return r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired:
        return None, f"no answer within {TIME_LIMIT} s"


def run_one(name, family, ctor, bin_dir, tmp):
    """(status, detail, compile seconds)."""
    path = os.path.join(tmp, name + ".onnx")
    try:
        x, ref = make(name, family, ctor, path)
    except Exception as e:  # PyTorch's exporter, not Hexir
        return "export", f"{type(e).__name__}: {str(e).splitlines()[0][:200]}", None
    hxb = path[:-5] + ".hxb"
    start = time.time()
    rc, text = tool([os.path.join(bin_dir, "hexir-compile"), path, "-o", hxb])
    seconds = time.time() - start
    if rc is None:
        return "HANG", "hexir-compile: " + text, seconds
    if rc < 0 or "Stack dump" in text:
        return "CRASH", "hexir-compile: " + text.strip()[-1500:], seconds
    if rc != 0:
        errors = [line for line in text.splitlines() if "error:" in line]
        return "refused", (errors[0] if errors else text.strip()[-300:]).replace(path, name + ".onnx"), seconds
    np.save(os.path.join(tmp, name + ".in.npy"), x)
    out = os.path.join(tmp, name + ".out.npy")
    rc, text = tool([os.path.join(bin_dir, "hexir-run"), hxb, "--input", f"input={tmp}/{name}.in.npy",
                     "--output", f"output={out}"])
    if rc is None:
        return "HANG", "hexir-run: " + text, seconds
    if rc != 0:
        return "CRASH", "hexir-run: " + text.strip()[-1500:], seconds
    got = np.load(out)
    if got.shape != ref.shape:
        return "WRONG", f"shape {got.shape}, PyTorch {ref.shape}", seconds
    scale = float(np.abs(ref).max())
    err = float(np.abs(got.astype(np.float64) - ref).max())
    if not np.all(np.isfinite(got)) or err > TOLERANCE * scale + 1e-6:
        return "WRONG", f"max|diff| {err:.3g} = {err / max(scale, 1e-30):.3g} of max|ref|", seconds
    return "pass", f"max|diff| {err / max(scale, 1e-30):.2g} of max|ref|", seconds


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", required=True)
    p.add_argument("--all", action="store_true", help="every builder, the heavy ones too")
    p.add_argument("--sample", type=int, help="this many random builders (not the heavy or slow ones)")
    p.add_argument("--seed", type=int, help="the sample's seed (default: a fresh one, printed)")
    p.add_argument("--only", help="comma-separated builder names")
    p.add_argument("--time-box", type=float, default=1e9, help="start no model after this many seconds")
    args = p.parse_args()
    found = builders()
    names = sorted(found)
    if args.only:
        names = [n for n in args.only.split(",") if n in found]
    elif not args.all:
        names = [n for n in names if n not in HEAVY]
        if args.sample:
            names = [n for n in names if n not in SLOW]
            seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
            print(f"model_families: seed {seed}; replay with --sample {args.sample} --seed {seed}", flush=True)
            names = sorted(random.Random(seed).sample(names, min(args.sample, len(names))))
    torch.set_num_threads(1)
    start, results = time.time(), []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            if time.time() - start > args.time_box:
                print(f"time box reached before {name}")
                break
            family, ctor = found[name]
            status, detail, seconds = run_one(name, family, ctor, args.bin, tmp)
            compile_s = f"{seconds:6.1f} s" if seconds is not None else "      -"
            print(f"{status:8} {family:14} {name:32} compile {compile_s}  {detail}", flush=True)
            results.append((name, status, seconds))
            for f in os.listdir(tmp):
                os.remove(os.path.join(tmp, f))
    counts = {}
    for _, status, _ in results:
        counts[status] = counts.get(status, 0) + 1
    timed = sorted((s, n) for n, st, s in results if st == "pass" and s is not None)
    slowest = f"; slowest compile {timed[-1][1]} {timed[-1][0]:.1f} s" if timed else ""
    print(f"model_families: {counts.get('pass', 0)} of {len(results)} match PyTorch; "
          + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()) if k != "pass") + slowest
          + f" ({time.time() - start:.0f} s)")
    return 1 if any(st in ("WRONG", "CRASH", "HANG") for _, st, _ in results) else 0


if __name__ == "__main__":
    sys.exit(main())
