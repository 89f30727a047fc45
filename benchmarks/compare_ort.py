#!/usr/bin/python3
"""Hexir against ONNX Runtime on the same ONNX models, in one run (a benchmark, not a test).

For each model: export it from PyTorch (tests/onnx/models.py, fixed seed, benchmark size:
224x224 images, transformers of width 768 over 128 tokens, batch 1), compile it with
hexir-compile (timed; --print-plan gives the arena and its lower bound; hexir-dump the number
of DISPATCH commands), time `hexir-run --benchmark` and ONNX Runtime (onnxruntime-node, see
benchmarks/ort_bench.js) on the same .onnx file and inputs, one after the other, for each
thread count, and check that both give the same output (max |hexir - ort| / max |ort|).

Prints one row per model and thread count: median latency of both and their ratio, peak RSS
of both processes (the range of the rounds' ratios next to it), Hexir's load time next to ORT's session creation, Hexir's arena before fusion (--no-fusion),
its arena and the arena's lower bound, the number of dispatches and the compile time; then the geometric mean of the
ratios per thread count. A model that fails is reported in its row and the others go on; the
exit status is 1 when any failed.

  benchmarks/compare_ort.py [--models a,b,c] [--precision f32,int8,bf16] [--runs N] [--rounds R] [--threads 1,2]
                            [--bin build/tools] [--work-dir build/compare_ort] [--ort-dir build/ort-node]
                            [--agree-inputs N] [--smoke]

--precision int8 adds a row per model and thread count for its S8S8 QDQ model, made here as ONNX
Runtime's quantize_static makes it (benchmarks/quantize_qdq.py: per-channel int8 weights,
activations calibrated with min/max on 4 seeded inputs): Hexir (hexir-compile's default: int8
kernels, on VNNI dot products or vpmaddwd pairs) against ONNX Runtime on the same QDQ file, which it fuses into its
own int8 kernels. The row adds Hexir int8 / Hexir f32 (same threads, same run), the executable's
size, and the agreement with ONNX Runtime's int8 output over --agree-inputs seeded inputs (default
100): top-1 equal, and the largest difference in units of max |ort| (for int8 rows hx/ort's check
is this, not the f32 tolerance); then, over the first --reference-inputs (default 5), each
runtime's top-1 and largest difference against the NumPy evaluation of the QDQ graph
(tests/onnx/onnx_numpy.py), the operators' own definition. The CPU's vnni/bf16/amx flags head the table.

--precision bf16 adds a row per model and thread count for Hexir's --precision bf16 (matmuls and
convolutions on bf16 operands, f32 accumulation; AVX512-BF16 dot products where the CPU has them)
against ONNX Runtime's f32 on the same f32 model (ONNX Runtime has no bf16 mode for f32 models on
x86). The row adds Hexir bf16 / Hexir f32 and the accuracy bf16 costs: agreement with ONNX
Runtime's f32 output over --agree-inputs seeded inputs, as for int8.

Each row runs --rounds rounds (default 3) of both runtimes, alternating which goes first; each
side of a round runs at least --runs times and at least one second (more runs for a model of
microseconds), the same number for both runtimes. Latencies are the medians of the rounds'
medians; hx/ort is the median of the rounds' ratios, its range in the next column: the
machines this runs on have slow spells of seconds, which two medians measured one after the
other turn into a ratio off by 10-20%.
--smoke (CI): the MLP and squeezenet1_1 at the tests' 64x64 size, 3 runs, 1 thread, f32, int8 and
bf16 (2 inputs for the agreement).
onnxruntime-node is installed with npm into --ort-dir once and reused.
"""
import argparse
import fcntl
import hashlib
import json
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "onnx"))

ORT_VERSION = "1.30.0"
MODELS = ["resnet18", "resnet50", "mobilenet_v2", "efficientnet_b0", "squeezenet1_1", "bert_like", "gpt_like",
          "mlp"]
