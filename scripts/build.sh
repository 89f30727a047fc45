#!/usr/bin/env bash
# Configures and builds Hexir into ./build (Release, Ninja, two jobs).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${HEXIR_BUILD_DIR:-$root/build}"
cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE="${HEXIR_BUILD_TYPE:-Release}" \
  -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
cmake --build "$build" -j "${HEXIR_JOBS:-2}"
