#!/usr/bin/python3
"""Shape buckets against ONNX Runtime (a benchmark, not a test): one executable compiled with
hexir-compile --dim batch=1,4,16 from a dynamic-batch export of a model, timed at each batch
next to ONNX Runtime (onnxruntime-node) running the same dynamic-batch .onnx file, in one run.

For each model (tests/onnx/models.py at benchmark size, exported with a symbolic batch):
  - the executable's size and the resident memory of a batch-1 run with 3 buckets, next to an
    executable of batch 1 alone (the weights are stored and made resident once);
  - per thread count and batch: Hexir's and ORT's median latency (rounds alternating which goes
    first; the ratio is the median of the rounds' ratios), items per second, and the per-item
    speed-up of each batch over batch 1;
  - that both give the same output at each batch (max |hexir - ort| / max |ort|).

  benchmarks/buckets.py [--models resnet50,bert_like] [--batches 1,4,16] [--threads 1,2] [--runs N]
                        [--rounds R] [--bin build/tools] [--work-dir build/buckets] [--ort-dir build/ort-node]
                        [--smoke]
--smoke (CI): the MLP at batches 1 and 2, 3 runs, 1 thread, one round.
"""
import argparse
import math
import os
import statistics
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compare_ort as co  # noqa: E402 - the shared runner, ORT installer and parsers

MODELS = ["resnet50", "bert_like", "resnet18", "mobilenet_v2", "mlp"]


def export(name, path, full):
    """A dynamic-batch export; returns the batch-1 example input."""
    import torch
    import models  # tests/onnx/models.py
    model, x, opset = models.build(name, full)
    model = models._perturb(model, 0).eval()
    torch.onnx.export(model, (x,), path, opset_version=opset, input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}},
                      do_constant_folding=name not in ("bert_like", "shufflenet_v2_x1_0"))
    return x.numpy()


def batch_of(x, n, rng):
    """`n` rows like `x`'s one: images with noise, token ids drawn from the ids `x` holds."""
    if np.issubdtype(x.dtype, np.integer):
        return rng.choice(x.reshape(-1), size=(n, *x.shape[1:])).astype(x.dtype)
    return (np.repeat(x, n, axis=0) + 0.1 * rng.standard_normal((n, *x.shape[1:]))).astype(x.dtype)


