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
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DHEXIR_BUILD_COMPILER=ON -DHEXIR_SANITIZE=address -DHEXIR_FUZZ=ON -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
cmake --build "$dir" -j 2 --target loader_fuzzer plan_csv_fuzzer onnx_import_fuzzer npy_fuzzer serve_request_fuzzer \
  fuzz_seed_writer hexir_test_kernels
work="$dir/fuzz-work"
rm -rf "$work" && mkdir -p "$work/loader" "$work/plan_csv" "$work/onnx" "$work/npy" "$work/serve_request"
"$dir/fuzz/fuzz_seed_writer" "$dir/hal/test_kernels.so" "$work/loader/seed.hxb" "$work/loader/seed_control_flow.hxb"
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
# Two fuzzers at a time, one a core, each for the full time; each one's last lines are printed
# when it ends, and any failure fails the stage.
fuzz() {  # fuzz TARGET CORPUS [libFuzzer flags]
  local target="$1" corpus="$2"
  shift 2
  if "$dir/fuzz/$target" -max_total_time="$seconds" -print_final_stats=1 "$@" "$work/$corpus" >"$work/$target.log" 2>&1; then
    echo "== $target"; tail -5 "$work/$target.log"
  else
    echo "== $target FAILED"; tail -40 "$work/$target.log"; return 1
  fi
}
status=0
fuzz loader_fuzzer loader -max_len=65536 & a=$!
fuzz plan_csv_fuzzer plan_csv -max_len=4096 & b=$!
wait $a || status=1
wait $b || status=1
# (Models with large initializers are seeds too: -max_len only limits what the fuzzer makes.)
fuzz onnx_import_fuzzer onnx -max_len=65536 -rss_limit_mb=4096 & a=$!
fuzz npy_fuzzer npy -max_len=4096 & b=$!
wait $a || status=1
wait $b || status=1
fuzz serve_request_fuzzer serve_request -max_len=8192 || status=1
[ $status -eq 0 ] || { echo "fuzzing: a target failed (its input is in $work)"; exit 1; }
echo "fuzzing: no crash in ${seconds} s per target"
