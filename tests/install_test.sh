#!/usr/bin/env bash
# Installs the runtime into a temporary prefix, builds examples/server as an outside project
# with find_package(Hexir), and runs it on a compiled model: 8 sessions over 2 threads, 1,000
# requests each, bit-identical to a single-threaded run.
# Usage: install_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src="$1"
build="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
# Only the runtime is installed: no compiler, no LLVM, no MLIR.
if find "$tmp/prefix" -name '*LLVM*' -o -name '*MLIR*' | grep -q .; then
  echo "FAIL: the install tree holds LLVM or MLIR files"; exit 1
fi
cmake -S "$src/examples/server" -B "$tmp/server" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_BUILD_TYPE=Release > "$tmp/configure.log"
cmake --build "$tmp/server" -j 2 > "$tmp/build.log"
/usr/bin/python3 - "$tmp/model.mlir" <<'PY'
import sys, os
sys.path.insert(0, os.path.join(os.environ["HEXIR_SRC"], "tests", "e2e"))
import graphs, numpy as np
open(sys.argv[1], "w").write(graphs.cnn(np.random.default_rng(3)).mlir)
PY
"$build/tools/hexir-compile" "$tmp/model.mlir" -o "$tmp/model.hxb"
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/server/hexir_server" "$tmp/model.hxb" --threads 2 --sessions 8 --requests 1000
