#!/usr/bin/env bash
# The GPU check, in two halves (issue 13): the GPU machine has an NVIDIA GPU, CUDA, CMake, ninja
# and Python with NumPy, but no network, no Debian packages and no LLVM/MLIR.
#
#   scripts/device-check.sh --prepare DIR   (here) builds what the GPU machine runs into DIR
#       (about 50 MB): the runtime alone (no LLVM, no MLIR), linked so that it runs on a newer
#       glibc without libstdc++ or xxhash packages: hexir-run, hexir-dump, the HAL conformance
#       suite and its test kernels (host ELF, CUDA PTX); host executables of small ONNX models
#       (x86-64-v3); every end-to-end graph and five ONNX models compiled for --target cuda;
#       benchmark graphs and TorchScript models (scripts/device_prepare.py); inputs and
#       PyTorch/NumPy references; full-size CNNs at 224x224 whose weights compress; and
#       DIR.tar.xz, what travels (at most 64 MiB).
#   scripts/device-check.sh --run DIR[.tar.xz]  (there, about 6 minutes) runs the conformance
#       suite on the CUDA device, every executable against its reference (host, then CUDA),
#       compute-sanitizer (memcheck on mobilenet_v2 at 224x224, racecheck and synccheck on the
#       test-size one), the GPU benchmarks against PyTorch in the same run
#       (scripts/device_cuda.py), and prints one summary table. Without a CUDA driver or device
#       the CUDA rows say "skipped".
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
  # Host and CUDA executables, inputs and references, compiled here with the full build's
  # compiler; the CUDA checks and benchmarks that run them there.
  "$root/scripts/build.sh" >/dev/null
  /usr/bin/python3 "$root/scripts/device_prepare.py" --root "$root" --bin "$root/build/tools" --out "$dir"
  cp "$root/scripts/device_cuda.py" "$dir/share/"
  du -sh "$dir"
  # What travels (at most 64 MiB): the full-size models' weights take 5 values per channel
  # and compress.
  tar -C "$(dirname "$dir")" -cf - "$(basename "$dir")" | xz -T2 -3 >"$dir.tar.xz"
  du -sh "$dir.tar.xz"
  echo "prepared $dir and $dir.tar.xz: carry the archive to the GPU machine and run:"
  echo "  scripts/device-check.sh --run $(basename "$dir").tar.xz"
  exit 0
fi

# --run DIR.tar.xz: unpacked beside itself first.
case "$dir" in
  *.tar.xz)
    tar -C "$(dirname "$dir")" -xJf "$dir"
    dir="${dir%.tar.xz}"
    ;;
esac

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
# Every CUDA executable against its reference, then the GPU benchmarks against PyTorch.
cuda_rows="$(mktemp)"
if ! "$py" "$dir/share/device_cuda.py" "$dir" >"$cuda_rows" 2>&1; then status=1; fi
while IFS= read -r line; do
  case "$line" in *"|"*) rows+=("$line") ;; *) rows+=("device_cuda.py|output|$line") ;; esac
done <"$cuda_rows"
rm -f "$cuda_rows"
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
