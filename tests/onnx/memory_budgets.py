#!/usr/bin/python3
"""Memory budgets that force work (issue 14): models compiled for 90%, 75% and 50% of their
unconstrained arena, on the host (one memory space) and on the `edge` machine (SRAM with DRAM
behind it, values moved out and back). Every case either fits, runs and matches PyTorch, or
fails with the explanation and the smallest budget that fits; the `edge_cnn` model does not fit
the edge SRAM as it is and must compile with moved values and match PyTorch. Prints the table
docs/memory.md shows.

Usage: memory_budgets.py --bin BUILD/tools [--models resnet18,gpt_1024]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5
BIG_DRAM = 1 << 30  # room for any test model's weights and parked values


def compile_(bin_dir, onnx, out, *flags):
    plan = out + ".plan.json"
    r = subprocess.run([os.path.join(bin_dir, "hexir-compile"), onnx, "-o", out, "--plan-json", plan, *flags],
                       capture_output=True, text=True)
    return r, (json.load(open(plan)) if r.returncode == 0 else None)


def run_matches(bin_dir, hxb, x, ref, tmp, names=("input", "output")):
    np.save(os.path.join(tmp, "x.npy"), x)
    out = os.path.join(tmp, "y.npy")
    r = subprocess.run([os.path.join(bin_dir, "hexir-run"), hxb, "--input", f"{names[0]}=" + os.path.join(tmp, "x.npy"),
                        "--output", f"{names[1]}=" + out], capture_output=True, text=True)
    if r.returncode != 0:
        return False, r.stderr.strip()
    got = np.load(out).astype(np.float64)
    err = np.abs(got - ref.astype(np.float64))
    return bool(np.all(err <= ATOL + RTOL * np.abs(ref))), f"max |diff| {err.max():.1e}"


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--bin", required=True)
    p.add_argument("--models", default="resnet18,gpt_1024")
    args = p.parse_args()
    failures = []
    rows = []
    with tempfile.TemporaryDirectory(prefix="hexir-budgets-") as tmp:
        def case(model, onnx, x, ref, label, flags, must_fit=False, capacity=None):
            hxb = os.path.join(tmp, f"{model}.{len(rows)}.hxb")
            r, plan = compile_(args.bin, onnx, hxb, *flags)
            if r.returncode == 0:
                ok, detail = run_matches(args.bin, hxb, x, ref, tmp)
                if not ok:
                    failures.append(f"{model} {label}: fits but does not match PyTorch ({detail})")
                if capacity is not None and plan["arena_bytes"] > capacity:
                    failures.append(f"{model} {label}: arena {plan['arena_bytes']} over the budget {capacity}")
                moves = len(plan["moves"])
                rows.append((model, label, "fits", f"arena {plan['arena_bytes']:,} B; {moves} values moved, "
                             f"{plan['moved_bytes']:,} B copied ({1000 * plan['transfer_seconds']:.2f} ms); "
                             f"matches PyTorch ({detail})"))
                return plan
            message = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ""
            smallest = re.search(r"the smallest plan found needs ([0-9,]+) bytes", message)
            if must_fit or not smallest or "raise the budget" not in message:
                failures.append(f"{model} {label}: {'must fit' if must_fit else 'no explanation'}: {message[:300]}")
            peak = re.search(r"peaks at ([0-9,]+) bytes at dispatch (\d+) \(([^)]*)\)", message)
            why = (f"peak {peak.group(1)} B at dispatch {peak.group(2)} ({peak.group(3)[:60]})" if peak else "")
            rows.append((model, label, "refused", f"{why}; smallest plan {smallest.group(1) if smallest else '?'} B"))
            return None

        # Rematerialization: tanh(x) is dropped and recomputed under a 600-byte budget; the
        # result must not change (reference: NumPy).
        graph = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "compiler", "test", "Driver",
                             "recompute.mlir")
        hxb = os.path.join(tmp, "recompute.hxb")
        r, plan = compile_(args.bin, graph, hxb, "--no-fusion", "--memory-budget", "host=600")
        x = np.random.default_rng(1).standard_normal((8, 8)).astype(np.float32)
        e = np.exp(x.astype(np.float64))
        ok, detail = (False, r.stderr) if r.returncode else run_matches(args.bin, hxb, x, np.tanh(x) + e @ e, tmp,
                                                                        ("input0", "output0"))
        if not ok or plan is None or plan["recomputed_bytes"] != 256:
            failures.append(f"recompute graph: {detail[:300]}")
        rows.append(("tanh(x) + exp(x) @ exp(x), 8x8", "host, 600 B", "fits" if ok else "FAILED",
                     f"arena {plan['arena_bytes'] if plan else '?'} B (768 without a budget); tanh(x) recomputed "
                     f"before its reader; matches NumPy ({detail})"))

        # ... and tanh(t) recomputed from t = x @ x, an intermediate still held where tanh(t)
        # is needed again (800-byte budget).
        graph = os.path.join(os.path.dirname(graph), "recompute-intermediate.mlir")
        hxb = os.path.join(tmp, "recompute-intermediate.hxb")
        r, plan = compile_(args.bin, graph, hxb, "--no-fusion", "--memory-budget", "host=800")
        xx = x.astype(np.float64) @ x.astype(np.float64)
        ok, detail = (False, r.stderr) if r.returncode else run_matches(args.bin, hxb, x, np.tanh(xx) + e @ e + xx,
                                                                        tmp, ("input0", "output0"))
        if not ok or plan is None or plan["recomputed_bytes"] != 256 or plan["arena_bytes"] > 800:
            failures.append(f"recompute-intermediate graph: {detail[:300]}")
        rows.append(("tanh(x @ x) + exp(x) @ exp(x) + x @ x, 8x8", "host, 800 B", "fits" if ok else "FAILED",
                     f"arena {plan['arena_bytes'] if plan else '?'} B (1,024 without a budget); tanh(x @ x) "
                     f"recomputed from x @ x, still held; matches NumPy ({detail})"))

        # The edge CNN: over the 1 MiB SRAM as it is, fits with moved values.
        onnx = os.path.join(tmp, "edge_cnn.onnx")
        _, x, ref = models.export("edge_cnn", onnx)
        r, host_plan = compile_(args.bin, onnx, os.path.join(tmp, "edge_host.hxb"))
        if r.returncode != 0 or host_plan["arena_bytes"] <= 1 << 20:
            failures.append("edge_cnn: its host arena should exceed the edge SRAM (1 MiB)")
        rows.append(("edge_cnn", "host, no budget", "fits", f"arena {host_plan['arena_bytes']:,} B"))
        plan = case("edge_cnn", onnx, x, ref, "edge (1 MiB SRAM)", ["--machine", "edge"], must_fit=True,
                    capacity=1 << 20)
        if plan is not None and not plan["moves"]:
            failures.append("edge_cnn: fits the edge SRAM without moving a value (the test lost its point)")
        # Placed by hand (--place): the arena in the DRAM, the weights in the SRAM; the CPU sees
        # both, so it runs as it is.
        plan = case("edge_cnn", onnx, x, ref, "edge, --place intermediates=dram constants=sram",
                    ["--machine", "edge", "--place", "intermediates=dram", "--place", "constants=sram"], must_fit=True)
        if plan is not None and plan["moves"]:
            failures.append("edge_cnn: an arena placed in the 16 MiB DRAM should need no moves")

        for model in [m for m in args.models.split(",") if m]:
            onnx = os.path.join(tmp, model + ".onnx")
            _, x, ref = models.export(model, onnx)
            r, plan = compile_(args.bin, onnx, os.path.join(tmp, model + ".hxb"))
            if r.returncode != 0:
                failures.append(f"{model}: does not compile: {r.stderr[:300]}")
                continue
            arena, constants = plan["arena_bytes"], plan["constant_bytes"] + plan["filled_constant_bytes"]
            rows.append((model, "host, no budget", "fits", f"arena {arena:,} B, constants {constants:,} B"))
            for pct in (90, 75, 50):
                budget = arena * pct // 100
                case(model, onnx, x, ref, f"host, {pct}%", ["--memory-budget", f"host={constants + budget}"],
                     capacity=budget)
                case(model, onnx, x, ref, f"edge SRAM {pct}%",
                     ["--machine", "edge", "--memory-budget", f"sram={budget}", "--memory-budget", f"dram={BIG_DRAM}"],
                     capacity=budget)
    print("| model | budget | result | details |\n|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