SMOKE_MODELS = ["mlp", "squeezenet1_1"]
PRECISIONS = ["f32", "int8", "bf16"]
QUANTIZE_SAMPLES = 4  # calibration inputs of the int8 models
AGREE = 1e-3  # max |hexir - ort| / max |ort| above this: the row is flagged
MIN_SECONDS = 1.0  # a row's runs last at least this long (more runs for tiny models)


class StageError(Exception):
    def __init__(self, stage, message):
        super().__init__(f"{stage}: {message}")
        self.stage = stage


def first_line(text):
    for line in (text or "").splitlines():
        line = line.strip()
        if line:
            return line[:300]
    return "(no message)"


def kill_group(p):
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run(cmd, stage, timeout, env=None, own_rss=False):
    """Runs `cmd`; returns (stdout, seconds). Raises StageError with the first line of the error.

    own_rss: the command reports its peak RSS (getrusage's ru_maxrss). Linux carries the peak
    RSS of the process image an exec replaces over into the new one, and a child of this
    process starts as a copy of it (PyTorch included: ~250 MiB), so such a command is started
    from a forked shell, whose small image is what it inherits."""
    program = cmd[0]
    if own_rss:
        cmd = ["/bin/sh", "-c", '"$@"; exit $?', "sh", *cmd]  # not the last command: sh forks it
    t0 = time.monotonic()
    try:
        # Its own process group, so that a timeout ends the command's children too.
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                             start_new_session=True)
    except OSError as e:
        raise StageError(stage, f"cannot run {program}: {e}")
    try:
        stdout, stderr = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(p)
        p.communicate()
        raise StageError(stage, f"timed out after {timeout} s")
    except BaseException:  # Ctrl-C: leave nothing running
        kill_group(p)
        raise
    secs = time.monotonic() - t0
    if p.returncode != 0:
        # Prefer a line that says "error"; hexir-compile prints notes around it.
        lines = [l for l in (stderr + "\n" + stdout).splitlines() if "error" in l.lower()]
        status = f"killed by signal {-p.returncode}" if p.returncode < 0 else f"exit {p.returncode}"
        raise StageError(stage, first_line(lines[0] if lines else stderr or stdout) + f" ({status})")
    return stdout, secs


# ---------------------------------------------------------------------------------------------
# onnxruntime-node, installed with npm once per cache folder.

def ort_usable(pkg):
    try:
        with open(os.path.join(pkg, "package.json")) as f:
            if json.load(f).get("version") != ORT_VERSION:
                return False
        r = subprocess.run(["node", "-e", f"require({json.dumps(pkg)})"], capture_output=True, timeout=120)
        return r.returncode == 0
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return False


