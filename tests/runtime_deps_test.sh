#!/usr/bin/env bash
# Fails if any given binary needs LLVM or MLIR at run time (directly or transitively).
set -euo pipefail
status=0
for bin in "$@"; do
  needed=$(readelf -d "$bin" | grep NEEDED || true)
  resolved=$(ldd "$bin" || true)
  if echo "$needed$resolved" | grep -Ei 'llvm|mlir' ; then
    echo "FAIL: $bin depends on LLVM or MLIR"
    status=1
  else
    echo "ok: $(basename "$bin") needs: $(echo "$needed" | sed 's/.*\[\(.*\)\]/\1/' | tr '\n' ' ')"
  fi
done
exit $status