def bench_model(name, args, ort_pkg):
    tools, work = args.bin, args.work_dir
    base = os.path.join(work, name)
    rng = np.random.default_rng(0)
    x1 = export(name, base + ".onnx", not args.smoke)
    dims = ",".join(map(str, args.batches))
    _, compile_s = co.run([os.path.join(tools, "hexir-compile"), base + ".onnx", "-o", base + ".hxb", "--dim",
                           f"batch={dims}"], "compile --dim", args.timeout)
    shape1 = "x".join(map(str, x1.shape))
    co.run([os.path.join(tools, "hexir-compile"), base + ".onnx", "-o", base + ".one.hxb", "--input-shape",
            f"input={shape1}"], "compile batch 1", args.timeout)
    np.save(base + ".b1.npy", x1)

    def hexir(hxb, function, inputs, runs, threads):
        out, _ = co.run([os.path.join(tools, "hexir-run"), hxb, "--function", function, "--input", f"input={inputs}",
                         "--benchmark", str(runs), "--threads", str(threads)], "hexir-run", args.timeout, own_rss=True)
        return co.parse_hexir_benchmark(out)

    files = (os.path.getsize(base + ".hxb"), os.path.getsize(base + ".one.hxb"))
    # A batch-1 run of each: the module (weights once, every bucket's kernels) and a batch-1 session.
    rss = (hexir(base + ".hxb", "main_batch1", base + ".b1.npy", args.runs, 1)["peak_rss_kib"],
           hexir(base + ".one.hxb", "main", base + ".b1.npy", args.runs, 1)["peak_rss_kib"])
    print(f"{name}: {len(args.batches)} buckets ({dims}) compiled in {compile_s:.1f} s; file {files[0] / 2**20:.2f} MiB "
          f"vs {files[1] / 2**20:.2f} MiB for batch 1 alone ({files[0] / files[1]:.3f}x); peak RSS of a batch-1 run "
          f"{rss[0] / 1024:.1f} MiB vs {rss[1] / 1024:.1f} MiB ({rss[0] / rss[1]:.3f}x)", flush=True)
    rows = []
    for n in args.batches:
        xn = x1 if n == 1 else batch_of(x1, n, rng)
        np.save(f"{base}.b{n}.npy", xn)
        co.run([os.path.join(tools, "hexir-run"), base + ".hxb", "--input", f"input={base}.b{n}.npy", "--output",
                f"output={base}.b{n}.hexir.npy"], "hexir-run", args.timeout)
        for t in args.threads:
            hx, ort = [], []
            for r in range(args.rounds):
                for side in (("hexir", "ort") if r % 2 == 0 else ("ort", "hexir")):
                    if side == "hexir":
                        hx.append(hexir(base + ".hxb", f"main_batch{n}", f"{base}.b{n}.npy", args.runs, t)["median_ms"])
                    elif ort_pkg:
                        out, _ = co.run(["node", os.path.join(HERE, "ort_bench.js"), "--ort", ort_pkg, "--model",
                                         base + ".onnx", "--input", f"input={base}.b{n}.npy", "--output",
                                         f"output={base}.b{n}.ort.npy", "--threads", str(t), "--runs", str(args.runs),
                                         "--warmup", "2"], "onnxruntime", args.timeout, own_rss=True)
                        ort.append(co.json.loads(out.strip().splitlines()[-1])["median_ms"])
            row = {"model": name, "threads": t, "batch": n, "hexir_ms": statistics.median(hx)}
            if ort:
                row["ort_ms"] = statistics.median(ort)
                row["ratio"] = statistics.median(h / o for h, o in zip(hx, ort))
                row["rounds"] = (min(h / o for h, o in zip(hx, ort)), max(h / o for h, o in zip(hx, ort)))
                row["diff"] = co.rel_diff(np.load(f"{base}.b{n}.hexir.npy"), np.load(f"{base}.b{n}.ort.npy"))
            rows.append(row)
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", help="comma-separated subset of: " + ",".join(MODELS))
    p.add_argument("--batches", help="bucket sizes (default 1,4,16; smoke 1,2); the first must be 1")
    p.add_argument("--threads", help="comma-separated thread counts (default 1,2; smoke 1)")
    p.add_argument("--runs", type=int, help="timed runs per measurement (default 10; smoke 3)")
    p.add_argument("--rounds", type=int, help="rounds of both runtimes, alternating which goes first (default 3)")
    p.add_argument("--bin", default=os.path.join(co.ROOT, "build", "tools"))
    p.add_argument("--work-dir")
    p.add_argument("--ort-dir", default=os.path.join(co.ROOT, "build", "ort-node"))
    p.add_argument("--timeout", type=int, default=3600)
    p.add_argument("--smoke", action="store_true")
    args = p.parse_args()
    models = args.models.split(",") if args.models else (["mlp"] if args.smoke else ["resnet50", "bert_like"])
    if any(m not in MODELS for m in models):
        p.error(f"choose models from {', '.join(MODELS)}")
    args.batches = [int(b) for b in (args.batches or ("1,2" if args.smoke else "1,4,16")).split(",")]
    args.threads = [int(t) for t in (args.threads or ("1" if args.smoke else "1,2")).split(",")]
    args.runs = args.runs or (3 if args.smoke else 10)
    args.rounds = args.rounds or (1 if args.smoke else 3)
    if args.batches[0] != 1 or sorted(set(args.batches)) != args.batches:
        p.error("--batches must start with 1 and increase")
    args.work_dir = args.work_dir or os.path.join(co.ROOT, "build", "buckets_smoke" if args.smoke else "buckets")
    os.makedirs(args.work_dir, exist_ok=True)
    ort_pkg = None
    try:
        ort_pkg = co.ensure_ort(args.ort_dir)
    except co.StageError as e:
        print(f"buckets: {e} (Hexir alone)", file=sys.stderr)
    print(f"Shape buckets: one executable of batches {args.batches} against ONNX Runtime {co.ORT_VERSION} on the "
          f"same dynamic-batch model; {args.rounds} round(s) of {args.runs} runs; medians", flush=True)
    rows, failed = [], False
    for name in models:
        try:
            rows += bench_model(name, args, ort_pkg)
        except co.StageError as e:
            print(f"{name}: FAILED {e}", flush=True)
            failed = True
    print(f"{'model':<12} {'thr':>3} {'batch':>5} {'hexir ms':>9} {'items/s':>8} {'ort ms':>9} {'items/s':>8} "
          f"{'hx/ort':>6} {'rounds':>9} {'per-item vs b1':>14} check")
    for row in rows:
        b1 = next(r for r in rows if r["model"] == row["model"] and r["threads"] == row["threads"] and r["batch"] == 1)
        speedup = (row["batch"] / row["hexir_ms"]) / (1 / b1["hexir_ms"])
        ort_ms = row.get("ort_ms")
        d = row.get("diff")
        check = "-" if d is None else (f"ok {d:.0e}" if d <= co.AGREE else f"WARNING differs {d:.1e}")
        failed |= d is not None and (d > co.AGREE or math.isnan(d))
        spread = "%.2f-%.2f" % row["rounds"] if "rounds" in row else "-"
        print(f"{row['model']:<12} {row['threads']:>3} {row['batch']:>5} {row['hexir_ms']:>9.3f} "
              f"{1000 * row['batch'] / row['hexir_ms']:>8.1f} {co.num(ort_ms, '.3f'):>9} "
              f"{co.num(ort_ms and 1000 * row['batch'] / ort_ms, '.1f'):>8} {co.num(row.get('ratio'), '.2f'):>6} "
              f"{spread:>9} "
              f"{speedup:>13.2f}x {check}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
