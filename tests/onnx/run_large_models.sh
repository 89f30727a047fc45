#!/usr/bin/env bash
# On-demand check (not in CI: minutes per model with today's naive kernels): resnet50,
# densenet121, inception_v3 and vgg11 at full resolution, exported from PyTorch and compared
# with PyTorch's output like the CI models. Usage: tests/onnx/run_large_models.sh BUILD_DIR [MODEL...]
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../../build}"
shift || true
models=("$@")
[ ${#models[@]} -eq 0 ] && models=(resnet50 densenet121 inception_v3 vgg11)
status=0
for m in "${models[@]}"; do
  /usr/bin/python3 "$here/run_model.py" "$m" --bin "$build/tools" --threads "$(nproc)" || status=1
done
exit $status
