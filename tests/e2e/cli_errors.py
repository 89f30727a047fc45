#!/usr/bin/env python3
"""Bad inputs through the command-line tools: each must fail with its expected message, exit
code 1, no crash and no partial output file. Usage: cli_errors.py --bin BUILD/tools
"""
import argparse
import os
import shutil
import re
import stat
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import graphs  # noqa: E402

FAILURES = []


def run(cmd):
    # A tool that hangs (a FIFO waited for) fails the test instead of stopping it.
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def expect_failure(what, cmd, message, no_file=None):
    r = run(cmd)
    text = r.stdout + r.stderr
    ok = r.returncode == 1 and message in text
    if no_file and os.path.exists(no_file):
        ok = False
        text += f"\n(partial output {no_file} was left behind)"
    print(f"{'ok  ' if ok else 'FAIL'} {what}")
    if not ok:
        FAILURES.append(what)
        print(f"     exit {r.returncode}, expected message {message!r}, got:\n{text}")


def expect_success(what, cmd, message=""):
    r = run(cmd)
    ok = r.returncode == 0 and message in r.stdout + r.stderr
    print(f"{'ok  ' if ok else 'FAIL'} {what}")
    if not ok:
        FAILURES.append(what)
        print(f"     exit {r.returncode}, expected {message!r}, got:\n{r.stdout}{r.stderr}")
    return r


# A graph whose one function is not called main.
OTHER_GRAPH = "func.func @other(%x: tensor<4xf32>) -> tensor<4xf32> {\n  return %x : tensor<4xf32>\n}\n"

# A matmul and its tanh, exp epilogue, each op named by its location (as the ONNX importer names
# ops by their nodes).
NAMED_GRAPH = """\
#id = affine_map<(i, j) -> (i, j)>
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %w = arith.constant dense<0.125> : tensor<8x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %a = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32> loc("mm")
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %t = math.tanh %in : f32
    linalg.yield %t : f32
  } -> tensor<4x16xf32> loc("tanh")
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%in: f32, %o: f32):
    %t = math.exp %in : f32
    linalg.yield %t : f32
  } -> tensor<4x16xf32> loc("exp")
  return %c : tensor<4x16xf32>
}
"""


