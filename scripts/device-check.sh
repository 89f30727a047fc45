#!/usr/bin/env bash
# The GPU check, in two halves (issue 13): the GPU machine has an NVIDIA GPU, CUDA, CMake, ninja
# and Python with NumPy, but no network, no Debian packages and no LLVM/MLIR.
#
#   scripts/device-check.sh --prepare DIR   (here) builds what the GPU machine runs into DIR:
#       the runtime alone (no LLVM, no MLIR), linked so that it runs on a newer glibc without
#       libstdc++ or xxhash packages: hexir-run, hexir-dump, the HAL conformance suite and its
#       test kernels (host ELF, CUDA PTX); host executables of test graphs and ONNX models
#       (x86-64-v3 kernels) with their inputs and PyTorch/NumPy references.
#   scripts/device-check.sh --run DIR       (there, under 8 minutes) runs the conformance suite
#       on the CUDA device, runs every executable and compares it with its reference, and prints
#       one summary table.
#
# Not yet here: executables compiled for CUDA (the compiler has no CUDA target yet), hence no
# end-to-end graph on the GPU and no GPU benchmark; the table says so.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
mode="${1:-}"
dir="${2:-}"
if [ -z "$dir" ] || { [ "$mode" != --prepare ] && [ "$mode" != --run ]; }; then
  echo "usage: $0 --prepare DIR | --run DIR" >&2
  exit 2
fi

if [ "$mode" = --prepare ]; then
  build="${HEXIR_BUILD_DIR:-$root/build}-device"
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DHEXIR_RUNTIME_ONLY=ON \
    -DHEXIR_PORTABLE_BINARIES=ON -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
  cmake --build "$build" -j 2 --target hexir-run hexir-dump hal_cts_test hexir_test_kernels
  rm -rf "$dir" && mkdir -p "$dir/bin" "$dir/share" "$dir/models"
  cp "$build/tools/hexir-run" "$build/tools/hexir-dump" "$build/hal/cts/hal_cts_test" "$dir/bin/"
  cp -P "$build"/vm/libhexir_runtime.so* "$dir/bin/"
  cp "$build/hal/test_kernels.so" "$root/hal/cts/cuda_test_kernels.ptx" "$dir/share/"
  # Host executables and references, compiled here with the full build's compiler.
  "$root/scripts/build.sh" >/dev/null
  /usr/bin/python3 - "$root" "$dir/models" <<'PY'
import os, subprocess, sys
import numpy as np
root, out = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(root, "tests", "onnx"))
import models
compile_ = os.path.join(root, "build", "tools", "hexir-compile")
# Small enough to travel (a device call carries 64 MiB at most): no resnet18 (47 MB of weights).
for name in ["mlp", "squeezenet1_1", "mobilenet_v2", "bert_like", "gpt_like"]:
    onnx_path = os.path.join(out, name + ".onnx")
    input_name, x, ref = models.export(name, onnx_path)
    subprocess.run([compile_, onnx_path, "-o", os.path.join(out, name + ".hxb"), "--target-cpu=x86-64-v3"],
                   check=True)
    os.remove(onnx_path)
    np.save(os.path.join(out, name + ".input.npy"), x)
    np.save(os.path.join(out, name + ".ref.npy"), ref)
    with open(os.path.join(out, name + ".input_name"), "w") as f:
        f.write(input_name)
PY
  du -sh "$dir"
  echo "prepared $dir: carry it to the GPU machine and run: scripts/device-check.sh --run DIR"
  exit 0
fi

# --run: everything below needs only the carried folder, a shell, Python and NumPy.
bin="$dir/bin"
export LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
py="${PYTHON:-python3}"  # with NumPy
declare -a rows
status=0
cts_log="$(mktemp)"
if HEXIR_CTS_DEVICE=cuda HEXIR_TEST_KERNELS="$dir/share/test_kernels.so" \
   HEXIR_CUDA_TEST_KERNELS="$dir/share/cuda_test_kernels.ptx" timeout 300 "$bin/hal_cts_test" "[cts]" >"$cts_log" 2>&1; then
  rows+=("HAL conformance on CUDA|passed|$(grep -o 'All tests passed.*' "$cts_log" | head -1)")
else
  rc=$?
  if [ "$rc" = 77 ]; then
    rows+=("HAL conformance on CUDA|skipped|$(grep -m1 '^skipped' "$cts_log")")
  else
    rows+=("HAL conformance on CUDA|FAILED (exit $rc)|see below")
    status=1
  fi
fi
if HEXIR_CTS_DEVICE=host HEXIR_TEST_KERNELS="$dir/share/test_kernels.so" timeout 120 "$bin/hal_cts_test" "[cts]" >/dev/null 2>&1; then
  rows+=("HAL conformance on the host|passed|")
else
  rows+=("HAL conformance on the host|FAILED|")
  status=1
fi
for hxb in "$dir"/models/*.hxb; do
  name="$(basename "$hxb" .hxb)"
  input="$(cat "$dir/models/$name.input_name")"
  out="$(mktemp -d)"
  if timeout 120 "$bin/hexir-run" "$hxb" --input "$input=$dir/models/$name.input.npy" --output "output=$out/out.npy" \
       >"$out/log" 2>&1; then
    diff="$("$py" -c "import numpy as np, sys; a=np.load(sys.argv[1]).astype(np.float64); b=np.load(sys.argv[2]).astype(np.float64); print('%.1e' % (abs(a-b).max()/max(abs(b).max(),1e-30)))" "$out/out.npy" "$dir/models/$name.ref.npy")"
    ok="$("$py" -c "print('passed' if float('$diff') <= 1e-4 else 'FAILED')")"
    [ "$ok" = passed ] || status=1
    bench="$("$bin/hexir-run" "$hxb" --benchmark 20 2>&1 | grep -o 'median [0-9.]* ms' || true)"
    rows+=("$name on the host (x86-64-v3)|$ok|max rel diff $diff vs PyTorch; $bench")
  else
    rows+=("$name on the host (x86-64-v3)|FAILED|$(tail -1 "$out/log")")
    status=1
  fi
  rm -rf "$out"
done
rows+=("end-to-end graphs and models on CUDA|not run|the compiler has no CUDA target yet (issue 13, item 1)")
printf '\n%-42s %-12s %s\n' "check" "result" "details"
for r in "${rows[@]}"; do
  IFS='|' read -r what result details <<<"$r"
  printf '%-42s %-12s %s\n' "$what" "$result" "$details"
done
if [ "$status" != 0 ]; then
  echo; echo "conformance suite output:"; cat "$cts_log"
fi
rm -f "$cts_log"
exit "$status"
