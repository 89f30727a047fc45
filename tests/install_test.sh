#!/usr/bin/env bash
# Installs Hexir into a temporary prefix and uses it as a user would, with no environment
# variable set: the tools in PREFIX/bin compile, dump, run and serve a model; the Python package
# in PREFIX/lib/hexir/python imports and runs it; no installed file's RUNPATH names the build
# tree. Then builds examples/server as an outside project with find_package(Hexir) and runs it
# on the model: 8 sessions over 2 threads, 1,000 requests each, bit-identical to one thread.
# Usage: install_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src="$1"
build="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
prefix="$tmp/prefix"
# The install holds Hexir's files only: LLVM and MLIR stay where Debian put them.
if find "$prefix" -name '*LLVM*' -o -name '*MLIR*' | grep -q .; then
  echo "FAIL: the install tree holds LLVM or MLIR files"; exit 1
fi
tools=(hexir-run hexir-dump hexir-plan)
[ -x "$build/tools/hexir-compile" ] && tools+=(hexir-compile hexir-opt)
[ -x "$build/tools/hexir-serve" ] && tools+=(hexir-serve)
for t in "${tools[@]}"; do
  [ -x "$prefix/bin/$t" ] || { echo "FAIL: $t is not in PREFIX/bin"; exit 1; }
done
echo "ok   PREFIX/bin holds ${tools[*]}"
# Every installed ELF file finds its libraries by RUNPATH, none of them in the build tree.
while IFS= read -r f; do
  if readelf -d "$f" 2>/dev/null | grep -E 'R(UN)?PATH' | grep -qF "$build"; then
    echo "FAIL: $f has a RUNPATH into the build tree: $(readelf -d "$f" | grep -E 'R(UN)?PATH')"; exit 1
  fi
  if readelf -h "$f" > /dev/null 2>&1 && env -i PATH=/usr/bin:/bin ldd "$f" | grep -q 'not found'; then
    echo "FAIL: $f does not find its libraries:"; env -i PATH=/usr/bin:/bin ldd "$f" | grep 'not found'; exit 1
  fi
done < <(find "$prefix" -type f \( -path '*/bin/*' -o -name '*.so*' \))
echo "ok   every installed binary and library finds its libraries without LD_LIBRARY_PATH"
cmake -S "$src/examples/server" -B "$tmp/server" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_BUILD_TYPE=Release > "$tmp/configure.log"
cmake --build "$tmp/server" -j 2 > "$tmp/build.log"
/usr/bin/python3 - "$tmp/model.mlir" <<'PY'
import sys, os
sys.path.insert(0, os.path.join(os.environ["HEXIR_SRC"], "tests", "e2e"))
import graphs, numpy as np
open(sys.argv[1], "w").write(graphs.cnn(np.random.default_rng(3)).mlir)
PY
if [ -x "$prefix/bin/hexir-compile" ]; then
  env -i "$prefix/bin/hexir-compile" "$tmp/model.mlir" -o "$tmp/model.hxb"
else
  "$build/tools/hexir-compile" "$tmp/model.mlir" -o "$tmp/model.hxb"
fi
env -i "$prefix/bin/hexir-dump" "$tmp/model.hxb" | grep -q '^function main' || { echo "FAIL: installed hexir-dump"; exit 1; }
env -i "$prefix/bin/hexir-run" "$tmp/model.hxb" --benchmark 2 > "$tmp/run.log" || { cat "$tmp/run.log"; exit 1; }
echo "ok   the installed hexir-compile, hexir-dump and hexir-run compile and run a model"
if [ -x "$prefix/bin/hexir-serve" ]; then
  env -i "$prefix/bin/hexir-serve" --model "m=$tmp/model.hxb" --port 0 > "$tmp/serve.log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do grep -q 'listening on' "$tmp/serve.log" && break; sleep 0.1; done
  port="$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$tmp/serve.log" | head -1)"
  ready="$(/usr/bin/python3 -c "import urllib.request,sys; print(urllib.request.urlopen('http://127.0.0.1:$port/v2/models/m/ready').status)" 2>&1 || true)"
  kill -TERM "$pid"; wait "$pid" || true
  [ "$ready" = 200 ] || { echo "FAIL: the installed hexir-serve: $ready"; cat "$tmp/serve.log"; exit 1; }
  echo "ok   the installed hexir-serve serves it"
fi
if [ -d "$prefix/lib/hexir/python/hexir" ]; then
  env -i PYTHONPATH="$prefix/lib/hexir/python" /usr/bin/python3 - "$tmp/model.hxb" "$prefix" <<'PY'
import sys
import numpy as np
import hexir
assert hexir.__file__.startswith(sys.argv[2]), hexir.__file__
module = hexir.load(sys.argv[1])
session = module.session()
inputs = {t.name: np.zeros(t.shape, t.dtype) for t in module.inputs}
outputs = session.run(inputs)
assert outputs, "no outputs"
print("ok   PYTHONPATH=PREFIX/lib/hexir/python: import hexir, load and run the model")
PY
fi
LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/server/hexir_server" "$tmp/model.hxb" --threads 2 --sessions 8 --requests 1000
