#!/usr/bin/env bash
# README command two: installs what is missing, builds, and runs the whole test suite:
#   0. the compiler's files without the precompiled header (scripts/check-includes.py);
#   1. unit, FileCheck, end-to-end and differential tests (ctest, the normal build);
#   2. the runtime and planner under ASan + UBSan + LSan, the concurrency tests under TSan;
#   3. bounded libFuzzer runs of the parsers of outside bytes (scripts/fuzz.sh);
#   4. the GPU check's two halves on this machine (scripts/device-check.sh: the portable
#      runtime-only build and its folder, then its run, where the CUDA part says "skipped");
#   5. CMake's default generator (Unix Makefiles), which users run without -G: configured, the
#      generated headers (TableGen, flatc) and the runtime tools built with it, and its hexir-run
#      running an executable the first build compiled (not the whole compiler a second time).
# Each stage's time is printed at the end (also when one fails).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${HEXIR_BUILD_DIR:-$root/build}"
stages=()
stage_start=$SECONDS
stage() {  # stage NAME: ends the stage before and starts NAME
  local now=$SECONDS
  if [ -n "${current:-}" ]; then stages+=("$(printf '%-22s %4d s' "$current" $((now - stage_start)))"); fi
  current="$1"
  stage_start=$now
  [ -n "$1" ] && echo "== $1"
  return 0
}
report() {
  stage ""
  echo "== stage times (total $SECONDS s)"
  printf '   %s\n' "${stages[@]}"
}
trap report EXIT
stage "install"
"$root/scripts/install-deps.sh" --tests
stage "build"
"$root/scripts/build.sh"
stage "include check"
# The compiler's files, built above with clang's precompiled header, compiled without it (GCC
# has none): every file must include what it uses.
/usr/bin/python3 "$root/scripts/check-includes.py" "$build"
stage "ctest"
ctest --test-dir "$build" --output-on-failure -j 2
stage "sanitizers"
"$root/scripts/sanitize.sh"
stage "fuzzing"
"$root/scripts/fuzz.sh"
stage "device check"
devcheck="$(mktemp -d)"
"$root/scripts/device-check.sh" --prepare "$devcheck/dir" >/dev/null
rm -rf "$devcheck/dir"  # what travels is the archive
PYTHON=/usr/bin/python3 "$root/scripts/device-check.sh" --run "$devcheck/dir.tar.xz"
rm -rf "$devcheck"
stage "default generator"
makefiles="$(mktemp -d)"
cmake -S "$root" -B "$makefiles" -DCMAKE_BUILD_TYPE=Release -DHEXIR_BUILD_TESTS=OFF \
  -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
make -C "$makefiles" -j 2 HexirOpsIncGen HexirPassesIncGen HexirHostPassesIncGen HexirCudaPassesIncGen \
  hexir_fbs_gen hexir-run hexir-dump >/dev/null
"$build/tools/hexir-compile" "$root/tests/graphs/matmul_tanh.mlir" -o "$makefiles/graph.hxb"
# y = tanh(x @ w + 1), w 0.125 everywhere: the Makefiles-built hexir-run against NumPy.
/usr/bin/python3 -c 'import numpy as np, sys; np.save(sys.argv[1], np.linspace(-1, 1, 32, dtype=np.float32).reshape(4, 8))' \
  "$makefiles/x.npy"
"$makefiles/tools/hexir-run" "$makefiles/graph.hxb" --input x="$makefiles/x.npy" --output y="$makefiles/y.npy"
/usr/bin/python3 - "$makefiles" <<'PY'
import sys
import numpy as np
x = np.load(f"{sys.argv[1]}/x.npy")
want = np.tanh(x @ np.full((8, 16), 0.125, np.float32) + 1)
got = np.load(f"{sys.argv[1]}/y.npy")
err = float(np.abs(got - want).max())
print(f"default generator: hexir-run built with Unix Makefiles, max abs diff {err:.1e} vs NumPy")
sys.exit(0 if err < 1e-5 else 1)
PY
"$makefiles/tools/hexir-dump" "$makefiles/graph.hxb" >/dev/null
rm -rf "$makefiles"
