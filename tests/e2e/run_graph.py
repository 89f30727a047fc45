#!/usr/bin/env python3
"""End-to-end check of one test graph through the command-line tools.

Generates the graph and random inputs, runs hexir-compile and hexir-run, and compares every
output with the NumPy reference: max |hexir - ref| must be within rtol * max(|ref|, 1) elementwise
relative plus that absolute floor. Usage: run_graph.py NAME --bin BUILD/tools [--seed N]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graphs  # noqa: E402


def check_plan(name, plan, file_bytes, expect):
    """The memory plan is valid, tight, and shows what the graph is there to show."""
    ok = True
    bufs = plan["buffers"]
    # Independent overlap check: buffers live at a common step must not share bytes, except
    # an in-place handoff (same offset, the older one dies where the newer one is born).
    for a in bufs:
        for b in bufs:
            if a is b or a["first"] > b["last"] or b["first"] > a["last"]:
                continue
            if a["offset"] < b["offset"] + b["size"] and b["offset"] < a["offset"] + a["size"]:
                handoff = (b["alias_of"] == a["name"] and a["last"] == b["first"]) or \
                          (a["alias_of"] == b["name"] and b["last"] == a["first"])
                if not handoff:
                    print(f"{name}: plan overlap between {a['name']} and {b['name']}")
                    ok = False
        if a["offset"] + a["size"] > plan["arena_bytes"]:
            print(f"{name}: {a['name']} lies outside the arena")
            ok = False
    in_place = sum(1 for b in bufs if b["alias_of"])
    print(f"{name}: arena {plan['arena_bytes']} B, lower bound {plan['lower_bound_bytes']} B, "
          f"naive {plan['naive_bytes']} B, {in_place} in place, file {file_bytes} B")
    if plan["arena_bytes"] > plan["lower_bound_bytes"]:
        print(f"{name}: arena above the lower bound")
        ok = False
    if in_place < expect.get("min_in_place", 0):
        print(f"{name}: expected at least {expect['min_in_place']} in-place dispatches")
        ok = False
    if file_bytes > expect.get("max_file_bytes", file_bytes):
        print(f"{name}: executable of {file_bytes} B exceeds {expect['max_file_bytes']} B")
        ok = False
    if plan["filled_constant_bytes"] < expect.get("filled_constant_bytes", 0):
        print(f"{name}: expected {expect['filled_constant_bytes']} B of filled constants")
        ok = False
    return ok


def main():
    p = argparse.ArgumentParser()
    p.add_argument("name", choices=sorted(graphs.GRAPHS))
    p.add_argument("--bin", required=True, help="folder holding hexir-compile and hexir-run")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rtol", type=float, default=1e-5)
    p.add_argument("--target", default="host",
                   help="hexir-compile --target; cuda-emulator runs the CUDA kernels on this CPU")
    p.add_argument("--poison", action="store_true",
                   help="hexir-run --poison: arenas start as signalling NaNs (a read before a write shows)")
    args = p.parse_args()

    rng = np.random.default_rng(args.seed)
    g = graphs.GRAPHS[args.name](rng)
    with tempfile.TemporaryDirectory(prefix=f"hexir-e2e-{args.name}-") as tmp:
        src = os.path.join(tmp, "graph.mlir")
        exe = os.path.join(tmp, "graph.hxb")
        with open(src, "w") as f:
            f.write(g.mlir)
        plan_path = os.path.join(tmp, "plan.json")
        subprocess.run([os.path.join(args.bin, "hexir-compile"), src, "-o", exe, "--plan-json", plan_path,
                        "--target", args.target] + g.expect.get("compile_args", []), check=True)
        with open(plan_path) as f:
            plan = json.load(f)
        ok = check_plan(args.name, plan, os.path.getsize(exe), g.expect)
        cmd = [os.path.join(args.bin, "hexir-run"), exe] + (["--poison"] if args.poison else [])
        for name, value in g.inputs.items():
            path = os.path.join(tmp, f"in_{name}.npy")
            np.save(path, value)
            cmd += ["--input", f"{name}={path}"]
        for name in g.outputs:
            cmd += ["--output", f"{name}={os.path.join(tmp, 'out_' + name + '.npy')}"]
        subprocess.run(cmd + ["--threads", "2"], check=True)
        ref = g.reference(graphs.f64(g.inputs))
        # Workgroups are independent: one thread gives the same bits as two.
        for name in g.outputs:
            os.rename(os.path.join(tmp, f"out_{name}.npy"), os.path.join(tmp, f"two_{name}.npy"))
        # One thread; then inputs and outputs in device buffers (--resident), the run replayed
        # from a recorded graph (--graphs on): the same bits as two threads.
        for extra, what in [(["--threads", "1"], "one thread and two threads differ"),
                            (["--threads", "2", "--resident", "--graphs", "on"],
                             "device-resident through a graph differs from the plain run")]:
            subprocess.run(cmd + extra, check=True)
            for name in g.outputs:
                a = np.load(os.path.join(tmp, f"out_{name}.npy"))
                b = np.load(os.path.join(tmp, f"two_{name}.npy"))
                if a.tobytes() != b.tobytes():
                    print(f"{args.name}/{name}: {what}")
                    ok = False
        # Donated inputs: outputs tied to them can be computed in place, with the same result.
        for out_name, in_name in g.expect.get("tied", {}).items():
            in_place_cmd = [c for c in cmd]
            in_place_cmd += ["--in-place", out_name]
            for extra in [[], ["--resident"]]:
                subprocess.run(in_place_cmd + extra, check=True)
                got = np.load(os.path.join(tmp, f"out_{out_name}.npy"))
                want = ref[out_name]
                how = " in device buffers" if extra else ""
                if not np.allclose(got, want, rtol=args.rtol, atol=args.rtol * max(1.0, float(np.abs(want).max()))):
                    print(f"{args.name}/{out_name}: wrong when computed in place over '{in_name}'{how}")
                    ok = False
                else:
                    print(f"{args.name}/{out_name}: computed in place over the donated '{in_name}'{how} -> ok")
        for name in g.outputs:
            got = np.load(os.path.join(tmp, f"out_{name}.npy"))
            want = ref[name]
            if got.shape != want.shape or got.dtype != np.float32:
                print(f"{name}: got {got.shape} {got.dtype}, want {want.shape} float32")
                ok = False
                continue
            scale = max(float(np.abs(want).max()), 1.0)
            err = np.abs(got.astype(np.float64) - want)
            rel = float(err.max()) / scale
            good = bool(np.all(err <= args.rtol * (np.abs(want) + scale)))
            print(f"{args.name}/{name}: shape {got.shape}, max abs err {err.max():.3g}, "
                  f"max err / max|ref| {rel:.3g} -> {'ok' if good else 'MISMATCH'}")
            ok = ok and good
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