def ensure_ort(ort_dir):
    """Returns the path of the onnxruntime-node package, installing it when missing."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        raise StageError("ort-install", "node and npm are needed for ONNX Runtime (Node.js 20: apt-get install nodejs npm)")
    os.makedirs(ort_dir, exist_ok=True)
    pkg = os.path.join(os.path.abspath(ort_dir), "node_modules", "onnxruntime-node")
    with open(os.path.join(ort_dir, ".install.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one installer at a time (ctest -j)
        if ort_usable(pkg):
            return pkg
        env = dict(os.environ, ONNXRUNTIME_NODE_INSTALL="skip")  # else it fetches a CUDA provider
        cmd = ["npm", "install", "--prefix", os.path.abspath(ort_dir), "--no-audit", "--no-fund",
               "--loglevel=error", f"onnxruntime-node@{ORT_VERSION}"]
        error = ""
        for attempt in (1, 2):
            print(f"installing onnxruntime-node@{ORT_VERSION} into {ort_dir} with npm (attempt {attempt})",
                  file=sys.stderr, flush=True)
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
                error = first_line(r.stderr) if r.returncode != 0 else ""
            except subprocess.TimeoutExpired:
                error = "npm install timed out after 600 s"
            if not error and ort_usable(pkg):
                return pkg
            error = error or "installed, but require('onnxruntime-node') fails"
            shutil.rmtree(os.path.join(ort_dir, "node_modules"), ignore_errors=True)
            if attempt == 1:
                time.sleep(5)
        raise StageError("ort-install", f"npm install onnxruntime-node@{ORT_VERSION} failed twice: {error} "
                                        "(is the npm registry reachable? see docs/testing.md)")


# ---------------------------------------------------------------------------------------------
# One model.

def export(name, work, full):
    """Writes NAME.onnx, NAME.input.npy, NAME.ref.npy unless an export of the same source exists."""
    base = os.path.join(work, name)
    with open(os.path.join(ROOT, "tests", "onnx", "models.py"), "rb") as f:
        key = hashlib.sha256(f.read() + f"{name} full={full} torch".encode()).hexdigest()
    stamp = base + ".stamp"
    files = [base + ".onnx", base + ".input.npy", base + ".ref.npy"]
    if os.path.exists(stamp) and open(stamp).read() == key and all(os.path.exists(p) for p in files):
        return 0.0
    t0 = time.monotonic()
    try:
        import models  # tests/onnx/models.py: PyTorch is imported only when a model is exported
        _, x, ref = models.export(name, base + ".onnx", full=full)
    except Exception as e:  # noqa: BLE001 - any exporter failure is this model's failure
        raise StageError("export", first_line(f"{type(e).__name__}: {e}"))
    np.save(base + ".input.npy", x)
    np.save(base + ".ref.npy", ref)
    with open(stamp, "w") as f:
        f.write(key)
    return time.monotonic() - t0


def quantize(name, work):
    """Writes NAME.qdq.onnx from NAME.onnx (benchmarks/quantize_qdq.py) unless it is up to date."""
    base = os.path.join(work, name)
    sources = b""
    for path in (os.path.join(HERE, "quantize_qdq.py"), os.path.join(ROOT, "tests", "onnx", "onnx_numpy.py"),
                 base + ".stamp"):
        with open(path, "rb") as f:
            sources += f.read()
    key = hashlib.sha256(sources + f"samples={QUANTIZE_SAMPLES}".encode()).hexdigest()
    stamp = base + ".qdq.stamp"
    if os.path.exists(stamp) and open(stamp).read() == key and os.path.exists(base + ".qdq.onnx"):
        return
    try:
        import onnx
        import quantize_qdq
        model = onnx.load(base + ".onnx")
        onnx.save(quantize_qdq.quantize(model, quantize_qdq.random_feeds(model, QUANTIZE_SAMPLES, 0)),
                  base + ".qdq.onnx")
    except Exception as e:  # noqa: BLE001 - any quantizer failure is this model's failure
        raise StageError("quantize", first_line(f"{type(e).__name__}: {e}"))
    with open(stamp, "w") as f:
        f.write(key)


def cpu_flags():
    """The CPU's flags that reduced precision depends on, as /proc/cpuinfo names them."""
    wanted = ["avx512_vnni", "avx_vnni", "avx512_bf16", "amx_tile", "amx_int8", "amx_bf16"]
    try:
        with open("/proc/cpuinfo") as f:
            flags = set(next(l for l in f if l.startswith("flags")).split(":", 1)[1].split())
    except (OSError, StopIteration):
        return "unknown"
    return " ".join(f"{w}={'yes' if w in flags else 'no'}" for w in wanted)


