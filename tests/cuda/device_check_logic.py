#!/usr/bin/python3
"""What scripts/device-check.sh does without a GPU: the parsing of compute-sanitizer's reports
(device_cuda.sanitizer_errors), and the low-entropy weights that let full-size models travel to
the GPU machine (models.low_entropy: at most 5 values per output channel, the model's outputs
close to the original's, the weights compressing). The GPU half runs where a GPU is lent."""

import lzma
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
sys.path.insert(0, os.path.join(HERE, "..", "onnx"))
import device_cuda  # noqa: E402

def check_sanitizer_reports():
    clean = "========= COMPUTE-SANITIZER\nmain_dispatch ok\n========= ERROR SUMMARY: 0 errors\n"
    assert device_cuda.sanitizer_errors(clean) == (0, ""), device_cuda.sanitizer_errors(clean)
    bad = ("========= Invalid __shared__ read of size 8 bytes\n=========     at main_dispatch_2_conv+0x1be0\n"
           "========= ERROR SUMMARY: 28682 errors\n")
    count, first = device_cuda.sanitizer_errors(bad)
    assert count == 28682 and first.startswith("========= Invalid __shared__ read"), (count, first)
    race = ("========= Error: Race reported between Write access at main_dispatch_1+0x90\n"
            "========= RACECHECK SUMMARY: 3 hazards displayed (2 errors, 1 warning)\n")
    count, first = device_cuda.sanitizer_errors(race)
    assert count == 2 and "Race reported" in first, (count, first)
    warned = "========= RACECHECK SUMMARY: 1 hazard displayed (0 errors, 1 warning)\n"
    assert device_cuda.sanitizer_errors(warned)[0] == 0
    assert device_cuda.sanitizer_errors("segmentation fault")[0] is None  # no summary: not passed

def check_low_entropy():
    import numpy as np
    import torch
    import models
    model, x, _ = models.build("squeezenet1_1")  # 1.2 M weights: compressing them takes a second
    model = models._perturb(model, 0).eval()
    with torch.no_grad():
        before = model(x).numpy()
        raw = b"".join(p.detach().numpy().tobytes() for p in model.parameters())
        models.low_entropy(model, 5)
        after = model(x).numpy()
        rounded = b"".join(p.detach().numpy().tobytes() for p in model.parameters())
    for p in model.parameters():
        if p.dim() >= 2:
            per_channel = max(len(np.unique(c)) for c in p.detach().numpy().reshape(p.shape[0], -1))
            assert per_channel <= 5, (p.shape, per_channel)
    ratio = len(lzma.compress(rounded, preset=3)) / len(lzma.compress(raw, preset=3))
    assert ratio < 0.3, f"rounded weights compress to {ratio:.2f} of the original's size"
    # Still a model: outputs of the same scale, not collapsed to a constant.
    assert np.std(after) > 0.1 * np.std(before), (np.std(after), np.std(before))
    print(f"low_entropy: at most 5 values per channel; xz size {ratio:.2f} of the original's; "
          f"output std {np.std(after):.3f} vs {np.std(before):.3f}")

def main():
    check_sanitizer_reports()
    print("sanitizer reports: parsed")
    check_low_entropy()
    return 0

if __name__ == "__main__":
    sys.exit(main())
