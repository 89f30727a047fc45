#!/usr/bin/env bash
# Builds the libFuzzer targets with clang-22 (ASan + UBSan) and runs each for a bounded time
# (HEXIR_FUZZ_SECONDS, default 30) from its seed corpus. A crash fails the run and leaves its
# input in the build folder: fix it and add the input to fuzz/corpus/<target>/.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${HEXIR_BUILD_DIR:-$root/build}-fuzz"
seconds="${HEXIR_FUZZ_SECONDS:-30}"
CC=clang-22 CXX=clang++-22 cmake -G Ninja -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DHEXIR_BUILD_COMPILER=OFF -DHEXIR_SANITIZE=address -DHEXIR_FUZZ=ON -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
cmake --build "$dir" -j 2 --target loader_fuzzer plan_csv_fuzzer fuzz_seed_writer hexir_test_kernels
work="$dir/fuzz-work"
rm -rf "$work" && mkdir -p "$work/loader" "$work/plan_csv"
"$dir/fuzz/fuzz_seed_writer" "$dir/hal/test_kernels.so" "$work/loader/seed.hxb"
cp "$root"/fuzz/corpus/loader/* "$work/loader/" 2>/dev/null || true
cp "$root"/fuzz/corpus/plan_csv/* "$work/plan_csv/"
cd "$work"
"$dir/fuzz/loader_fuzzer" -max_total_time="$seconds" -max_len=65536 -print_final_stats=1 "$work/loader" 2>&1 | tail -4
"$dir/fuzz/plan_csv_fuzzer" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 "$work/plan_csv" 2>&1 | tail -4
echo "fuzzing: no crash in ${seconds} s per target"
