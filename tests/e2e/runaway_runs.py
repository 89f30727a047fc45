#!/usr/bin/python3
"""Runs that would never end: ONNX Loops whose trip count or condition come from the inputs
(2^31, 2^62 and INT64_MAX trips, a while-loop whose condition stays true, 2^40 outer trips of an
empty inner loop). `hexir-run --timeout` must stop each within its limit plus a margin, exit 3
with a message naming the deadline, and write no output file; a model that finishes within its
timeout runs as usual and matches NumPy. `hexir-run --max-trips 1000` refuses the counted ones
before their first trip and stops the while-loop at 1000 trips (exit 1, the count and the cap
said); the cap is per Loop.

Usage: runaway_runs.py --bin BUILD/tools
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TIMEOUT = 0.5  # --timeout for the runaway runs (seconds)
MARGIN = 10.0  # what a stopped run may take past it on a loaded CI machine (seconds)


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def counting_body():
    """Loop body: v + 1, the condition passed through."""
    return helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"]), helper.make_node("Add", ["v", "one"], ["v_out"])],
        "body", [vi("i", TensorProto.INT64, []), vi("c", TensorProto.BOOL, []), vi("v", TensorProto.FLOAT, [4])],
        [vi("c_out", TensorProto.BOOL, []), vi("v_out", TensorProto.FLOAT, [4])],
        initializer=[numpy_helper.from_array(np.ones(4, np.float32), "one")])


def loop_model(trip_from_input=True):
    """y = x + trips: a Loop whose trip count (m) and condition (c) are model inputs, or (without
    trip_from_input) a while-loop on c alone."""
    ins = [vi("x", TensorProto.FLOAT, [4]), vi("c", TensorProto.BOOL, [])]
    if trip_from_input:
        ins.insert(1, vi("m", TensorProto.INT64, []))
    node = helper.make_node("Loop", ["m" if trip_from_input else "", "c", "x"], ["y"], body=counting_body())
    g = helper.make_graph([node], "g", ins, [vi("y", TensorProto.FLOAT, [4])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def nested_model():
    """An outer loop of m trips whose body runs an inner loop of k trips (k = 0: nothing)."""
    inner = helper.make_node("Loop", ["k", "t", "v"], ["v_out"], body=counting_body())
    outer_body = helper.make_graph(
        [helper.make_node("Identity", ["c"], ["c_out"]), inner],
        "outer", [vi("j", TensorProto.INT64, []), vi("c", TensorProto.BOOL, []), vi("v", TensorProto.FLOAT, [4])],
        [vi("c_out", TensorProto.BOOL, []), vi("v_out", TensorProto.FLOAT, [4])])
    node = helper.make_node("Loop", ["m", "t", "x"], ["y"], body=outer_body)
    g = helper.make_graph([node], "g", [vi("x", TensorProto.FLOAT, [4]), vi("m", TensorProto.INT64, []),
                                        vi("k", TensorProto.INT64, []), vi("t", TensorProto.BOOL, [])],
                          [vi("y", TensorProto.FLOAT, [4])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", required=True)
    args = p.parse_args()
    compile_, run_ = (os.path.join(args.bin, t) for t in ("hexir-compile", "hexir-run"))
    failures = []
    x = np.arange(4, dtype=np.float32)
    true = np.array(True)
    with tempfile.TemporaryDirectory() as tmp:
        def build(name, model):
            onnx.save(model, os.path.join(tmp, name + ".onnx"))
            exe = os.path.join(tmp, name + ".hxb")
            subprocess.run([compile_, os.path.join(tmp, name + ".onnx"), "-o", exe], check=True)
            return exe

        def inputs(values):
            args = []
            for k, v in values.items():
                path = os.path.join(tmp, k + ".npy")
                np.save(path, v)
                args += ["--input", f"{k}={path}"]
            return args

        counted, whiled, nested = build("counted", loop_model()), build("while", loop_model(False)), \
            build("nested", nested_model())
        runaway = [("2^31 trips", counted, {"x": x, "m": np.array(2**31), "c": true}),
                   ("2^62 trips", counted, {"x": x, "m": np.array(2**62), "c": true}),
                   ("INT64_MAX trips", counted, {"x": x, "m": np.array(np.iinfo(np.int64).max), "c": true}),
                   ("a condition that stays true", whiled, {"x": x, "c": true}),
                   ("2^40 outer trips of 0 inner ones", nested,
                    {"x": x, "m": np.array(2**40), "k": np.array(0), "t": true})]
        for what, exe, values in runaway:
            out = os.path.join(tmp, "y.npy")
            if os.path.exists(out):
                os.remove(out)
            start = time.monotonic()
            try:
                r = subprocess.run([run_, exe, "--timeout", str(TIMEOUT), "--output", f"y={out}"] + inputs(values),
                                   capture_output=True, text=True, timeout=TIMEOUT + MARGIN + 30)
            except subprocess.TimeoutExpired:
                failures.append(f"{what}: hexir-run --timeout {TIMEOUT} never returned")
                continue
            seconds = time.monotonic() - start
            ok = (r.returncode == 3 and "passed its deadline" in r.stderr and seconds < TIMEOUT + MARGIN
                  and not os.path.exists(out))
            print(f"{'ok  ' if ok else 'FAIL'} {what}: exit {r.returncode} after {seconds:.2f} s: {r.stderr.strip()}")
            if not ok:
                failures.append(what)
        # Runs that end within their timeout: as without one.
        for what, exe, values, want in [("5 trips", counted, {"x": x, "m": np.array(5), "c": true}, x + 5),
                                        ("3 x 2 nested trips", nested,
                                         {"x": x, "m": np.array(3), "k": np.array(2), "t": true}, x + 6)]:
            out = os.path.join(tmp, "y.npy")
            r = subprocess.run([run_, exe, "--timeout", "60", "--output", f"y={out}"] + inputs(values),
                               capture_output=True, text=True, timeout=120)
            ok = r.returncode == 0 and np.array_equal(np.load(out), want)
            print(f"{'ok  ' if ok else 'FAIL'} {what} within --timeout 60: exit {r.returncode} {r.stderr.strip()}")
            if not ok:
                failures.append(what)
        # --max-trips: a count over the cap is refused before its first trip, a while-loop stops
        # at the cap, a run under it is as without one.
        for what, exe, values, message in [
                ("2^62 trips", counted, {"x": x, "m": np.array(2**62), "c": true},
                 f"a Loop asks for {2**62} trips, over the cap of 1000"),
                ("a condition that stays true", whiled, {"x": x, "c": true},
                 "a Loop was still running after 1000 trips"),
                ("2^40 outer trips", nested, {"x": x, "m": np.array(2**40), "k": np.array(0), "t": true},
                 f"a Loop asks for {2**40} trips, over the cap of 1000")]:
            out = os.path.join(tmp, "y.npy")
            if os.path.exists(out):
                os.remove(out)
            start = time.monotonic()
            r = subprocess.run([run_, exe, "--max-trips", "1000", "--output", f"y={out}"] + inputs(values),
                               capture_output=True, text=True, timeout=120)
            seconds = time.monotonic() - start
            ok = r.returncode == 1 and message in r.stderr and seconds < 10 and not os.path.exists(out)
            print(f"{'ok  ' if ok else 'FAIL'} {what} with --max-trips 1000: exit {r.returncode} after {seconds:.2f} s: "
                  f"{r.stderr.strip()}")
            if not ok:
                failures.append(f"{what} with --max-trips")
        r = subprocess.run([run_, nested, "--max-trips", "3", "--output", f"y={tmp}/y.npy"] +
                           inputs({"x": x, "m": np.array(3), "k": np.array(3), "t": true}),
                           capture_output=True, text=True, timeout=120)
        ok = r.returncode == 0 and np.array_equal(np.load(f"{tmp}/y.npy"), x + 9)
        print(f"{'ok  ' if ok else 'FAIL'} 3 x 3 nested trips with --max-trips 3 (the cap is per Loop): "
              f"exit {r.returncode} {r.stderr.strip()}")
        if not ok:
            failures.append("--max-trips per loop")
        for bad in ("0", "-1", "abc"):
            r = subprocess.run([run_, counted, "--max-trips", bad], capture_output=True, text=True)
            ok = r.returncode == 1 and "--max-trips needs a number of trips" in r.stderr
            print(f"{'ok  ' if ok else 'FAIL'} --max-trips {bad} refused")
            if not ok:
                failures.append(f"--max-trips {bad}")
        for bad in ("0", "-1", "abc", "nan"):
            r = subprocess.run([run_, counted, "--timeout", bad], capture_output=True, text=True)
            ok = r.returncode == 1 and "--timeout needs a number of seconds" in r.stderr
            print(f"{'ok  ' if ok else 'FAIL'} --timeout {bad} refused")
            if not ok:
                failures.append(f"--timeout {bad}")
    print(f"runaway_runs: {len(failures)} failed" + (": " + ", ".join(failures) if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
