#!/usr/bin/python3
"""Greedy decoding with a static KV cache against ONNX Runtime (a benchmark, not a test).

The decoder is tests/onnx/models.py's GptKvCache (at benchmark size: vocab 8192, width 768,
12 heads, 4 layers, a 128-position cache), exported with a symbolic sequence and compiled once
with --dim seq=1,PROMPT --donate cache: the prompt bucket is the prefill, the 1-token bucket the
decode step, the weights stored once. Both runtimes decode TOKENS tokens after a PROMPT-token
prompt from a host loop (one run a token): Hexir through its Python API with one buffer as the
cache input and output of every step (updated in place), ONNX Runtime (onnxruntime-node,
benchmarks/decode_ort.js) feeding each step the cache the last one returned. Rounds alternate
which runs first; per thread count it prints each one's decode time per token and tokens/s,
hx/ort (the median of the rounds' ratios, their range), the prefill times, and whether the
tokens equal PyTorch's greedy decode of the same weights. A second table times the whole
generation (the prompt, then TOKENS tokens) three ways: Hexir's in-VM loop (examples/generate's
model: the prefill and a Loop of decode steps in one graph, one Session::Run for everything, the
argmax fed back inside the VM), Hexir's host loop and ONNX Runtime's host loop (both as above).

  benchmarks/decode.py [--prompt 64] [--tokens 64] [--threads 1,2] [--rounds 3] [--bin build/tools]
                       [--python build/python] [--work-dir build/decode] [--ort-dir build/ort-node] [--smoke]
--smoke (CI): the tests' small decoder, an 8-token prompt, 8 tokens, 1 thread, one round; fails
unless both runtimes' tokens equal PyTorch's.
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "onnx"))
sys.path.insert(0, os.path.join(HERE, "..", "examples", "generate"))
import compare_ort as co  # noqa: E402 - the shared runner and ORT installer
import make_generate  # noqa: E402 - the decoder's step, its generation graph and PyTorch's tokens

def hexir_decode(hexir, hxb, threads, prompt, tokens, cache_shape):
    """Greedy tokens, prefill ms and per-step decode ms from a host loop over one session."""
    session = hexir.load(hxb, threads=threads).session()
    cache = np.zeros(cache_shape, np.float32)
    out_cache = {"cache_out": cache}

    def run(ids, pos):
        t0 = time.perf_counter()
        out = session.run({"tokens": np.asarray(ids, np.int64), "pos": np.asarray([pos], np.int64), "cache": cache},
                          outputs=out_cache)
        return int(out["logits"][-1].argmax()), (time.perf_counter() - t0) * 1000

    first, prefill_ms = run(prompt, 0)
    got, decode_ms = [first], []
    while len(got) < tokens:
        token, ms = run([[got[-1]]], prompt.shape[1] + len(got) - 1)
        got.append(token)
        decode_ms.append(ms)
    return got, prefill_ms, decode_ms


def hexir_generate(hexir, hxb, threads, prompt, cache_shape):
    """Greedy tokens and the ms of the one run that generates them all (examples/generate)."""
    session = hexir.load(hxb, threads=threads).session()
    cache = np.zeros(cache_shape, np.float32)
    t0 = time.perf_counter()
    out = session.run({"prompt": prompt, "cache": cache})
    return out["tokens"].tolist(), (time.perf_counter() - t0) * 1000


def ort_decode(args, ort_pkg, onnx_path, threads, prompt, cache_shape):
    out, _ = co.run(["node", os.path.join(HERE, "decode_ort.js"), "--ort", ort_pkg, "--model", onnx_path,
                     "--prompt", ",".join(str(int(t)) for t in prompt.reshape(-1)), "--tokens", str(args.tokens),
                     "--cache-shape", ",".join(map(str, cache_shape)), "--threads", str(threads)],
                    "ort decode", args.timeout)
    r = json.loads(out.strip().splitlines()[-1])
    return r["tokens"], r["prefill_ms"], r["decode_ms"]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--prompt", type=int, help="prompt tokens (default 64; smoke 8)")
    p.add_argument("--tokens", type=int, help="tokens to generate (default 64; smoke 8)")
    p.add_argument("--threads", help="comma-separated thread counts (default 1,2; smoke 1)")
    p.add_argument("--rounds", type=int, help="rounds (default 3; smoke 1)")
    p.add_argument("--bin", default="build/tools")
    p.add_argument("--python", help="the hexir Python package's folder (default: BIN/../python)")
    p.add_argument("--work-dir", help="exports and executables (default build/decode, smoke build/decode_smoke)")
    p.add_argument("--ort-dir", default="build/ort-node")
    p.add_argument("--timeout", type=int, default=1800)
    p.add_argument("--smoke", action="store_true")
    args = p.parse_args()
    args.prompt = args.prompt or (8 if args.smoke else 64)
    args.tokens = args.tokens or (8 if args.smoke else 64)
    threads = [int(t) for t in (args.threads or ("1" if args.smoke else "1,2")).split(",")]
    rounds = args.rounds or (1 if args.smoke else 3)
    work = args.work_dir or ("build/decode_smoke" if args.smoke else "build/decode")
    os.makedirs(work, exist_ok=True)
    sys.path.insert(0, args.python or os.path.join(os.path.dirname(os.path.abspath(args.bin)), "python"))
    import hexir

    # The step (exported with a symbolic sequence), the whole generation around it as one graph
    # (examples/generate), the prompt and PyTorch's greedy tokens.
    made = make_generate.make(work, args.prompt, args.tokens, full=not args.smoke)
    onnx_path, gen_path, hxb = made["step"], made["model"], os.path.join(work, "decoder.hxb")
    prompt, want, cache_shape = np.load(made["prompt"]), np.load(made["tokens"]).tolist(), made["cache_shape"]
    if args.prompt + args.tokens > cache_shape[3]:
        sys.exit(f"decode: a {args.prompt}-token prompt and {args.tokens} tokens overflow the {cache_shape[3]}-position cache")
    _, compile_s = co.run([os.path.join(args.bin, "hexir-compile"), onnx_path, "-o", hxb, "--dim",
                           f"seq=1,{args.prompt}", "--donate", "cache"], "compile", args.timeout)
    gen_hxb = os.path.join(work, "generate.hxb")
    _, gen_compile_s = co.run([os.path.join(args.bin, "hexir-compile"), gen_path, "-o", gen_hxb], "compile generate",
                              args.timeout)
    ort_pkg = co.ensure_ort(args.ort_dir)
    print(f"decoder: cache {'x'.join(map(str, cache_shape))} f32 ({np.prod(cache_shape) * 4 / 2**20:.1f} MiB), "
          f"{args.prompt}-token prompt, {args.tokens} tokens, compiled in {compile_s:.1f} s, "
          f"executable {os.path.getsize(hxb) / 2**20:.1f} MiB; host loop, one run a token")
    failed = False
    totals = {}  # threads -> {"vm", "host", "ort": ms per round, "equal": the in-VM tokens equal PyTorch's}
    print("| threads | hexir ms/token | ort ms/token | hx/ort (range) | hexir tokens/s | ort tokens/s | "
          "prefill ms hexir / ort | tokens = PyTorch (hexir, ort) |")
    print("|---|---|---|---|---|---|---|---|")
    for t in threads:
        ratios, hx_ms, ort_ms, hx_pre, ort_pre, same = [], [], [], [], [], [True, True]
        totals[t] = {"vm": [], "host": [], "ort": [], "equal": True}
        for r in range(rounds):
            order = ("hexir", "ort", "vm") if r % 2 == 0 else ("vm", "ort", "hexir")
            for who in order:
                if who == "hexir":
                    got, pre, steps = hexir_decode(hexir, hxb, t, prompt, args.tokens, cache_shape)
                    hx_ms.append(statistics.fmean(steps))
                    hx_pre.append(pre)
                    totals[t]["host"].append(pre + sum(steps))
                    same[0] &= got == want
                elif who == "ort":
                    got, pre, steps = ort_decode(args, ort_pkg, onnx_path, t, prompt, cache_shape)
                    ort_ms.append(statistics.fmean(steps))
                    ort_pre.append(pre)
                    totals[t]["ort"].append(pre + sum(steps))
                    same[1] &= got == want
                else:
                    got, ms = hexir_generate(hexir, gen_hxb, t, prompt, cache_shape)
                    totals[t]["vm"].append(ms)
                    totals[t]["equal"] &= got == want
            ratios.append(hx_ms[-1] / ort_ms[-1])
        h, o = statistics.median(hx_ms), statistics.median(ort_ms)
        print(f"| {t} | {h:.2f} | {o:.2f} | {statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}) | "
              f"{1000 / h:.0f} | {1000 / o:.0f} | {statistics.median(hx_pre):.1f} / {statistics.median(ort_pre):.1f} | "
              f"{'yes' if same[0] else 'NO'}, {'yes' if same[1] else 'NO'} |", flush=True)
        failed |= not all(same)
    print(f"\nwhole generation ({args.prompt}-token prompt, {args.tokens} tokens): the in-VM loop is one run of "
          f"generate.hxb (compiled in {gen_compile_s:.1f} s, {os.path.getsize(gen_hxb) / 2**20:.1f} MiB)")
    print("| threads | in-VM ms | host loop ms | ORT ms | in-VM / host loop (range) | in-VM / ORT (range) | "
          "in-VM tokens/s | tokens = PyTorch |")
    print("|---|---|---|---|---|---|---|---|")
    for t, row in totals.items():
        vm, host, ort, equal = row["vm"], row["host"], row["ort"], row["equal"]
        by_host = [a / b for a, b in zip(vm, host)]
        by_ort = [a / b for a, b in zip(vm, ort)]
        m = statistics.median(vm)
        print(f"| {t} | {m:.1f} | {statistics.median(host):.1f} | {statistics.median(ort):.1f} | "
              f"{statistics.median(by_host):.2f} ({min(by_host):.2f}-{max(by_host):.2f}) | "
              f"{statistics.median(by_ort):.2f} ({min(by_ort):.2f}-{max(by_ort):.2f}) | "
              f"{1000 * args.tokens / m:.0f} | {'yes' if equal else 'NO'} |", flush=True)
        failed |= not equal
    if failed:
        print("decode: tokens differ from PyTorch's greedy decode" + ("" if args.smoke else
              " (random weights can leave two logits within rounding of each other)"))
    return 1 if failed and args.smoke else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except co.StageError as e:
        print(f"decode: {e}", file=sys.stderr)
        sys.exit(1)