def agreement(name, args, ort_pkg, model, hxb, reference=False):
    """Top-1 agreement of Hexir and ONNX Runtime over --agree-inputs seeded inputs, and the
    largest difference in units of max |ort|: (equal, count, worst). With `reference` (a QDQ
    model), also each runtime against the NumPy evaluation of the graph (tests/onnx/onnx_numpy.py,
    float64 sums: what the ONNX operators define) over the first --reference-inputs: (count,
    Hexir's top-1 equal to it, ORT's, Hexir's largest difference in units of max |ref|, ORT's),
    or why the evaluation failed."""
    import onnx
    import quantize_qdq
    base = os.path.join(args.work_dir, name)
    m = onnx.load(model, load_external_data=False)
    in_name, out_name = m.graph.input[0].name, m.graph.output[0].name
    feeds = quantize_qdq.random_feeds(m, args.agree_inputs, 100)
    for i, feed in enumerate(feeds):
        np.save(f"{base}.agree.in.{i}.npy", feed[in_name])
    out, _ = run(["node", os.path.join(HERE, "ort_bench.js"), "--ort", ort_pkg, "--model", model,
                  "--input", f"{in_name}={base}.agree.in.{{}}.npy", "--output", f"{out_name}={base}.agree.ort.{{}}.npy",
                  "--each", str(len(feeds))], "onnxruntime (agreement)", args.timeout)
    equal, worst = 0, 0.0
    for i in range(len(feeds)):
        run([os.path.join(args.bin, "hexir-run"), hxb, "--input", f"{in_name}={base}.agree.in.{i}.npy",
             "--output", f"{out_name}={base}.agree.hx.{i}.npy"], "hexir-run (agreement)", args.timeout)
        h, o = np.load(f"{base}.agree.hx.{i}.npy"), np.load(f"{base}.agree.ort.{i}.npy")
        equal += int(np.array_equal(h.reshape(h.shape[0], -1).argmax(-1), o.reshape(o.shape[0], -1).argmax(-1)))
        worst = max(worst, rel_diff(h, o))
    count = min(args.reference_inputs, len(feeds))
    if not reference or count <= 0:
        return equal, len(feeds), worst
    # Random-weight models' classes are nearly tied (resnet50's two best logits 0.1-0.2% of the
    # largest apart), so top-1 against ORT says little; the distance of each runtime from the
    # graph's own definition says which one computes what the model means.
    import onnx_numpy
    full = onnx.load(model)
    ref_hx = ref_ort = 0
    worst_hx = worst_ort = 0.0
    top1 = lambda a: a.reshape(a.shape[0], -1).argmax(-1)
    for i in range(count):
        try:
            ref = onnx_numpy.run(full, {in_name: feeds[i][in_name]}, [out_name])[out_name].astype(np.float64)
        except Exception as e:  # (an op the NumPy evaluator lacks: the row keeps its other figures)
            return equal, len(feeds), worst, f"NumPy evaluation failed: {type(e).__name__}: {e}"
        h, o = np.load(f"{base}.agree.hx.{i}.npy"), np.load(f"{base}.agree.ort.{i}.npy")
        ref_hx += int(np.array_equal(top1(h), top1(ref)))
        ref_ort += int(np.array_equal(top1(o), top1(ref)))
        worst_hx, worst_ort = max(worst_hx, rel_diff(h, ref)), max(worst_ort, rel_diff(o, ref))
    return equal, len(feeds), worst, (count, ref_hx, ref_ort, worst_hx, worst_ort)


def parse_plan(text):
    m = re.search(r"arena (\d+) bytes; lower bound (\d+) bytes", text)
    if not m:
        raise StageError("compile", "no 'arena ... lower bound' line in --print-plan output")
    return int(m.group(1)), int(m.group(2))


def parse_hexir_benchmark(text):
    def number(pattern):
        m = re.search(pattern, text)
        if not m:
            raise StageError("hexir-run", f"no '{pattern}' in hexir-run --benchmark output")
        return float(m.group(1))
    return {"load_ms": number(r"load: ([0-9.]+) ms"), "median_ms": number(r"latency: median ([0-9.]+) ms"),
            "peak_rss_kib": number(r"peak RSS: (\d+) KiB")}


def rel_diff(a, b):
    """max |a - b| / max |b| (both as float64); inf when shapes differ or values are not finite."""
    if a.shape != b.shape:
        return math.inf
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if not (np.all(np.isfinite(a64)) and np.all(np.isfinite(b64))):
        return math.inf
    return float(np.abs(a64 - b64).max() / max(float(np.abs(b64).max()), 1e-30))


