#!/usr/bin/env python3
"""hexir-plan through its command line: solves MiniMalloc-format problems, writes solutions
that an independent check here accepts, and fails cleanly when a capacity is too small.
Usage: plan_cli.py --bin BUILD/tools
"""
import argparse
import csv
import os
import random
import subprocess
import sys
import tempfile


def check_solution(path, capacity):
    rows = list(csv.DictReader(open(path)))
    bufs = [(int(r["lower"]), int(r["upper"]), int(r["size"]), int(r["offset"])) for r in rows]
    for i, (l1, u1, s1, o1) in enumerate(bufs):
        assert o1 >= 0 and o1 + s1 <= capacity, f"row {i} outside the capacity"
        for l2, u2, s2, o2 in bufs[i + 1:]:
            if l1 < u2 and l2 < u1:  # live at a common time: [lower, upper)
                assert o1 + s1 <= o2 or o2 + s2 <= o1, f"row {i} overlaps another live buffer"
    return len(bufs)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    args = p.parse_args()
    tool = os.path.join(args.bin, "hexir-plan")
    failures = 0
    with tempfile.TemporaryDirectory(prefix="hexir-plan-") as tmp:
        # MiniMalloc's own example: fits 12 exactly.
        example = os.path.join(tmp, "example.csv")
        with open(example, "w") as f:
            f.write("id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\nb4,9,21,4\nb5,0,21,4\n")
        out = os.path.join(tmp, "solution.csv")
        r = subprocess.run([tool, "--input", example, "--capacity", "12", "--output", out],
                           capture_output=True, text=True)
        ok = r.returncode == 0 and "arena: 12 bytes" in r.stdout and "lower bound: 12 bytes" in r.stdout
        ok = ok and check_solution(out, 12) == 5
        print(("ok  " if ok else "FAIL") + " example fits 12\n" + r.stdout)
        failures += not ok
        r = subprocess.run([tool, "--input", example, "--capacity", "11", "--output", out + ".x"],
                           capture_output=True, text=True)
        ok = r.returncode == 1 and "does not fit its capacity of 11 bytes" in r.stderr and not os.path.exists(out + ".x")
        print(("ok  " if ok else "FAIL") + " capacity 11 refused: " + r.stderr.strip())
        failures += not ok
        # A random problem: the solution must verify and reach at least the lower bound.
        rng = random.Random(5)
        rand = os.path.join(tmp, "random.csv")
        with open(rand, "w") as f:
            f.write("id,lower,upper,size\n")
            for i in range(300):
                lo = rng.randrange(0, 200)
                f.write(f"r{i},{lo},{lo + rng.randrange(1, 30)},{rng.randrange(1, 1000)}\n")
        r = subprocess.run([tool, "--input", rand, "--output", out, "--time-limit", "1"],
                           capture_output=True, text=True)
        arena = int(r.stdout.split("arena: ")[1].split()[0]) if r.returncode == 0 else 0
        ok = r.returncode == 0 and check_solution(out, arena) == 300
        print(("ok  " if ok else "FAIL") + " random problem\n" + r.stdout + r.stderr)
        failures += not ok
        bad = os.path.join(tmp, "bad.csv")
        with open(bad, "w") as f:
            f.write("id,lower,upper,size\nx,4,2,8\n")
        r = subprocess.run([tool, "--input", bad], capture_output=True, text=True)
        ok = r.returncode == 1 and "line 2: buffer 'x' has an empty lifetime [4, 2)" in r.stderr
        print(("ok  " if ok else "FAIL") + " malformed CSV: " + r.stderr.strip())
        failures += not ok
    print(f"{4 - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
