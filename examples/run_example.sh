#!/usr/bin/env bash
# The bundled example: a digits classifier (examples/digits, trained by train_digits.py on
# scikit-learn's 8x8 digits and exported from PyTorch to ONNX) compiled by hexir-compile and
# run by hexir-run on eight held-out digits; prints each one's predicted and true label.
# Usage: examples/run_example.sh BUILD_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../build}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo "== hexir-compile examples/digits/digits.onnx (batch dimension N fixed to 8)"
"$build/tools/hexir-compile" "$here/digits/digits.onnx" --input-shape input=8x1x8x8 -o "$tmp/digits.hxb"
"$build/tools/hexir-dump" "$tmp/digits.hxb" | sed -n 1,12p
echo "== hexir-run on 8 held-out digits"
"$build/tools/hexir-run" "$tmp/digits.hxb" --input input="$here/digits/samples.npy" --output logits="$tmp/logits.npy"
/usr/bin/python3 - "$here/digits/samples.npy" "$here/digits/labels.npy" "$tmp/logits.npy" <<'PY'
import sys
import numpy as np
samples, labels, logits = (np.load(p) for p in sys.argv[1:])
predicted = logits.argmax(axis=1)
for i, (image, p, t) in enumerate(zip(samples, predicted, labels)):
    rows = ["".join(" .:-=+*#%@"[min(9, int(v * 10))] for v in row) for row in image[0]]
    print(f"sample {i}: predicted {p}, true {t}  {'ok' if p == t else 'WRONG'}   |{rows[2]}|{rows[4]}|{rows[6]}|")
correct = int((predicted == labels).sum())
print(f"{correct} of {len(labels)} correct")
sys.exit(0 if correct >= len(labels) - 1 else 1)
PY
