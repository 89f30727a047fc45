#!/usr/bin/env bash
# examples/generate end to end: builds the generation model (make_generate.py), compiles it with
# hexir-compile, generates with the Python API (generate.py) and the C++ API (hexir_generate),
# and checks both print PyTorch's greedy tokens.
# Usage: examples/generate/run_generate.sh BUILD_DIR [make_generate.py options]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$(cd "${1:-$here/../../build}" && pwd)"
shift || true
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

/usr/bin/python3 "$here/make_generate.py" "$tmp" "$@" 2>&1 | grep -v -i warning || true
test -f "$tmp/generate.onnx"
"$build/tools/hexir-compile" "$tmp/generate.onnx" -o "$tmp/generate.hxb"
"$build/tools/hexir-dump" "$tmp/generate.hxb" | grep -E "^function|^  (input|output)|LOOP"
echo "== Python"
/usr/bin/python3 "$here/generate.py" "$tmp/generate.hxb" "$tmp/prompt.npy" --expect "$tmp/pytorch_tokens.npy" \
  --python "$build/python"
echo "== C++"
prompt="$(/usr/bin/python3 -c "import numpy as np, sys; print(' '.join(map(str, np.load(sys.argv[1]).reshape(-1))))" "$tmp/prompt.npy")"
want="$(/usr/bin/python3 -c "import numpy as np, sys; print(' '.join(map(str, np.load(sys.argv[1]))))" "$tmp/pytorch_tokens.npy")"
got="$("$build/examples/generate/hexir_generate" "$tmp/generate.hxb" $prompt)"
echo "$got"
if [ "$got" != "$want" ]; then
  echo "differs from PyTorch's greedy decode: $want"
  exit 1
fi
echo "equal to PyTorch's greedy decode"
# The whole generation, loop included, allocates nothing per run.
if [ -x "$build/vm/run_allocation_test" ]; then
  "$build/vm/run_allocation_test" "$tmp/generate.hxb"
fi
