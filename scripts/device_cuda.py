#!/usr/bin/env python3
"""The CUDA half of scripts/device-check.sh --run, on the GPU machine: every executable of
DIR/cuda against its reference on the CUDA device, compute-sanitizer over three of those runs,
then the GPU benchmarks against PyTorch measured in the same run. Prints one `check|result|details` row per line for the
summary table; exit status 1 if a check failed. Needs NumPy; PyTorch for the baselines.

Usage: device_cuda.py DIR   (DIR/bin/hexir-run, DIR/cuda, DIR/bench as device_prepare.py made)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np


def hexir_run(dir_, args, timeout=300):
    return subprocess.run([os.path.join(dir_, "bin", "hexir-run"), *args, "--device", "cuda"], capture_output=True,
                          text=True, timeout=timeout)


def benchmark(dir_, hxb, runs, graphs="auto"):
    """(wall median ms, device median ms or None, load ms) of hexir-run --benchmark on CUDA."""
    r = hexir_run(dir_, [hxb, "--benchmark", str(runs), "--graphs", graphs], timeout=600)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "hexir-run failed")
    wall = float(re.search(r"latency: median ([0-9.]+) ms", r.stdout).group(1))
    device = re.search(r"device time: median ([0-9.]+) ms", r.stdout)
    load = float(re.search(r"load: ([0-9.]+) ms", r.stdout).group(1))
    return wall, float(device.group(1)) if device else None, load


def torch_ms(fn, runs=20):
    import torch
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(runs):
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return float(np.median(times))


def correctness(dir_, rows):
    """Checks every executable; False when there is no CUDA driver or device (a skip row)."""
    cuda = os.path.join(dir_, "cuda")
    with open(os.path.join(cuda, "manifest.json")) as f:
        manifest = json.load(f)
    with tempfile.TemporaryDirectory() as tmp:
        for case in manifest:
            args = [os.path.join(cuda, case["hxb"])]
            for name, path in case["inputs"].items():
                args += ["--input", f"{name}={os.path.join(cuda, path)}"]
            for name in case["outputs"]:
                args += ["--output", f"{name}={os.path.join(tmp, name + '.npy')}"]
            r = hexir_run(dir_, args)
            if r.returncode != 0:
                message = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "failed"
                if "no CUDA driver" in message or "no CUDA device" in message:
                    rows.append(f"executables on CUDA|skipped|{message}")
                    return False
                rows.append(f"{case['name']} on CUDA|FAILED|{message}")
                continue
            worst = 0.0
            ok = True
            for name, path in case["outputs"].items():
                got = np.load(os.path.join(tmp, name + ".npy")).astype(np.float64)
                want = np.load(os.path.join(cuda, path)).astype(np.float64)
                scale = max(float(np.abs(want).max()) if want.size else 1.0, 1.0)
                err = np.abs(got - want) if got.shape == want.shape else np.array([np.inf])
                worst = max(worst, float(err.max()) / scale if err.size else 0.0)
                ok = ok and got.shape == want.shape and bool(np.all(err <= case["rtol"] * (np.abs(want) + scale)))
            rows.append(f"{case['name']} on CUDA|{'passed' if ok else 'FAILED'}|max err / max |ref| {worst:.1e}")
    return True


def torch_graph_ms(model, x, runs=20):
    """PyTorch's time for model(x) replayed as a CUDA graph (what a GPU user compares against)."""
    import torch
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            model(x)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        model(x)
    return torch_ms(graph.replay, runs)


