#!/usr/bin/env python3
"""Memory-plan benchmark on real graphs (not a test): for each test graph, the naive sum (one
allocation per value), the lower bound before in-place sharing and views, the lower bound of
the final schedule, the arena, and the live peak before and after memory-aware scheduling —
all from one hexir-compile run per graph. Also what a 256x256 splat constant costs in the file.

Usage: benchmarks/plan_graphs.py [BUILD_DIR] [--smoke]
--smoke (CI): the first two graphs and the splat comparison; seconds, no figures checked.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e"))
import graphs  # noqa: E402


def compile_graph(tools, text, tmp, name, extra=()):
    src = os.path.join(tmp, name + ".mlir")
    exe = os.path.join(tmp, name + ".hxb")
    plan = os.path.join(tmp, name + ".json")
    with open(src, "w") as f:
        f.write(text)
    subprocess.run([os.path.join(tools, "hexir-compile"), src, "-o", exe, "--plan-json", plan, *extra], check=True)
    return json.load(open(plan)), os.path.getsize(exe)


def main():
    args = sys.argv[1:]
    smoke = "--smoke" in args
    args = [a for a in args if a != "--smoke"]
    build = args[0] if args else os.path.join(os.path.dirname(__file__), "..", "build")
    tools = os.path.join(build, "tools")
    print(f"{'graph':16} {'naive':>9} {'lb-before':>10} {'lb-final':>9} {'arena':>9} {'arena/lb':>9} "
          f"{'naive/arena':>11} {'peak-prog':>10} {'peak-sched':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in list(graphs.GRAPHS.items())[:2 if smoke else None]:
            g = make(np.random.default_rng(0))
            plan, _ = compile_graph(tools, g.mlir, tmp, name)
            lb = max(plan["lower_bound_bytes"], 1)
            arena = plan["arena_bytes"]
            print(f"{name:16} {plan['naive_bytes']:9} {plan['lower_bound_before_in_place_bytes']:10} "
                  f"{plan['lower_bound_bytes']:9} {arena:9} {arena / lb:9.3f} "
                  f"{plan['naive_bytes'] / max(arena, 1):11.1f} {plan['peak_program_order_bytes']:10} "
                  f"{plan['peak_scheduled_bytes']:10}")

        # The cost of a 256x256 splat: the same graph with the constant as a splat (a fill) and
        # as dense random data (stored), against a 4x4 splat as the baseline.
        def graph_with(const_attr):
            return ("func.func @main(%x: tensor<256x256xf32>) -> tensor<256x256xf32> {\n"
                    f"  %c = \"tosa.const\"() {{values = {const_attr} : tensor<256x256xf32>}} : () -> tensor<256x256xf32>\n"
                    "  %y = tosa.add %x, %c : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>\n"
                    "  return %y : tensor<256x256xf32>\n}\n")
        _, splat_bytes = compile_graph(tools, graph_with("dense<0.75>"), tmp, "splat256")
        dense = np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32)
        _, dense_bytes = compile_graph(tools, graph_with('dense<"0x' + dense.tobytes().hex() + '">'), tmp, "dense256")
        as_input = ("func.func @main(%x: tensor<256x256xf32>, %c: tensor<256x256xf32>) -> tensor<256x256xf32> {\n"
                    "  %y = tosa.add %x, %c : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>\n"
                    "  return %y : tensor<256x256xf32>\n}\n")
        _, input_bytes = compile_graph(tools, as_input, tmp, "asinput")
        print(f"\n256x256 f32 constant in y = x + c: executable {splat_bytes} B as a splat, {dense_bytes} B stored "
              f"densely ({dense_bytes / splat_bytes:.1f}x); {input_bytes} B when c is an input instead.")
        print(f"the splat costs {splat_bytes - input_bytes:+d} B against passing c as an input (a 32-byte fill "
              f"descriptor and the FilledConstant size, minus the input's signature)")


if __name__ == "__main__":
    main()
