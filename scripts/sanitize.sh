#!/usr/bin/env bash
# The sanitizer stage of the test suite: the runtime, the planner and their tests built with
# AddressSanitizer + UndefinedBehaviorSanitizer (LeakSanitizer on), then the concurrency tests
# with ThreadSanitizer. No compiler (MLIR/LLVM) in these builds: they test what a server links.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
for kind in address thread; do
  dir="${HEXIR_BUILD_DIR:-$root/build}-$kind"
  # clang-22 (as the fuzzers), -O1 with line tables: what the sanitizers' authors recommend for
  # readable reports, and about half the build time of -O2 -g.
  CC=clang-22 CXX=clang++-22 cmake -G Ninja -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DHEXIR_RUNTIME_ONLY=ON -DHEXIR_SANITIZE=$kind -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
  if [ "$kind" = thread ]; then
    cmake --build "$dir" -j 2 --target hal_test vm_test planner_test
    # TSan: the thread pool, many sessions over one module, the planner's parallel portfolio.
    TSAN_OPTIONS=halt_on_error=1:allocator_may_return_null=1 "$dir/hal/hal_test"
    TSAN_OPTIONS=halt_on_error=1:allocator_may_return_null=1 "$dir/vm/vm_test" "8 sessions over 2 threads*"
    TSAN_OPTIONS=halt_on_error=1:allocator_may_return_null=1 "$dir/planner/planner_test" "the parallel portfolio agrees with one thread,best-fit gives the same plan on one thread and on several"
  else
    cmake --build "$dir" -j 2
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --test-dir "$dir" --output-on-failure -j 2
  fi
done
