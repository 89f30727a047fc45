#!/usr/bin/env bash
# README command one: installs what is missing, builds, compiles the bundled example and runs it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${HEXIR_BUILD_DIR:-$root/build}"
"$root/scripts/install-deps.sh"
# Only what the example runs; README command two builds the rest (tests, benchmarks, Python).
"$root/scripts/build.sh" hexir-compile hexir-run hexir-dump
"$root/examples/run_example.sh" "$build"
