#!/usr/bin/env bash
# Installs the Debian packages Hexir needs, only those that are missing: to build and run it, or
# (--tests) also to test it.
set -euo pipefail
# What the compiler, the runtime, the Python package and the server need to build, and the
# bundled example to run (README command one).
packages=(
  cmake ninja-build make g++ clang-22 pkg-config
  llvm-22-dev libmlir-22-dev mlir-22-tools lld-22 liblld-22-dev llvm-22-tools
  flatbuffers-compiler libflatbuffers-dev catch2 libxxhash-dev
  python3 python3-numpy binutils
  libonnx-dev libprotobuf-dev protobuf-compiler
  python3-dev pybind11-dev nlohmann-json3-dev libgrpc++-dev protobuf-compiler-grpc
)
# --tests: what the test suite adds (README command two): PyTorch and ONNX for the test models
# and references, clang's sanitizer and fuzzer runtimes, OpenBLAS and wrk for the benchmarks'
# baselines.
if [ "${1:-}" = --tests ]; then
  packages+=(
    libclang-rt-22-dev libopenblas-dev
    python3-onnx python3-torch python3-torchvision python3-sklearn python3-pytest python3-yaml python3-grpcio curl wrk
  )
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing: ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
# Try without refreshing the index first (fast); refresh once if that fails.
$SUDO apt-get install -y "${missing[@]}" ||
  { $SUDO apt-get update && $SUDO apt-get install -y "${missing[@]}"; }
