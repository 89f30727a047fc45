#!/usr/bin/env bash
# Compiles the bundled example graph with hexir-compile and runs it with hexir-run.
# Usage: examples/run_example.sh BUILD_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../build}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

echo "== hexir-compile examples/mlp.mlir"
"$build/tools/hexir-compile" "$here/mlp.mlir" -o "$tmp/mlp.hxb"
"$build/tools/hexir-dump" "$tmp/mlp.hxb"
/usr/bin/python3 - "$tmp/x.npy" <<'PY'
import sys
import numpy as np
x = np.array([[5.1, 3.5, 1.4, 0.2], [6.2, 2.9, 4.3, 1.3], [7.7, 3.0, 6.1, 2.3], [0.0, 0.0, 0.0, 0.0]], np.float32)
np.save(sys.argv[1], x)
PY
echo "== hexir-run (4 samples -> class probabilities)"
"$build/tools/hexir-run" "$tmp/mlp.hxb" --input x="$tmp/x.npy"