def bench_model(name, args, ort_pkg, full, precision="f32"):
    """One dict per thread count (a row); a failure is recorded in the rows it touches. ONNX
    Runtime is timed even when Hexir fails, so the row still shows the baseline. `precision`
    int8: the model's QDQ form (quantize) on both runtimes; bf16: Hexir's --precision bf16
    against ONNX Runtime's f32 (it has no bf16 mode for an f32 model on x86)."""
    work, tools = args.work_dir, args.bin
    base = os.path.join(work, name)
    int8 = precision == "int8"
    model = base + (".qdq.onnx" if int8 else ".onnx")
    tag = "" if precision == "f32" else "." + precision
    hxb = base + tag + ".hxb"
    flags = ["--precision", "bf16"] if precision == "bf16" else []
    info = {"model": name, "precision": precision}
    rows = [dict(info, threads=t, runs=args.runs) for t in args.threads]
    try:
        export(name, work, full)
        if int8:
            quantize(name, work)
    except StageError as e:
        for row in rows:
            row["error"] = str(e)
        return rows
    ref = np.load(base + ".ref.npy")
    hexir_out, hexir_error = None, None
    try:
        plan_text, info["compile_s"] = run([os.path.join(tools, "hexir-compile"), model, "-o",
                                            hxb, "--print-plan"] + flags, "compile", args.timeout)
        with open(base + tag + ".plan.txt", "w") as f:
            f.write(plan_text)
        info["arena"], info["lower_bound"] = parse_plan(plan_text)
        info["file_bytes"] = os.path.getsize(hxb)
        if precision == "f32":
            # The arena before fusion: the same model with every op its own dispatch.
            unfused_text, _ = run([os.path.join(tools, "hexir-compile"), model, "-o", base + ".unfused.hxb",
                                   "--no-fusion", "--print-plan"], "compile --no-fusion", args.timeout)
            os.remove(base + ".unfused.hxb")
            info["arena_unfused"], _ = parse_plan(unfused_text)
        dump, _ = run([os.path.join(tools, "hexir-dump"), hxb], "hexir-dump", args.timeout)
        info["dispatches"] = len(re.findall(r"^\s*\d+ DISPATCH ", dump, re.M))
        # One plain run for the output the check compares.
        run([os.path.join(tools, "hexir-run"), hxb, "--input", f"input={base}.input.npy",
             "--output", f"output={base}{tag}.hexir.npy", "--threads", str(args.threads[0])], "hexir-run",
            args.timeout)
        hexir_out = np.load(base + tag + ".hexir.npy")
        if precision != "f32" and ort_pkg is not None:
            info["top1"] = agreement(name, args, ort_pkg, model, hxb, reference=precision == "int8")
    except StageError as e:
        hexir_error = str(e)
    for row in rows:
        row.update(info)
        t = row["threads"]
        # A side that fails is not run again; its first error goes into the row.
        errors = {"hexir": hexir_error, "ort": None if ort_pkg is not None else args.ort_error}

        def hexir_bench(runs):
            out, _ = run([os.path.join(tools, "hexir-run"), hxb, "--input", f"input={base}.input.npy",
                          "--benchmark", str(runs), "--threads", str(t)],
                         "hexir-run --benchmark", args.timeout, own_rss=True)
            return parse_hexir_benchmark(out)

        def ort_bench(runs):
            out, _ = run(["node", os.path.join(HERE, "ort_bench.js"), "--ort", ort_pkg, "--model", model,
                          "--input", f"input={base}.input.npy", "--output", f"output={base}{tag}.ort.npy",
                          "--threads", str(t), "--runs", str(runs), "--warmup", str(min(10, runs // 10 + 1))],
                         "onnxruntime", args.timeout, own_rss=True)
            try:
                return json.loads(out.strip().splitlines()[-1])
            except (ValueError, IndexError) as e:
                raise StageError("onnxruntime", f"unreadable report ({e})")

        # A model of microseconds (the MLP) is timed for at least MIN_SECONDS, both runtimes
        # alike: 20 runs of 20 us end before the scheduler has spread a new process's threads
        # over the cores, and measure where the threads happened to start.
        # The first round's Hexir side doubles as that measurement when the count stands.
        hexir_rounds, ort_rounds = [], []
        if not errors["hexir"]:
            try:
                first = hexir_bench(row["runs"])
                min_ms = 0 if args.smoke else MIN_SECONDS * 1000
                if first["median_ms"] * row["runs"] < min_ms:
                    row["runs"] = min(100000, math.ceil(min_ms / max(first["median_ms"], 1e-3)))
                else:
                    hexir_rounds.append(first)
            except StageError as e:
                errors["hexir"] = str(e)
        # Rounds of both runtimes, in alternating order: these machines have slow spells of
        # seconds (a neighbour's memory traffic), which a ratio of two medians measured one
        # after the other turns into a ratio off by 10-20%; a round's two medians share its spell.
        for r in range(args.rounds):
            order = ("hexir", "ort") if r % 2 == 0 else ("ort", "hexir")
            for side in order:
                if errors[side] or (side == "hexir" and len(hexir_rounds) > r):
                    continue
                try:
                    if side == "hexir":
                        hexir_rounds.append(hexir_bench(row["runs"]))
                    else:
                        ort_rounds.append(ort_bench(row["runs"]))
                except StageError as e:
                    errors[side] = str(e)
        if errors["hexir"] or errors["ort"]:
            row["error"] = errors["hexir"] or errors["ort"]
        if hexir_rounds:
            row["hexir"] = dict(hexir_rounds[0], median_ms=statistics.median(h["median_ms"] for h in hexir_rounds),
                                peak_rss_kib=max(h["peak_rss_kib"] for h in hexir_rounds))
        if ort_rounds:
            row["ort"] = dict(ort_rounds[0], median_ms=statistics.median(o["median_ms"] for o in ort_rounds),
                              peak_rss_kib=max(o["peak_rss_kib"] for o in ort_rounds))
        if len(hexir_rounds) == len(ort_rounds) == args.rounds:
            row["round_ratios"] = [h["median_ms"] / o["median_ms"] for h, o in zip(hexir_rounds, ort_rounds)
                                   if o["median_ms"] > 0]
        if ort_rounds and hexir_out is not None:
            ort_out = np.load(base + tag + ".ort.npy")
            row["diff"] = rel_diff(hexir_out, ort_out)
            row["diff_torch"] = (rel_diff(hexir_out, ref), rel_diff(ort_out, ref))
    return rows


# ---------------------------------------------------------------------------------------------
# The table.

def size_text(n):
    if n is None:
        return "-"
    return f"{n / 1024:.1f}K" if n < 1 << 20 else f"{n / (1 << 20):.1f}M"


def num(v, fmt):
    return "-" if v is None else format(v, fmt)


COLUMNS = [("model", 16), ("prec", 4), ("thr", 3), ("hexir ms", 10), ("ort ms", 9), ("hx/ort", 7), ("rounds", 9),
           ("vs f32", 6), ("hx MiB", 7), ("ort MiB", 7), ("load ms", 8), ("sess ms", 8), ("unfused", 8), ("arena", 8),
           ("lower bd", 8), ("file", 7), ("disp", 5), ("compile s", 9), ("check", 0)]


def format_row(row, earlier=()):
    """The row's line; `earlier` rows give an int8 or bf16 row its f32 row (same model and threads)."""
    hx, ort = row.get("hexir", {}), row.get("ort", {})
    ratio = hx["median_ms"] / ort["median_ms"] if hx and ort and ort["median_ms"] > 0 else None
    rounds = row.get("round_ratios")
    if rounds:
        ratio = statistics.median(rounds)
    row["ratio"] = ratio
    if row.get("precision") in ("int8", "bf16"):
        # Quantized outputs differ where a value rounds to the neighbouring step (bf16: by its
        # 8-bit significand): top-1 and the largest difference over many inputs, not the f32
        # tolerance.
        top1 = row.get("top1")
        check = f"top-1 {top1[0]}/{top1[1]}, max|d| {top1[2]:.1e} of max|ort|" if top1 else "-"
        if top1 and len(top1) > 3 and isinstance(top1[3], str):
            check += f"; vs QDQ ref: {top1[3]}"
        elif top1 and len(top1) > 3:
            n, ref_hx, ref_ort, d_hx, d_ort = top1[3]
            check += f"; vs QDQ ref ({n}): hx top-1 {ref_hx}, {d_hx:.1e}; ort top-1 {ref_ort}, {d_ort:.1e}"
    elif "diff" in row:
        d = row["diff"]
        check = f"ok {d:.0e}" if d <= AGREE else \
            f"WARNING differs {d:.1e} (vs torch: hexir {row['diff_torch'][0]:.1e}, ort {row['diff_torch'][1]:.1e})"
    else:
        check = "-"
    vs_f32 = None
    if row.get("precision") != "f32" and hx:
        f32 = [r for r in earlier if r["model"] == row["model"] and r["threads"] == row["threads"] and
               r.get("precision") == "f32" and r.get("hexir")]
        if f32:
            vs_f32 = hx["median_ms"] / f32[0]["hexir"]["median_ms"]
    row["vs_f32"] = vs_f32
    if "error" in row:
        check = "FAILED " + row["error"]
    cells = [row["model"], row.get("precision", "f32"), str(row["threads"]), num(hx.get("median_ms"), ".3f"),
             num(ort.get("median_ms"), ".3f"),
             num(ratio, ".2f"), f"{min(rounds):.2f}-{max(rounds):.2f}" if rounds else "-", num(vs_f32, ".2f"),
             num(hx.get("peak_rss_kib") and hx["peak_rss_kib"] / 1024, ".0f"),
             num(ort.get("peak_rss_kib") and ort["peak_rss_kib"] / 1024, ".0f"), num(hx.get("load_ms"), ".2f"),
             num(ort.get("session_ms"), ".0f"), size_text(row.get("arena_unfused")), size_text(row.get("arena")),
             size_text(row.get("lower_bound")), size_text(row.get("file_bytes")),
             num(row.get("dispatches"), "d"), num(row.get("compile_s"), ".1f"), check]
    return " ".join(c.rjust(w) if i else c.ljust(w) for i, (c, (_, w)) in enumerate(zip(cells, COLUMNS)))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", help="comma-separated subset of: " + ",".join(MODELS))
    p.add_argument("--runs", type=int, help="timed runs per model and thread count (default 10; smoke 3)")
    p.add_argument("--threads", help="comma-separated thread counts (default 1,2; smoke 1)")
    p.add_argument("--rounds", type=int, help="rounds of both runtimes per row, alternating which goes first "
                   "(default 3; smoke 1); hx/ort is the median of the rounds' ratios")
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "tools"), help="folder of hexir-compile/-run/-dump")
    p.add_argument("--work-dir", help="exports and executables (default build/compare_ort, smoke build/compare_ort_smoke)")
    p.add_argument("--ort-dir", default=os.path.join(ROOT, "build", "ort-node"), help="npm cache of onnxruntime-node")
    p.add_argument("--timeout", type=int, help="seconds per command (default 3600; smoke 300)")
    p.add_argument("--precision", help="comma-separated precisions: f32, int8, bf16 (default f32; smoke all)")
    p.add_argument("--agree-inputs", type=int, help="inputs of the int8 and bf16 rows' agreement check (default 100; "
                   "smoke 2)")
    p.add_argument("--reference-inputs", type=int, default=5, choices=range(0, 1001), metavar="N",
                   help="of those, how many the int8 rows also compare with the NumPy evaluation of the QDQ graph "
                   "(default 5)")
    p.add_argument("--smoke", action="store_true", help="CI mode: mlp and a 64x64 squeezenet1_1, 3 runs, 1 thread")
    args = p.parse_args()
    models = args.models.split(",") if args.models else (SMOKE_MODELS if args.smoke else MODELS)
    unknown = [m for m in models if m not in MODELS]
    if unknown:
        p.error(f"unknown model(s) {', '.join(unknown)}; choose from {', '.join(MODELS)}")
    precisions = (args.precision or (",".join(PRECISIONS) if args.smoke else "f32")).split(",")
    if any(pr not in PRECISIONS for pr in precisions):
        p.error(f"--precision takes {', '.join(PRECISIONS)}")
    args.agree_inputs = args.agree_inputs or (2 if args.smoke else 100)
    args.runs = args.runs or (3 if args.smoke else 10)
    args.rounds = args.rounds or (1 if args.smoke else 3)
    args.timeout = args.timeout or (300 if args.smoke else 3600)
    try:
        args.threads = [int(t) for t in (args.threads or ("1" if args.smoke else "1,2")).split(",")]
    except ValueError:
        p.error("--threads needs comma-separated counts")
    if args.runs < 1 or args.rounds < 1 or not args.threads or min(args.threads) < 1:
        p.error("--runs, --rounds and --threads must be at least 1")
    args.work_dir = args.work_dir or os.path.join(ROOT, "build", "compare_ort_smoke" if args.smoke else "compare_ort")
    os.makedirs(args.work_dir, exist_ok=True)
    for tool in ("hexir-compile", "hexir-run", "hexir-dump"):
        if not os.access(os.path.join(args.bin, tool), os.X_OK):
            print(f"compare_ort: {os.path.join(args.bin, tool)} not found (build first, or pass --bin)", file=sys.stderr)
            return 1

    ort_pkg, args.ort_error = None, None
    try:
        ort_pkg = ensure_ort(args.ort_dir)
    except StageError as e:
        args.ort_error = str(e)
        print(f"compare_ort: {e}", file=sys.stderr)

    full = not args.smoke
    print(f"Hexir vs ONNX Runtime {ORT_VERSION} (onnxruntime-node), batch 1, {args.rounds} round(s) of "
          f"{args.runs} runs, "
          f"{'test-size models (smoke)' if args.smoke else 'full-size models'}; medians; RSS: peak of each process; "
          f"check: max |hexir - ort| / max |ort| <= {AGREE:g}", flush=True)
    print(f"CPU: {cpu_flags()}", flush=True)
    header = " ".join(n.rjust(w) if i else n.ljust(w) for i, (n, w) in enumerate(COLUMNS))
    print(header)
    print("-" * len(header), flush=True)
    all_rows = []
    for name in models:
        for precision in precisions:
            for row in bench_model(name, args, ort_pkg, full, precision):
                print(format_row(row, all_rows), flush=True)
                all_rows.append(row)

    print()
    geomean = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))  # noqa: E731
    for precision in precisions:
        for t in args.threads:
            rows = [r for r in all_rows if r["threads"] == t and r.get("precision") == precision]
            ratios = [r["ratio"] for r in rows if r.get("ratio")]
            if ratios:
                print(f"{precision}, {t} thread(s): geometric mean of hexir/ort over {len(ratios)} model(s): "
                      f"{geomean(ratios):.2f}")
            else:
                print(f"{precision}, {t} thread(s): no model ran on both")
            vs = [r["vs_f32"] for r in rows if r.get("vs_f32")]
            if vs:
                print(f"{precision}, {t} thread(s): geometric mean of hexir {precision}/f32 over {len(vs)} model(s): "
                      f"{geomean(vs):.2f}")
    baselines = [r["ort"]["baseline_rss_kib"] for r in all_rows if "baseline_rss_kib" in r.get("ort", {})]
    if baselines:
        print(f"ORT's peak RSS includes Node.js and the ORT binding: {min(baselines) / 1024:.0f} MiB before a "
              "session is created")
    disagree = [r for r in all_rows if r.get("precision") == "f32" and r.get("diff", 0) > AGREE]
    if disagree:
        print(f"WARNING: {len(disagree)} row(s) where Hexir and ONNX Runtime disagree: "
              + ", ".join(sorted({r['model'] for r in disagree})))
    failed = sorted({r["model"] for r in all_rows if "error" in r})
    if failed:
        print(f"FAILED: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
