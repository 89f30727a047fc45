#!/usr/bin/env bash
# On-demand (not in CI: the compiler under ASan takes ~6 minutes to build on 2 cores): the
# compiler, ONNX importer included, built with AddressSanitizer + UndefinedBehaviorSanitizer,
# then the ONNX op cases, 300 mutated models and two real models through it. Leak checking is
# off: LLVM keeps process-lifetime globals (leak_bench measures growth instead).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${HEXIR_BUILD_DIR:-$root/build}-asan-compiler"
cmake -G Ninja -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHEXIR_BUILD_COMPILER=ON \
  -DHEXIR_SANITIZE=address -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
cmake --build "$dir" -j 2 --target hexir-compile hexir-run onnx_import_test
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:abort_on_error=1
"$dir/compiler/onnx_import_test"
/usr/bin/python3 "$root/tests/onnx/op_cases.py" --bin "$dir/tools"
/usr/bin/python3 "$root/tests/onnx/mutated_models.py" --bin "$dir/tools" --count 300 --seed 1
for m in resnet18 bert_like; do
  /usr/bin/python3 "$root/tests/onnx/run_model.py" "$m" --bin "$dir/tools"
done
