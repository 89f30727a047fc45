#!/usr/bin/python3
"""Every file the build compiles with clang's precompiled header must compile without it.

The compiler's files read a PCH of 17 MLIR headers (compiler/CMakeLists.txt); a file that uses
one of them without including it builds with clang and fails with GCC, which has no PCH here.
This checks each such file of a Ninja build with -fsyntax-only and without that PCH, two at a
time. To save time it may give the check a smaller PCH instead (CHECK_PCH_TIERS), but only to a file whose own
include closure (clang -M, without any PCH) already holds every one of its headers, so that this
PCH declares nothing the file would not see anyway.
Usage: check-includes.py [BUILD_DIR] [--only SUBSTRING]   (default: build; --only: the files whose
       path holds SUBSTRING)
"""
import concurrent.futures
import hashlib
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time

# Check PCHs, each the one before plus more: the heaviest headers nearly every compiler file
# includes, then those of the host kernel passes (loops, memrefs, vectors, passes), then the GPU
# dialect of the CUDA passes. A file gets the last one its own includes hold.
CHECK_PCH_TIERS = [
    ["mlir/IR/BuiltinOps.h", "mlir/IR/PatternMatch.h", "mlir/Dialect/Arith/IR/Arith.h",
     "mlir/Dialect/Tensor/IR/Tensor.h", "mlir/Dialect/Linalg/IR/Linalg.h"],
    ["mlir/Dialect/Affine/IR/AffineOps.h", "mlir/Dialect/SCF/IR/SCF.h", "mlir/Dialect/MemRef/IR/MemRef.h",
     "mlir/Dialect/Vector/IR/VectorOps.h", "mlir/Dialect/Bufferization/IR/Bufferization.h",
     "mlir/Dialect/Math/IR/Math.h", "mlir/Dialect/Func/IR/FuncOps.h", "mlir/Pass/Pass.h",
     "mlir/Pass/PassManager.h"],
    ["mlir/Dialect/GPU/IR/GPUDialect.h"],
]


def without_pch(command):
    """A compile command's arguments without the PCH, its object and dependency outputs and -c."""
    args, out, skip = shlex.split(command), [], 0
    for i, a in enumerate(args):
        if skip:
            skip -= 1
            continue
        if a == "-Xclang" and i + 1 < len(args) and args[i + 1] in ("-include-pch", "-include"):
            skip = 3  # -Xclang -include-pch -Xclang PATH
            continue
        if a in ("-o", "-MF", "-MT"):
            skip = 1
            continue
        if a in ("-c", "-MD", "-Winvalid-pch") or a.startswith(("-O", "-g")):
            continue
        out.append(a)
    return out


def run(args, cwd):
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True)


def main():
    argv = sys.argv[1:]
    only = None
    if "--only" in argv:
        k = argv.index("--only")
        only = argv[k + 1]
        del argv[k:k + 2]
    build = os.path.abspath(argv[0] if argv else "build")
    start = time.time()
    db = json.loads(subprocess.run(["ninja", "-C", build, "-t", "compdb"], capture_output=True, text=True,
                                   check=True).stdout)
    files = []  # (source, directory, args without PCH and without the source)
    for entry in db:
        if "-include-pch" not in entry["command"] or not entry["file"].endswith((".cpp", ".cc")):
            continue
        if only and only not in entry["file"]:
            continue
        args = without_pch(entry["command"])
        src = entry["file"]
        flags = [a for a in args if a != src and os.path.normpath(os.path.join(entry["directory"], a)) != src]
        files.append((src, entry["directory"], flags))
    if not files:
        print(f"check-includes: no file in {build} reads a precompiled header (configured without PCH?)")
        return 1

    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(2) as pool:
        # The deepest tier whose headers (and those of the tiers before) each file includes itself.
        def closure(item):
            src, cwd, flags = item
            r = run(flags + ["-M", src], cwd)
            deps = r.stdout.replace("\\\n", " ").split()[1:]
            tier, headers = 0, []
            for k, more in enumerate(CHECK_PCH_TIERS):
                headers = headers + more
                if not all(any(d.endswith("/" + h) for d in deps) for h in headers):
                    break
                tier = k + 1
            return tier
        tiers = list(pool.map(closure, files))
        # One check PCH per tier and distinct set of flags (a PCH is read with the flags it was
        # made with), built two at a time.
        for tier in range(1, len(CHECK_PCH_TIERS) + 1):
            with open(os.path.join(tmp, f"tier{tier}.h"), "w") as f:
                f.writelines(f"#include \"{h}\"\n" for t in CHECK_PCH_TIERS[:tier] for h in t)
        wanted = {}
        for (src, cwd, flags), tier in zip(files, tiers):
            key = (tier, hashlib.sha1(" ".join(flags).encode()).hexdigest()[:12])
            if tier and key not in wanted:
                wanted[key] = (cwd, flags)

        def build_pch(item):
            (tier, digest), (cwd, flags) = item
            pch = os.path.join(tmp, f"tier{tier}-{digest}.pch")
            r = run(flags + ["-x", "c++-header", os.path.join(tmp, f"tier{tier}.h"), "-o", pch], cwd)
            return (tier, digest), pch, r
        pchs = {}
        for key, pch, r in pool.map(build_pch, wanted.items()):
            if r.returncode != 0:
                print(r.stderr)
                print("check-includes: could not build the check's PCH")
                return 1
            pchs[key] = pch

        def check(item_tier):
            (src, cwd, flags), tier = item_tier
            extra = []
            if tier:
                extra = ["-include-pch", pchs[(tier, hashlib.sha1(" ".join(flags).encode()).hexdigest()[:12])]]
            return src, run(flags + extra + ["-fsyntax-only", "-O0", src], cwd)
        failed = 0
        for src, r in pool.map(check, zip(files, tiers)):
            if r.returncode != 0:
                failed += 1
                print(f"== {os.path.relpath(src)}\n{r.stderr}")
    print(f"check-includes: {len(files)} files that read the PCH compiled without it (-fsyntax-only; "
          f"with a PCH of headers they include themselves: {[tiers.count(k) for k in range(1, len(CHECK_PCH_TIERS) + 1)]} "
          f"by tier) in {time.time() - start:.0f} s: "
          f"{failed} failed")
    if failed:
        print("check-includes: include what each file uses (GCC builds without the precompiled header)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
