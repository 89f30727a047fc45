#!/usr/bin/python3
"""libhexir_runtime.so exports the public API only (include/hexir/, marked HEXIR_API): every
strong symbol it defines is one of hexir's public classes or functions, and the weak ones are
the standard library's template instantiations (libstdc++ gives namespace std default
visibility, so those cannot be hidden). Nothing of the VM, the HAL, the reader or flatbuffers.
Usage: runtime_exports_test.py LIBRARY"""
import re
import subprocess
import sys

PUBLIC = ("Runtime", "Module", "Session", "DeviceBuffer", "Status", "StatusCodeName", "ElementTypeSize", "ElementTypeName", "SetLogHandler",
          "DescribeTensor")
public = re.compile(r"^(typeinfo for |typeinfo name for |vtable for )?hexir::(%s)\b" % "|".join(PUBLIC))

lib = sys.argv[1]
names = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
rows = [line.split(maxsplit=2) for line in names.splitlines() if len(line.split()) == 3]
demangled = subprocess.run(["c++filt"], input="\n".join(r[2] for r in rows), capture_output=True, text=True,
                           check=True).stdout.splitlines()
bad, counts = [], {"public API": 0, "standard library (weak)": 0}
for (_, kind, _), name in zip(rows, demangled):
    if public.match(name):
        counts["public API"] += 1
    # A template instantiation's demangled name starts with its return type ("void*& std::vector<...>
    # ::emplace_back", as clang names it): the function's scope follows a space, * or &.
    elif kind in "WVu" and re.match(r"^(typeinfo for |typeinfo name for |vtable for )?([^:]*?[ *&])?(std|__gnu_cxx)::", name):
        counts["standard library (weak)"] += 1
    else:
        bad.append(f"{kind} {name}")
print(f"{lib}: {len(rows)} exported symbols: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
for b in bad:
    print("not public:", b[:200])
sys.exit(1 if bad or counts["public API"] == 0 else 0)
