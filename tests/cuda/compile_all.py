#!/usr/bin/python3
"""Every end-to-end graph and ONNX test model compiles for --target cuda, without a GPU.

Checks what can be checked on a machine without one: the executable's kernel library is PTX for
the requested chip, every dispatch launches an entry the PTX defines, the PTX imports nothing
(no libdevice, no libc), and the host device refuses the executable with a message. Where a
CUDA toolkit happens to be installed (ptxas on PATH or in /usr/local/cuda), each PTX file is
also assembled; the build never needs one. Running the kernels is the device check's job
(scripts/device-check.sh); their results are checked here through the cuda-emulator target
(run_model.py / run_graph.py --target cuda-emulator).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
import graphs  # noqa: E402

MODELS = ["mlp", "resnet18", "mobilenet_v2", "mobilenet_v3_small", "squeezenet1_1", "shufflenet_v2_x1_0",
          "efficientnet_b0", "bert_like", "gpt_like"]


def ptxas_path():
    found = shutil.which("ptxas")
    if found:
        return found
    return "/usr/local/cuda/bin/ptxas" if os.access("/usr/local/cuda/bin/ptxas", os.X_OK) else None


def spills(report):
    """Problems in `ptxas -v` output: a matmul or convolution kernel that spills registers to
    local memory (its accumulators are meant to be registers: ThreadPrivate.h)."""
    problems = []
    for entry, stores, loads in re.findall(
            r"Function properties for (\S+)\s*\n\s*\d+ bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads",
            report):
        if ("matmul" in entry or "conv" in entry) and (int(stores) or int(loads)):
            problems.append(f"{entry} spills {stores} bytes of registers ({loads} loaded back)")
    return problems


def check(name, exe, bin_dir, chip, ptxas, tmp):
    """Returns a list of problems with the CUDA executable `exe`."""
    problems = []
    dump = subprocess.run([os.path.join(bin_dir, "hexir-dump"), "--ptx", exe], capture_output=True, text=True)
    if dump.returncode != 0:
        return [f"hexir-dump failed: {dump.stderr.strip()}"]
    text = dump.stdout
    if "target: cuda; memory spaces: 0 device" not in text:
        problems.append("not a CUDA executable with a device memory space")
    ptx = text.split("PTX (", 1)[1].split("\n", 1)[1] if "PTX (" in text else ""
    ptx = ptx.split("\nfunction ", 1)[0]
    if f".target {chip}" not in ptx:
        problems.append(f"PTX is not for {chip}")
    imports = [line.strip() for line in ptx.splitlines() if line.strip().startswith(".extern")]
    if imports:
        problems.append(f"PTX imports {imports[:3]}")
    defined = set(re.findall(r"\.entry\s+([A-Za-z0-9_$]+)\s*\(", ptx))
    launched = set(re.findall(r"DISPATCH (\S+) \(library", text))
    if not launched:
        problems.append("no dispatch")
    missing = launched - defined
    if missing:
        problems.append(f"dispatches of entries the PTX does not define: {sorted(missing)[:3]}")
    if ptxas:
        path = os.path.join(tmp, name + ".ptx")
        with open(path, "w") as f:
            f.write(ptx)
        r = subprocess.run([ptxas, "-v", "-arch=" + chip, path, "-o", path + ".cubin"], capture_output=True, text=True)
        if r.returncode != 0:
            problems.append(f"ptxas refused the PTX: {r.stderr.strip()[:300]}")
        else:
            problems += spills(r.stderr)
    return problems, len(launched), len(ptx)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--bin", required=True)
    p.add_argument("--chip", default="sm_90")
    p.add_argument("--models", default=",".join(MODELS))
    args = p.parse_args()
    ptxas = ptxas_path()
    print(f"ptxas: {ptxas or 'none (the PTX is checked as text only)'}")
    failed = 0
    with tempfile.TemporaryDirectory(prefix="hexir-cuda-") as tmp:
        cases = []
        rng = np.random.default_rng(0)
        for gname in sorted(graphs.GRAPHS):
            src = os.path.join(tmp, gname + ".mlir")
            with open(src, "w") as f:
                f.write(graphs.GRAPHS[gname](rng).mlir)
            cases.append((gname, src))
        for model in [m for m in args.models.split(",") if m]:
            subprocess.run([sys.executable, os.path.join(HERE, "..", "onnx", "make_model.py"), model, "--out-dir", tmp],
                           check=True, stdout=subprocess.DEVNULL)
            cases.append(("onnx_" + model, os.path.join(tmp, model + ".onnx")))
        for name, src in cases:
            exe = os.path.join(tmp, name + ".cuda.hxb")
            r = subprocess.run([os.path.join(args.bin, "hexir-compile"), src, "--target", "cuda", "--cuda-arch", args.chip,
                                "-o", exe], capture_output=True, text=True)
            if r.returncode != 0:
                print(f"{name}: hexir-compile --target cuda failed:\n{r.stderr}")
                failed += 1
                continue
            problems, dispatches, size = check(name, exe, args.bin, args.chip, ptxas, tmp)
            print(f"{name}: {dispatches} kernels launched, {size} bytes of PTX"
                  + (", ptxas ok" if ptxas and not problems else "") + ("" if not problems else ": " + "; ".join(problems)))
            failed += bool(problems)
        # The host device refuses a CUDA executable, saying why.
        r = subprocess.run([os.path.join(args.bin, "hexir-run"), os.path.join(tmp, cases[0][0] + ".cuda.hxb")],
                           capture_output=True, text=True)
        if r.returncode == 0 or "compiled for target 'cuda'" not in r.stderr:
            print(f"hexir-run on the host device: expected a refusal naming the target, got {r.stderr.strip()!r}")
            failed += 1
    print(f"{len(cases) - failed} of {len(cases)} compiled for CUDA")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
