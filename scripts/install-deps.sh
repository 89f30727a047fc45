#!/usr/bin/env bash
# Installs the Debian packages Hexir needs, only those that are missing.
set -euo pipefail
packages=(
  cmake ninja-build make g++ pkg-config
  llvm-22-dev libmlir-22-dev mlir-22-tools lld-22 llvm-22-tools clang-22
  flatbuffers-compiler libflatbuffers-dev catch2 libxxhash-dev
  python3 python3-numpy binutils libclang-rt-22-dev libopenblas-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  python3-onnx python3-torch python3-torchvision python3-sklearn
  python3-dev pybind11-dev python3-pytest nlohmann-json3-dev curl wrk
)
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