def benchmarks(dir_, rows):
    bench = os.path.join(dir_, "bench")
    try:
        import torch
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        have_torch = torch.cuda.is_available()
    except ImportError:
        have_torch = False
    # Memory-bound: 256 MiB in, 256 MiB out, against a device-to-device copy of 256 MiB.
    try:
        wall, device, _ = benchmark(dir_, os.path.join(bench, "elementwise.hxb"), 20)
        ms = device or wall
        gbs = 2 * 256 * 2**20 / (ms * 1e-3) / 1e9
        detail = f"{ms:.3f} ms, {gbs:.0f} GB/s (read + write)"
        if have_torch:
            x = torch.empty(64 * 2**20, device="cuda")
            y = torch.empty_like(x)
            copy_gbs = 2 * 256 * 2**20 / (torch_ms(lambda: y.copy_(x)) * 1e-3) / 1e9
            detail += f"; copy {copy_gbs:.0f} GB/s: {100 * gbs / copy_gbs:.0f}% of it (target 70%)"
        rows.append(f"elementwise chain 256 MiB|measured|{detail}")
    except Exception as e:  # noqa: BLE001 (one row per benchmark, whatever fails)
        rows.append(f"elementwise chain 256 MiB|FAILED|{e}")
    # Compute-bound: f32 matmul 4096^3 against cuBLAS with TF32 off, and with --allow-tf32
    # (tensor cores) against cuBLAS with TF32 on.
    for exe, label, tf32 in [("matmul4096", "f32", False), ("matmul4096_tf32", "--allow-tf32", True)]:
        try:
            wall, device, _ = benchmark(dir_, os.path.join(bench, exe + ".hxb"), 5)
            ms = device or wall
            tflops = 2 * 4096**3 / (ms * 1e-3) / 1e12
            detail = f"{ms:.2f} ms, {tflops:.2f} TFLOP/s"
            if have_torch:
                a = torch.randn(4096, 4096, device="cuda")
                b = torch.randn(4096, 4096, device="cuda")
                torch.backends.cuda.matmul.allow_tf32 = tf32
                cublas = 2 * 4096**3 / (torch_ms(lambda: torch.matmul(a, b)) * 1e-3) / 1e12
                torch.backends.cuda.matmul.allow_tf32 = False
                detail += (f"; cuBLAS{' TF32' if tf32 else ''} {cublas:.2f} TFLOP/s: {100 * tflops / cublas:.0f}% "
                           f"of it (target 50%)")
            rows.append(f"matmul 4096^3 {label}|measured|{detail}")
        except Exception as e:  # noqa: BLE001
            rows.append(f"matmul 4096^3 {label}|FAILED|{e}")
    # Launch overhead: 100 dependent 32-element dispatches.
    try:
        wall, device, load = benchmark(dir_, os.path.join(bench, "launch100.hxb"), 200, "off")
        graph_wall, _, _ = benchmark(dir_, os.path.join(bench, "launch100.hxb"), 200, "on")
        rows.append(f"launch overhead|measured|{1000 * wall / 100:.2f} us per dispatch without graphs, "
                    f"{1000 * graph_wall / 100:.2f} us with a CUDA graph (wall, 100 dispatches; target < 1 us "
                    f"with graphs); module load {load:.1f} ms")
    except Exception as e:  # noqa: BLE001
        rows.append(f"launch overhead|FAILED|{e}")
    # Models, batch 1, against PyTorch eager and PyTorch's CUDA graph on the same GPU.
    for name, label in [("mobilenet_v2", "mobilenet_v2 (test size)"), ("bert_like", "bert_like (test size)"),
                        ("full_mobilenet_v2", "mobilenet_v2 224x224"), ("full_resnet18", "resnet18 224x224")]:
        try:
            hxb = os.path.join(dir_, "cuda", (name if name.startswith("full_") else "onnx_" + name) + ".hxb")
            wall, device, load = benchmark(dir_, hxb, 50, "on")
            plain_wall, _, _ = benchmark(dir_, hxb, 50, "off")
            detail = (f"{wall:.3f} ms wall with a CUDA graph, {plain_wall:.3f} ms without"
                      + (f", {device:.3f} ms device" if device else "") + f", load {load:.1f} ms")
            if have_torch:
                model = torch.jit.load(os.path.join(bench, name + ".pt")).cuda().eval()
                x = torch.from_numpy(np.load(os.path.join(bench, name + ".input.npy"))).cuda()
                with torch.no_grad():
                    eager = torch_ms(lambda: model(x), 50)
                    graph = torch_graph_ms(model, x, 50)
                detail += (f"; PyTorch eager {eager:.3f} ms, CUDA graph {graph:.3f} ms: "
                           f"{wall / graph:.2f}x the graph (target <= 1.0x)")
            rows.append(f"{label} batch 1|measured|{detail}")
        except Exception as e:  # noqa: BLE001
            rows.append(f"{label} batch 1|FAILED|{e}")
    if not have_torch:
        rows.append("PyTorch baselines|not measured|no PyTorch with CUDA here")


