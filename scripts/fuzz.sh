#!/usr/bin/env bash
# Builds the libFuzzer targets with clang-22 (ASan + UBSan) and runs each (every parser of
# outside bytes: the executable loader, hexir-plan's CSV reader, the ONNX importer, hexir-run's
# .npy reader, hexir-serve's HTTP framing and infer requests) for a bounded time
# (HEXIR_FUZZ_SECONDS, default 30) from its seed corpus. A crash fails the run and leaves its
# input in the build folder: fix it and add the input to fuzz/corpus/<target>/.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${HEXIR_BUILD_DIR:-$root/build}-fuzz"
seconds="${HEXIR_FUZZ_SECONDS:-30}"
# The compiler is configured too, for the ONNX importer's target; only the fuzz targets build.
CC=clang-22 CXX=clang++-22 cmake -G Ninja -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DHEXIR_BUILD_COMPILER=ON -DHEXIR_SANITIZE=address -DHEXIR_FUZZ=ON -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
cmake --build "$dir" -j 2 --target loader_fuzzer plan_csv_fuzzer onnx_import_fuzzer npy_fuzzer serve_request_fuzzer \
  fuzz_seed_writer hexir_test_kernels
work="$dir/fuzz-work"
rm -rf "$work" && mkdir -p "$work/loader" "$work/plan_csv" "$work/onnx" "$work/npy" "$work/serve_request"
"$dir/fuzz/fuzz_seed_writer" "$dir/hal/test_kernels.so" "$work/loader/seed.hxb"
cp "$root"/fuzz/corpus/loader/* "$work/loader/" 2>/dev/null || true
cp "$root"/fuzz/corpus/plan_csv/* "$work/plan_csv/"
# ONNX seeds: every op-case and hostile model, generated (nothing generated is committed; an
# input the fuzzer finds becomes a case of tests/onnx/hostile_models.py, and so a seed).
/usr/bin/python3 "$root/fuzz/onnx_seeds.py" "$work/onnx"
# .npy seeds of every dtype and rank 0 to 3, written by NumPy; request seeds as committed.
/usr/bin/python3 - "$work/npy" <<'PY'
import sys
import numpy as np
for i, dtype in enumerate(["<f4", "<f8", "<f2", "|i1", "<i2", "<i4", "<i8", "|u1", "|b1"]):
    for rank in range(4):
        np.save(f"{sys.argv[1]}/seed_{i}_{rank}.npy", np.zeros((2,) * rank, dtype=dtype))
PY
cp "$root"/fuzz/corpus/serve_request/* "$work/serve_request/"
cp "$root"/fuzz/corpus/npy/* "$work/npy/"
cd "$work"
"$dir/fuzz/loader_fuzzer" -max_total_time="$seconds" -max_len=65536 -print_final_stats=1 "$work/loader" 2>&1 | tail -5
"$dir/fuzz/plan_csv_fuzzer" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 "$work/plan_csv" 2>&1 | tail -5
# (Models with large initializers are seeds too: -max_len only limits what the fuzzer makes.)
"$dir/fuzz/onnx_import_fuzzer" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=4096 -print_final_stats=1 \
  "$work/onnx" 2>&1 | tail -5
"$dir/fuzz/npy_fuzzer" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 "$work/npy" 2>&1 | tail -5
"$dir/fuzz/serve_request_fuzzer" -max_total_time="$seconds" -max_len=8192 -print_final_stats=1 \
  "$work/serve_request" 2>&1 | tail -5
echo "fuzzing: no crash in ${seconds} s per target"
