#!/usr/bin/python3
"""Seed corpus of the ONNX importer fuzzer: the op-case models (tests/onnx/op_cases.py) and
hostile models (tests/onnx/hostile_models.py) of at most 64 KiB, as bytes.
Usage: onnx_seeds.py DIR"""
import os
import sys
import tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "tests", "onnx"))
import hostile_models  # noqa: E402
import op_cases  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
count = 0
# Models over 64 KiB (large initializers) would take most of a 30 s run to load under ASan and
# add little the small ones do not cover.
MAX_BYTES = 65536
for name, build in op_cases.CASES.items():
    data = build()[0].SerializeToString()
    if len(data) <= MAX_BYTES:
        with open(os.path.join(out, f"op.{name}.onnx"), "wb") as f:
            f.write(data)
        count += 1
with tempfile.TemporaryDirectory() as tmp:
    for name, build in hostile_models.CASES.items():
        d = os.path.join(tmp, name)
        os.makedirs(d)
        data = build(d)[0].SerializeToString()
        if len(data) <= MAX_BYTES:
            with open(os.path.join(out, f"hostile.{name}.onnx"), "wb") as f:
                f.write(data)
            count += 1
print(f"{count} seed models in {out}")