BAD_GRAPHS = {
    "tensor over 1 TiB": ("func.func @main(%x: tensor<4294967296x4294967296xf32>) -> tensor<4294967296x4294967296xf32> {\n"
                          "  return %x : tensor<4294967296x4294967296xf32>\n}\n",
                          "graph.mlir:1:17: error: argument 0 of @main has type 'tensor<4294967296x4294967296xf32>' "
                          "which would take more than 2^64 bytes, more than the 1099511627776 bytes (1 TiB)"),
    "dynamic dimension": ("func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {\n"
                          "  return %x : tensor<?x4xf32>\n}\n",
                          "graph.mlir:1:17: error: argument 0 of @main has type 'tensor<?x4xf32>' "
                          "which has a dynamic dimension"),
    "unsupported op": ("func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
                       "  %y = tosa.sin %x : (tensor<4xf32>) -> tensor<4xf32>\n"
                       "  return %y : tensor<4xf32>\n}\n",
                       "graph.mlir:2:8: error: unsupported operation 'tosa.sin'"),
    "unsupported element type": ("func.func @main(%x: tensor<4xf16>) -> tensor<4xf16> {\n"
                                 "  return %x : tensor<4xf16>\n}\n",
                                 "element type f16, which is not supported yet; Hexir compiles f32, f64, i64, i32, i16 and i8 tensors"),
    "nothing to compile": ("func.func private @other(%x: tensor<4xf32>) -> tensor<4xf32>\n",
                           "the input has no function to compile (only declarations: @other)"),
    "syntax error": ("func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n  return %y : tensor<4xf32>\n}\n",
                     "use of undeclared SSA value name"),
    "not a tensor": ("func.func @main(%x: f32) -> f32 {\n  return %x : f32\n}\n",
                     "argument 0 of @main has type 'f32' which is not a tensor"),
}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    args = p.parse_args()
    compile_ = os.path.join(args.bin, "hexir-compile")
    run_ = os.path.join(args.bin, "hexir-run")
    dump = os.path.join(args.bin, "hexir-dump")

    with tempfile.TemporaryDirectory(prefix="hexir-cli-") as tmp:
        os.chdir(tmp)
        out = os.path.join(tmp, "out.hxb")
        for what, (text, message) in BAD_GRAPHS.items():
            with open("graph.mlir", "w") as f:
                f.write(text)
            expect_failure(f"hexir-compile: {what}", [compile_, "graph.mlir", "-o", out], message, no_file=out)
        expect_failure("hexir-compile: missing file", [compile_, "nope.mlir", "-o", out],
                       "cannot open 'nope.mlir': No such file or directory", no_file=out)

        # Bad command lines.
        r = run([compile_, "graph.mlir"])
        ok = r.returncode != 0 and "-o OUTPUT must be specified" in r.stderr
        print(("ok  " if ok else "FAIL") + " hexir-compile: missing -o")
        if not ok:
            FAILURES.append("hexir-compile missing -o")
        r = run([compile_, "graph.mlir", "-o", out, "--frobnicate"])
        ok = r.returncode != 0 and "Unknown command line argument '--frobnicate'" in r.stderr and not os.path.exists(out)
        print(("ok  " if ok else "FAIL") + " hexir-compile: unknown option")
        if not ok:
            FAILURES.append("hexir-compile unknown option")
        # --version: every tool names itself and the project's version.
        for tool in ("hexir-compile", "hexir-run", "hexir-dump", "hexir-plan", "hexir-serve"):
            path = os.path.join(args.bin, tool)
            if not os.path.exists(path):
                continue
            r = run([path, "--version"])
            ok = r.returncode == 0 and re.match(rf"{tool} \d+\.\d+\.\d+", r.stdout) is not None
            print(("ok  " if ok else "FAIL") + f" {tool} --version: {r.stdout.strip()}")
            if not ok:
                FAILURES.append(f"{tool} --version")
        expect_failure("hexir-dump: no model", [dump], "usage: hexir-dump [--ptx] MODEL.hxb")
        expect_failure("hexir-dump: missing file", [dump, "nope.hxb"], "cannot open 'nope.hxb'")
        expect_failure("hexir-plan: no input", [os.path.join(args.bin, "hexir-plan")], "no --input given")
        expect_failure("hexir-plan: bad capacity", [os.path.join(args.bin, "hexir-plan"), "--input", "x.csv",
                                                    "--capacity", "lots"], "bad --capacity 'lots'")
        # Numbers are range-checked, never wrapped or read by prefix.
        plan = os.path.join(args.bin, "hexir-plan")
        expect_failure("hexir-plan: negative capacity", [plan, "--input", "x.csv", "--capacity", "-5"],
                       "bad --capacity '-5': a number of bytes from 1 to 2^63 - 1")
        for limit in ["nan", "inf", "-1"]:
            expect_failure(f"hexir-plan: --time-limit {limit}", [plan, "--input", "x.csv", "--time-limit", limit],
                           f"bad --time-limit '{limit}': seconds from 0 to 86400")
        expect_failure("hexir-plan: --threads 2abc", [plan, "--input", "x.csv", "--threads", "2abc"],
                       "--threads must be 1 to 4")
        r = run([compile_, "x.mlir", "-o", out, "--plan-time-limit=nan"])  # a usage error: exit 2
        ok = r.returncode == 2 and "--plan-time-limit needs seconds from 0 to 86400, got nan" in r.stderr
        print(("ok  " if ok else "FAIL") + " hexir-compile: --plan-time-limit nan")
        if not ok:
            FAILURES.append("hexir-compile --plan-time-limit nan")

        # An unknown CPU name is refused with the list of valid ones (not LLVM's warnings and a
        # generic CPU); --version names Hexir.
        with open("graph.mlir", "w") as f:
            f.write(OTHER_GRAPH)
        expect_failure("hexir-compile: unknown --target-cpu", [compile_, "graph.mlir", "--entry", "other", "-o", out,
                                                               "--target-cpu=pentium9"],
                       "unknown --target-cpu 'pentium9'; valid names: host, ", no_file=out)
        # A machine with two memory spaces (the edge preset: SRAM for intermediates, DRAM for
        # constants) runs on the host, each space simulated in RAM, and matches NumPy.
        with open("edge.mlir", "w") as f:
            f.write("func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {\n"
                    "  %w = arith.constant dense<0.5> : tensor<64xf32>\n"
                    "  %a = tosa.tanh %x : (tensor<64xf32>) -> tensor<64xf32>\n"
                    "  %b = tosa.exp %x : (tensor<64xf32>) -> tensor<64xf32>\n"
                    "  %z = \"tosa.const\"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>\n"
                    "  %c = tosa.mul %a, %b, %z : (tensor<64xf32>, tensor<64xf32>, tensor<1xi8>) -> tensor<64xf32>\n"
                    "  %y = tosa.add %c, %w : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>\n"
                    "  return %y : tensor<64xf32>\n}\n")
        xe = np.linspace(-2, 2, 64, dtype=np.float32)
        np.save("xe.npy", xe)
        expect_success("hexir-compile --machine edge", [compile_, "edge.mlir", "-o", "edge.hxb", "--no-fusion",
                                                        "--machine", "edge"])
        expect_success("hexir-run of an edge executable on the host", [run_, "edge.hxb", "--input", "input0=xe.npy",
                                                                       "--output", "output0=ye.npy"])
        ref = np.tanh(xe.astype(np.float64)) * np.exp(xe.astype(np.float64)) + 0.5
        ok = os.path.exists("ye.npy") and np.allclose(np.load("ye.npy"), ref, rtol=1e-5, atol=1e-5)
        print(("ok  " if ok else "FAIL") + " edge executable matches NumPy")
        if not ok:
            FAILURES.append("edge executable matches NumPy")
        # Memory budgets: malformed ones are usage errors.
        for text in ["host", "host=", "=100", "host=-5", "host=1e6", "host=0", "host=99999999999999999999"]:
            r = run([compile_, "graph.mlir", "--entry", "other", "-o", out, "--memory-budget", text])
            ok = r.returncode == 2 and f"--memory-budget '{text}' is not SPACE=BYTES" in r.stderr
            print(("ok  " if ok else "FAIL") + f" hexir-compile: --memory-budget {text}")
            if not ok:
                FAILURES.append(f"hexir-compile --memory-budget {text}")
        # Targets: an unknown one is refused with the known ones; --list-targets names them.
        expect_failure("hexir-compile: unknown --target", [compile_, "graph.mlir", "--entry", "other", "-o", out,
                                                           "--target=tpu"],
                       "unknown target 'tpu' (known targets: host, cuda, cuda-emulator, cuda-emulator-reversed)", no_file=out)
        expect_success("hexir-compile --list-targets", [compile_, "--list-targets"], "host")
        expect_success("hexir-compile --list-targets (cuda)", [compile_, "--list-targets"], "cuda-emulator")
        expect_failure("hexir-compile: unknown --cuda-arch", [compile_, "graph.mlir", "--entry", "other", "-o", out,
                                                                 "--target=cuda", "--cuda-arch=sm_1x"],
                           "unknown CUDA architecture 'sm_1x' (--cuda-arch takes names such as sm_80 or sm_90)",
                           no_file=out)
        expect_success("hexir-compile --target cuda", [compile_, "graph.mlir", "--entry", "other", "-o", out,
                                                       "--target=cuda"], "")
        expect_failure("hexir-run: a CUDA executable on the host", [run_, out],
                       "compiled for target 'cuda', which needs memory space 'device'; device 'host' has no such space")
        expect_success("hexir-compile --target host", [compile_, "graph.mlir", "--entry", "other", "-o", out,
                                                       "--target=host"], "")
        r = expect_success("hexir-compile --version", [compile_, "--version"], "hexir-compile 0.")
        if "is not a recognized processor" in r.stderr:
            FAILURES.append("hexir-compile --target-cpu warning")

        # --entry picks another function.
        with open("graph.mlir", "w") as f:
            f.write(OTHER_GRAPH)
        expect_success("hexir-compile --entry other", [compile_, "graph.mlir", "--entry", "other", "-o", out])
        expect_success("hexir-dump of the --entry executable", [dump, out], "function other")

        # A good model, then bad inputs to hexir-run.
        g = graphs.softmax(np.random.default_rng(1))
        with open("softmax.mlir", "w") as f:
            f.write(g.mlir)
        exe = os.path.join(tmp, "softmax.hxb")
        expect_success("hexir-compile softmax", [compile_, "softmax.mlir", "-o", exe])
        np.save("x.npy", g.inputs["x"])
        # --progress says each phase with the time so far; without it (not a terminal) nothing.
        r = run([compile_, "softmax.mlir", "-o", os.path.join(tmp, "progress.hxb"), "--progress"])
        phases = re.findall(r"^hexir-compile: \d+\.\d s: (\w+)", r.stderr, re.M)
        ok = r.returncode == 0 and phases == ["parsing", "graph", "compiling", "planning"]
        print(("ok  " if ok else "FAIL") + f" hexir-compile --progress: {phases}")
        if not ok:
            FAILURES.append("--progress")
            print("     " + r.stderr)
        r = run([compile_, "softmax.mlir", "-o", os.path.join(tmp, "quiet.hxb")])
        ok = r.returncode == 0 and "hexir-compile: " not in r.stderr
        print(("ok  " if ok else "FAIL") + " hexir-compile without --progress, not on a terminal: no phases")
        if not ok:
            FAILURES.append("quiet compile")
        # Compiling twice gives the same bytes.
        again = os.path.join(tmp, "again.hxb")
        expect_success("hexir-compile softmax again", [compile_, "softmax.mlir", "-o", again])
        same = open(exe, "rb").read() == open(again, "rb").read()
        print(("ok  " if same else "FAIL") + " compiling twice gives byte-identical executables")
        if not same:
            FAILURES.append("deterministic output")
        # Also where the kernels are lowered and emitted in parts on several threads (17
        # different kernels: 3 parts).
        with open("concats.mlir", "w") as f:
            f.write(graphs.concats(np.random.default_rng(1)).mlir)
        outputs = []
        for i in range(2):
            outputs.append(os.path.join(tmp, f"concats{i}.hxb"))
            expect_success("hexir-compile concats", [compile_, "concats.mlir", "-o", outputs[-1]])
        same = open(outputs[0], "rb").read() == open(outputs[1], "rb").read()
        print(("ok  " if same else "FAIL") + " compiling kernels in parallel parts twice gives byte-identical executables")
        if not same:
            FAILURES.append("deterministic output of parallel parts")
        # --copy-model runs from a private copy of the file: the same outputs as the mapped run.
        expect_success("hexir-run --copy-model", [run_, exe, "--copy-model", "--input", "x=x.npy", "--output",
                                                  "probs=copied.npy"])
        expect_success("hexir-run mapped", [run_, exe, "--input", "x=x.npy", "--output", "probs=mapped.npy"])
        same = np.array_equal(np.load("copied.npy"), np.load("mapped.npy"))
        print(("ok  " if same else "FAIL") + " --copy-model gives the mapped run's outputs")
        if not same:
            FAILURES.append("--copy-model outputs")
        # Outputs never overwrite the model, an input or each other, and are written all or none.
        model_bytes = open(exe, "rb").read()
        expect_failure("hexir-run: output onto the model", [run_, exe, "--input", "x=x.npy", "--output",
                                                            f"probs={exe}"], "would overwrite the model")
        expect_failure("hexir-run: output onto the model by another path",
                       [run_, exe, "--input", "x=x.npy", "--output", "probs=./softmax.hxb"], "would overwrite the model")
        expect_failure("hexir-run: output onto an input", [run_, exe, "--input", "x=x.npy", "--output", "probs=x.npy"],
                       "output 'probs' would overwrite input 'x' ('x.npy')")
        if open(exe, "rb").read() != model_bytes or np.load("x.npy").shape != g.inputs["x"].shape:
            FAILURES.append("hexir-run overwrote its model or input")
            print("FAIL hexir-run kept its model and input intact")
        expect_failure("hexir-run: output into a missing folder", [run_, exe, "--input", "x=x.npy", "--output",
                                                                   "probs=nope/p.npy"], "cannot write 'nope/p.npy'",
                       no_file="nope/p.npy")
        with open("two.mlir", "w") as f:
            f.write("func.func @main(%x: tensor<4x10xf32> {hexir.name = \"x\"}) -> (tensor<4x10xf32> {hexir.name = \"a\"}, "
                    "tensor<4x10xf32> {hexir.name = \"b\"}) {\n"
                    "  %a = tosa.tanh %x : (tensor<4x10xf32>) -> tensor<4x10xf32>\n"
                    "  %b = tosa.exp %x : (tensor<4x10xf32>) -> tensor<4x10xf32>\n"
                    "  return %a, %b : tensor<4x10xf32>, tensor<4x10xf32>\n}\n")
        two = os.path.join(tmp, "two.hxb")
        expect_success("hexir-compile two outputs", [compile_, "two.mlir", "-o", two])
        expect_failure("hexir-run: two outputs, one file", [run_, two, "--input", "x=x.npy", "--output", "a=same.npy",
                                                            "--output", "b=./same.npy"],
                       "outputs 'a' and 'b' have the same file", no_file="same.npy")
        expect_failure("hexir-run: second output fails, first not written",
                       [run_, two, "--input", "x=x.npy", "--output", "a=first.npy", "--output", "b=nope/second.npy"],
                       "(no output written)", no_file="first.npy")
        expect_success("hexir-run: two outputs", [run_, two, "--input", "x=x.npy", "--output", "a=first.npy",
                                                  "--output", "b=second.npy"])
        np.save("wrong_shape.npy", np.zeros((3, 10), np.float32))
        np.save("wrong_dtype.npy", np.zeros((4, 10), np.float64))
        expect_success("hexir-run prints outputs without --output", [run_, exe, "--input", "x=x.npy"],
                       "probs: 4x10 f32 [")
        expect_failure("hexir-run: wrong shape", [run_, exe, "--input", "x=wrong_shape.npy"],
                       "input 0 'x' expects 4x10 f32, got 3x10 f32")
        expect_failure("hexir-run: wrong dtype", [run_, exe, "--input", "x=wrong_dtype.npy"],
                       "input 0 'x' expects 4x10 f32, got 4x10 f64")
        expect_failure("hexir-run: missing input", [run_, exe], "missing input 'x': pass --input x=FILE.npy")
        expect_failure("hexir-run: unknown input", [run_, exe, "--input", "x=x.npy", "--input", "z=x.npy"],
                       "no input named 'z' (inputs: x)")
        expect_failure("hexir-run: unknown output", [run_, exe, "--input", "x=x.npy", "--output", "q=q.npy"],
                       "no output named 'q'", no_file="q.npy")
        expect_failure("hexir-run: not an npy", [run_, exe, "--input", "x=softmax.mlir"], "not a .npy file")
        good_npy = open("x.npy", "rb").read()
        with open("short.npy", "wb") as f:
            f.write(good_npy[:-4])
        expect_failure("hexir-run: truncated npy", [run_, exe, "--input", "x=short.npy"],
                       "holds 156 data bytes, its header says 160")
        for runs in ["0", "4294967296", "99999999999999999999999", "1e3"]:
            expect_failure(f"hexir-run: --benchmark {runs}", [run_, exe, "--benchmark", runs],
                           "--benchmark needs a number of runs from 1 to 1000000")
        for threads in ["-3", "3x", "1025"]:
            expect_failure(f"hexir-run: --threads {threads}", [run_, exe, "--threads", threads],
                           "--threads needs a count from 0 to 1024")
        expect_failure("hexir-run: --memory-limit below the session's memory", [run_, exe, "--memory-limit", "64"],
                       "bytes of device memory (arenas ")
        expect_failure("hexir-run: --memory-limit 0", [run_, exe, "--memory-limit", "0"],
                       "--memory-limit needs a number of bytes from 1 to 2^63 - 1")
        expect_success("hexir-run: --memory-limit above it", [run_, exe, "--memory-limit", "1000000000",
                                                              "--input", "x=x.npy"])
        expect_failure("hexir-run: unknown --device", [run_, exe, "--device", "tpu"],
                       "no such device 'tpu' (devices: host, cuda)")
        if not os.path.exists("/dev/nvidia0"):  # CI: no GPU, and the reason is named
            expect_failure("hexir-run: --device cuda without a GPU", [run_, exe, "--device", "cuda"], "no CUDA")
        expect_success("hexir-run: --device host", [run_, exe, "--device", "host", "--input", "x=x.npy"])
        # --graphs on: the host replays the recorded run; the same outputs as commands issued one
        # by one, one recording, and a launch per run (hexir-run binds the same buffers each run).
        expect_success("hexir-run: --graphs off", [run_, exe, "--input", "x=x.npy", "--graphs", "off",
                                                   "--output", "probs=graphs_off.npy"])
        expect_success("hexir-run: --graphs on", [run_, exe, "--input", "x=x.npy", "--graphs", "on",
                                                  "--output", "probs=graphs_on.npy"])
        if os.path.exists("graphs_on.npy") and not np.array_equal(np.load("graphs_on.npy"), np.load("graphs_off.npy")):
            FAILURES.append("hexir-run: --graphs on computes other outputs")
            print("FAIL hexir-run: --graphs on computes other outputs")
        expect_success("hexir-run: --graphs on --benchmark", [run_, exe, "--graphs", "on", "--benchmark", "3"],
                       "graph: 4 launches, 1 recorded, 0 commands updated")
        expect_success("hexir-run: --benchmark without graphs on the host", [run_, exe, "--benchmark", "3"],
                       "graph: off (each command issued)")
        # --resident: inputs and outputs in device buffers (the host's memory here), the same
        # outputs; a resident benchmark reports the host round trip on its own line.
        expect_success("hexir-run: --resident", [run_, exe, "--input", "x=x.npy", "--resident",
                                                 "--output", "probs=resident.npy"])
        if os.path.exists("resident.npy") and not np.array_equal(np.load("resident.npy"), np.load("graphs_off.npy")):
            FAILURES.append("hexir-run: --resident computes other outputs")
            print("FAIL hexir-run: --resident computes other outputs")
        expect_success("hexir-run: --resident --benchmark", [run_, exe, "--resident", "--benchmark", "3"],
                       "host round trip: median")
        expect_failure("hexir-run: --graphs bad", [run_, exe, "--graphs", "sometimes"], "--graphs needs auto, on or off")
        # --profile lists every command of the function once, the dispatches under the entry
        # names hexir-dump shows.
        profiled = expect_success("hexir-run: --profile", [run_, exe, "--profile", "--benchmark", "3"],
                                  "each command waited for")
        rows = [line.split() for line in profiled.stdout.splitlines()
                if re.match(r"\s+\d+ (dispatch|copy|fill|alloc) ", line)]
        dumped = {(int(i), name, int(x) * int(y) * int(z)) for i, name, x, y, z in
                  re.findall(r"^\s+(\d+) DISPATCH (\S+) \(library \d+\) wg\((\d+),(\d+),(\d+)\)",
                             run([dump, exe]).stdout, re.M)}
        profiled_dispatches = {(int(r[0]), r[5], int(r[4])) for r in rows if r[1] == "dispatch"}
        if sorted(int(r[0]) for r in rows) != list(range(len(rows))) or not dumped or profiled_dispatches != dumped:
            FAILURES.append("hexir-run: --profile rows")
            print(f"FAIL hexir-run: --profile rows {rows} against hexir-dump's dispatches {dumped}")
        # --profile names each dispatch's source ops (ONNX node names; here the graph's name
        # locations): a matmul with its fused tanh and exp epilogue is one dispatch of all three.
        with open("named.mlir", "w") as f:
            f.write(NAMED_GRAPH)
        named = os.path.join(tmp, "named.hxb")
        expect_success("hexir-compile named ops", [compile_, "named.mlir", "-o", named])
        # Host kernels are linked by lld inside hexir-compile; --linker runs an ld.lld program
        # instead: the same bytes either way, and a missing program is named.
        lld = shutil.which("ld.lld-22") or "/usr/lib/llvm-22/bin/ld.lld"
        external = os.path.join(tmp, "named_external.hxb")
        expect_success("hexir-compile --linker ld.lld", [compile_, "named.mlir", "-o", external, "--linker", lld])
        if open(external, "rb").read() != open(named, "rb").read():
            FAILURES.append("hexir-compile --linker: other bytes than the in-process link")
            print("FAIL hexir-compile --linker: other bytes than the in-process link")
        expect_failure("hexir-compile --linker missing", [compile_, "named.mlir", "-o", external, "--linker",
                                                          "/nonexistent/ld.lld"], "linker '/nonexistent/ld.lld' not found")
        np.save("named_x.npy", np.ones((4, 8), np.float32))
        profiled = expect_success("hexir-run: --profile names source ops",
                                  [run_, named, "--input", "input0=named_x.npy", "--profile"], "host wall time")
        sources = re.findall(r"^\s+\d+ dispatch .*\[(.*)\]$", profiled.stdout, re.M)
        if [sorted(s.split(", ")) for s in sources] != [["exp", "mm", "tanh"]]:
            FAILURES.append("hexir-run: --profile source ops")
            print(f"FAIL hexir-run: --profile source ops: {sources} in\n{profiled.stdout}")
        expect_failure("hexir-run: --in-place on an untied output", [run_, exe, "--input", "x=x.npy",
                                                                     "--in-place", "probs"],
                       "output 'probs' is not tied to a donated input")
        expect_failure("hexir-run: unknown function", [run_, exe, "--function", "f", "--input", "x=x.npy"],
                       "no function 'f' in the module (it has: main)")
        expect_failure("hexir-run: bad flag", [run_, exe, "--frobnicate"], "unknown option '--frobnicate'")

        # Special files: whatever is read (a model, a graph, an input, a machine file) must be a
        # regular file, refused at once and named otherwise (a FIFO waited for a writer forever,
        # /dev/zero was read until memory ran out); outputs into a device are written in place
        # and the device stays one (-o /dev/full replaced the device node with a file).
        fifo = os.path.join(tmp, "fifo")
        os.mkfifo(fifo)
        for what, cmd in [("hexir-run: a FIFO as the model", [run_, fifo]),
                          ("hexir-dump: a FIFO as the model", [dump, fifo]),
                          ("hexir-compile: a FIFO as the graph", [compile_, fifo, "-o", out]),
                          ("hexir-compile: a FIFO as the machine file",
                           [compile_, "softmax.mlir", "--machine", fifo, "-o", out]),
                          ("hexir-run: a FIFO as an input", [run_, exe, "--input", "x=" + fifo])]:
            expect_failure(what, cmd, f"'{fifo}' is a FIFO, not a regular file")
        expect_failure("hexir-run: /dev/zero as an input", [run_, exe, "--input", "x=/dev/zero"],
                       "'/dev/zero' is a character device, not a regular file")
        expect_failure("hexir-compile: /dev/zero as the graph", [compile_, "/dev/zero", "-o", out],
                       "'/dev/zero' is a character device, not a regular file")
        expect_success("hexir-compile -o /dev/null", [compile_, "softmax.mlir", "-o", "/dev/null"])
        expect_success("hexir-run --output into /dev/null", [run_, exe, "--input", "x=x.npy", "--output",
                                                             "probs=/dev/null"])
        if not stat.S_ISCHR(os.stat("/dev/null").st_mode):
            FAILURES.append("/dev/null replaced")
            print("FAIL /dev/null is no longer a character device")
        expect_failure("hexir-compile -o a folder", [compile_, "softmax.mlir", "-o", tmp],
                       f"cannot write '{tmp}': it is a directory")

        # Corrupted executables are refused by hexir-run and hexir-dump.
        data = open(exe, "rb").read()
        dumped = run([dump, exe]).stdout
        sections = {m.group(1): (int(m.group(2)), int(m.group(3))) for m in
                    re.finditer(r"#\d+ (\w+)\s+offset (\d+)\s+size (\d+)", dumped)}
        with open("truncated.hxb", "wb") as f:
            f.write(data[: len(data) // 2])
        expect_failure("hexir-run: truncated file", [run_, "truncated.hxb", "--input", "x=x.npy"], "truncated")
        expect_failure("hexir-dump: truncated file", [dump, "truncated.hxb"], "truncated")
        code_at, code_len = sections["HostCode"]
        flipped = bytearray(data)
        flipped[code_at + code_len // 2] ^= 0x5A
        with open("flipped.hxb", "wb") as f:
            f.write(flipped)
        expect_failure("hexir-run: flipped byte in the code section", [run_, "flipped.hxb", "--input", "x=x.npy"],
                       "section 0 (HostCode) checksum mismatch")
        with open("empty.hxb", "wb") as f:
            pass
        expect_failure("hexir-run: empty file", [run_, "empty.hxb"], "shorter than the 64-byte header")
        expect_failure("hexir-run: not an executable", [run_, "softmax.mlir"], "bad magic")

    print(f"{len(FAILURES)} failed")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
