#!/usr/bin/env bash
# README command two: installs what is missing, builds, and runs the whole test suite:
#   1. unit, FileCheck, end-to-end and differential tests (ctest, the normal build);
#   2. the runtime and planner under ASan + UBSan + LSan, the concurrency tests under TSan;
#   3. bounded libFuzzer runs of the executable loader and hexir-plan's CSV reader;
#   4. the GPU check's two halves on this machine (scripts/device-check.sh: the portable
#      runtime-only build and its folder, then its run, where the CUDA part says "skipped");
#   5. a build with CMake's default generator (Unix Makefiles), which users run without -G.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
ctest --test-dir "${HEXIR_BUILD_DIR:-$root/build}" --output-on-failure -j 2
echo "== sanitizers"
"$root/scripts/sanitize.sh"
echo "== fuzzing"
"$root/scripts/fuzz.sh"
echo "== device check (here: the CUDA part skips)"
devcheck="$(mktemp -d)"
"$root/scripts/device-check.sh" --prepare "$devcheck/dir" >/dev/null
PYTHON=/usr/bin/python3 "$root/scripts/device-check.sh" --run "$devcheck/dir"
rm -rf "$devcheck"
echo "== default CMake generator"
makefiles="$(mktemp -d)"
trap 'rm -rf "$makefiles"' EXIT
cmake -S "$root" -B "$makefiles" -DCMAKE_BUILD_TYPE=Release -DHEXIR_BUILD_TESTS=OFF \
  -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
make -C "$makefiles" -j 2 hexir-compile hexir-run >/dev/null
"$makefiles/tools/hexir-compile" --version
