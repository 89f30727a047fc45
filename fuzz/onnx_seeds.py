#!/usr/bin/python3
"""Seed corpus of the ONNX importer fuzzer: every op-case model (tests/onnx/op_cases.py) and
every hostile model (tests/onnx/hostile_models.py), as bytes. Usage: onnx_seeds.py DIR"""
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
for name, build in op_cases.CASES.items():
    got = build()
    with open(os.path.join(out, f"op.{name}.onnx"), "wb") as f:
        f.write(got[0].SerializeToString())
    count += 1
with tempfile.TemporaryDirectory() as tmp:
    for name, build in hostile_models.CASES.items():
        d = os.path.join(tmp, name)
        os.makedirs(d)
        m, _ = build(d)
        with open(os.path.join(out, f"hostile.{name}.onnx"), "wb") as f:
            f.write(m.SerializeToString())
        count += 1
print(f"{count} seed models in {out}")