def sanitizer_path():
    for path in [shutil.which("compute-sanitizer"), "/usr/local/cuda/bin/compute-sanitizer"]:
        if path and os.access(path, os.X_OK):
            return path
    return None


def sanitizer_errors(text):
    """(errors compute-sanitizer reported or None, its first error line) from its output:
    memcheck and synccheck end with "ERROR SUMMARY: 0 errors", racecheck with "RACECHECK
    SUMMARY: 0 hazards displayed (0 errors, 0 warnings)" (warnings are not errors)."""
    summary = (re.search(r"RACECHECK SUMMARY: [0-9]+ hazards? displayed \(([0-9]+) errors?", text)
               or re.search(r"ERROR SUMMARY: ([0-9]+) errors?", text))
    first = next((line.strip() for line in text.splitlines()
                  if re.search(r"Invalid|Error:|Race reported|Barrier error", line)), "")
    return (int(summary.group(1)) if summary else None), first


def sanitize(dir_, rows):
    """compute-sanitizer over runs of CUDA executables: memcheck on a full-size model (every
    global and shared access in bounds and aligned), racecheck and synccheck on the test-size
    mobilenet_v2 (its staged convolutions share tiles through shared memory, double-buffered
    with cp.async: a missing barrier or wait is a hazard these report)."""
    tool = sanitizer_path()
    if not tool:
        rows.append("compute-sanitizer|skipped|not found (PATH, /usr/local/cuda/bin)")
        return
    cuda = os.path.join(dir_, "cuda")
    with open(os.path.join(cuda, "manifest.json")) as f:
        cases = {c["hxb"]: c for c in json.load(f)}
    for check, hxb, budget in [("memcheck", "full_mobilenet_v2.hxb", 240), ("racecheck", "onnx_mobilenet_v2.hxb", 120),
                               ("synccheck", "onnx_mobilenet_v2.hxb", 120)]:
        case = cases.get(hxb)
        if not case:
            rows.append(f"{check} {hxb}|FAILED|not in the manifest")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            args = [tool, "--tool", check, "--error-exitcode", "3", os.path.join(dir_, "bin", "hexir-run"),
                    os.path.join(cuda, hxb), "--device", "cuda", "--graphs", "off"]
            for name, path in case["inputs"].items():
                args += ["--input", f"{name}={os.path.join(cuda, path)}"]
            for name in case["outputs"]:
                args += ["--output", f"{name}={os.path.join(tmp, name + '.npy')}"]
            try:
                r = subprocess.run(args, capture_output=True, text=True, timeout=budget)
            except subprocess.TimeoutExpired:
                rows.append(f"{check} {case['name']}|not measured|over {budget} s")
                continue
            count, first = sanitizer_errors(r.stdout + r.stderr)
            ok = r.returncode == 0 and count == 0
            rows.append(f"{check} {case['name']}|{'passed' if ok else 'FAILED'}|"
                        f"{count if count is not None else '?'} errors (exit {r.returncode}) {first[:200]}")


def main():
    dir_ = sys.argv[1]
    rows = []
    if correctness(dir_, rows):
        sanitize(dir_, rows)
        benchmarks(dir_, rows)
    for row in rows:
        print(row)
    return 1 if any("|FAILED|" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
