#!/usr/bin/python3
"""ONNX's own per-operator conformance cases through hexir-compile and hexir-run.

The cases are generated at test time from Debian's python3-onnx (`onnx.backend.test`'s node
cases: each a model, inputs and the outputs ONNX's NumPy code computes; nothing is committed)
and run as generated, at the opset each was made for. Each case ends as one of:
  pass     every output within ONNX's tolerances (rtol 1e-3, atol 1e-7), shape and dtype equal;
  refused  hexir-compile (or hexir-run, for an input it cannot take) fails with a message;
  excluded listed in conformance_excluded.txt: refused by design (training, strings, sequences),
           with the reason; such a case must still be refused cleanly, never crash;
  WRONG    it runs but an output differs; CRASH: a tool dies on a signal or aborts; HANG: a tool
           runs past the time limit.
The run fails on any WRONG, CRASH or HANG, and when fewer cases pass than the recorded floor
(`--floor`, default the number in conformance_floor.txt).
Usage: conformance.py --bin BUILD/tools [--cases DIR] [--target T] [--only PREFIX] [--sample N]
                      [--jobs 2] [--floor N] [--report FILE]
"""
import argparse
import collections
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RTOL, ATOL = 1e-3, 1e-7
TIME_LIMIT = 120  # seconds a tool may take on one case


def generate(out_dir):
    """Writes ONNX's node cases into out_dir/node (python3-onnx 1.12's generator)."""
    code = (
        "import numpy as np, sys\n"
        # The 1.12 case scripts still use NumPy aliases that NumPy 1.24 removed.
        "for a, b in (('float', float), ('int', int), ('bool', bool), ('object', object)):\n"
        "    hasattr(np, a) or setattr(np, a, b)\n"
        "from onnx.backend.test.cmd_tools import main\n"
        f"sys.argv = ['generate', 'generate-data', '-o', {out_dir!r}]\n"
        "main()\n")
    subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.DEVNULL)
    return os.path.join(out_dir, "node")


def load_excluded():
    """{case name or 'op:OpName': reason} from conformance_excluded.txt."""
    excluded = {}
    for line in open(os.path.join(HERE, "conformance_excluded.txt")):
        line = line.split("#", 1)[0].strip()
        if line:
            key, reason = line.split(None, 1)
            excluded[key] = reason.strip()
    return excluded


def to_array(tensor, declared):
    """A TensorProto as NumPy holds it; bfloat16 (which NumPy lacks, and which onnx 1.12's
    numpy_helper misreads from int32_data) as the float32 values it holds, which hexir-run takes
    for a bf16 input and writes for a bf16 output. (onnx 1.12 stores some bfloat16 data as
    UINT16 bits: `declared`, the model's type, says which it is.)"""
    from onnx import TensorProto, numpy_helper
    bf16 = tensor.data_type == TensorProto.BFLOAT16 or (
        declared == TensorProto.BFLOAT16 and tensor.data_type == TensorProto.UINT16)
    if not bf16:
        return numpy_helper.to_array(tensor)
    if tensor.raw_data:
        bits = np.frombuffer(tensor.raw_data, dtype="<u2").astype(np.uint32)
    else:
        bits = np.array(tensor.int32_data, dtype=np.uint32) & 0xFFFF
    return (bits << 16).view(np.float32).reshape(tuple(tensor.dims))


def _bf16_round(x):
    """float32 values rounded to bfloat16 (nearest, ties to even; NaN stays NaN), as float32."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), out).astype(np.float32)


# Cases whose generated outputs contradict ONNX's definition, with the outputs NumPy computes
# from the case's inputs as the definition says. onnx 1.12's Cast to BFLOAT16 case truncates
# (keeps the high 16 bits); the operator rounds to nearest even, as PyTorch, ONNX Runtime and
# onnx 1.14's own test data do.
CORRECTED = {
    "test_cast_FLOAT_to_BFLOAT16": lambda ins: {"output": _bf16_round(ins["input"])},
}


# Cases whose expected values ONNX computed in float64 where float32 arithmetic cannot meet
# atol 1e-7: the absolute tolerance each gets, and why.
ATOL_OVERRIDES = {
    # Y_h holds -2.7e-6, the difference of gate values near 0.4 after three steps: float32's
    # rounding there is 1e-7 (ONNX Runtime's float32 kernels are in the same place).
    "test_gru_seq_length": 1e-6,
}


def read_case(case_dir):
    """(model, [(inputs, outputs)]) of one case: {name: array}, or a reason it has no tensors."""
    import onnx
    from onnx import numpy_helper
    model = onnx.load(os.path.join(case_dir, "model.onnx"))
    inits = {i.name for i in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in inits]
    for kind, values in (("input", inputs), ("output", model.graph.output)):
        for v in values:
            if not v.type.HasField("tensor_type"):
                return model, f"{kind} {v.name!r} is not a tensor ({v.type.WhichOneof('value')})"
    in_names = [i.name for i in inputs]
    types = {v.name: v.type.tensor_type.elem_type for v in list(inputs) + list(model.graph.output)}
    out_names = [o.name for o in model.graph.output]
    sets = []
    for d in sorted(os.listdir(case_dir)):
        if not d.startswith("test_data_set"):
            continue
        ins, outs = {}, {}
        for prefix, names, into in (("input", in_names, ins), ("output", out_names, outs)):
            for k, name in enumerate(names):
                declared = types[name]
                path = os.path.join(case_dir, d, f"{prefix}_{k}.pb")
                if not os.path.exists(path):
                    continue  # an optional input left out
                tensor = onnx.TensorProto()
                tensor.ParseFromString(open(path, "rb").read())
                into[name] = to_array(tensor, declared)
        fix = CORRECTED.get(os.path.basename(os.path.normpath(case_dir)))
        sets.append((ins, fix(ins) if fix else outs))
    return model, sets


def ops_of(model):
    ops = set()

    def walk(graph):
        for node in graph.node:
            ops.add(node.op_type)
            for a in node.attribute:
                if a.g and a.g.node:
                    walk(a.g)
                for g in a.graphs:
                    walk(g)
    walk(model.graph)
    return ops


def compare(got, want, atol=None):
    """Why `got` is not `want` (None if it is, with ONNX's tolerances)."""
    if got.shape != want.shape:
        return f"shape {list(got.shape)}, expected {list(want.shape)}"
    if want.dtype == np.bool_ or np.issubdtype(want.dtype, np.integer):
        if got.dtype != want.dtype and not (want.dtype == np.bool_ and got.dtype in (np.int8, np.uint8)):
            return f"dtype {got.dtype}, expected {want.dtype}"
        if not np.array_equal(got.astype(want.dtype), want):
            return f"{int((got.astype(want.dtype) != want).sum())} of {want.size} values differ"
        return None
    if got.dtype != want.dtype:
        return f"dtype {got.dtype}, expected {want.dtype}"
    if not np.allclose(got, want, rtol=RTOL, atol=ATOL if atol is None else atol, equal_nan=True):
        err = np.abs(got.astype(np.float64) - want.astype(np.float64))
        return f"max |diff| {np.nanmax(err):.3g} (max |expected| {np.nanmax(np.abs(want)):.3g})"
    return None


def tool(cmd):
    """(returncode, output); returncode None for a hang."""
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIME_LIMIT)
        return r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired:
        return None, f"no answer within {TIME_LIMIT} s"


def crashed(rc, text):
    return rc is not None and (rc < 0 or rc >= 128 or "Stack dump" in text or "terminate called" in text
                               or "AddressSanitizer" in text or "runtime error:" in text)


def run_case(name, case_dir, args, tmp):
    """(status, detail): status in pass, refused, WRONG, CRASH, HANG."""
    model, sets = read_case(case_dir)
    if isinstance(sets, str):
        return "refused", "by the runner: " + sets
    hxb = os.path.join(tmp, name + ".hxb")
    cmd = [os.path.join(args.bin, "hexir-compile"), os.path.join(case_dir, "model.onnx"), "-o", hxb,
           "--target", args.target]
    # Inputs Hexir needs at compile time (a Reshape's shape given as an input): as a user would,
    # fix each one the compiler names with --fix-input, from the case's first data set.
    fixed = set()
    while True:
        rc, text = tool(cmd)
        if rc is None:
            return "HANG", "hexir-compile: " + text
        if crashed(rc, text):
            return "CRASH", "hexir-compile: " + text.strip()[-2000:]
        wanted = re.search(r"fix (?:its value|their values) with --fix-input (\S+)=", text)
        if rc == 0 or not wanted or not sets or wanted.group(1) in fixed or wanted.group(1) not in sets[0][0]:
            break
        fixed.add(wanted.group(1))
        path = os.path.join(tmp, f"{name}.fixed{len(fixed)}.npy")
        np.save(path, sets[0][0][wanted.group(1)])
        cmd += ["--fix-input", f"{wanted.group(1)}={path}"]
    # A fixed input holds one data set's value: the other sets must give the same, or be skipped.
    sets = [(ins, outs) for ins, outs in sets
            if all(np.array_equal(ins[f], sets[0][0][f]) for f in fixed)]
    sets = [({k: v for k, v in ins.items() if k not in fixed}, outs) for ins, outs in sets]
    if rc != 0:
        if os.path.exists(hxb):
            return "CRASH", "hexir-compile failed but wrote an executable"
        errors = [line for line in text.splitlines() if "error:" in line]
        return "refused", (errors[0] if errors else text.strip().splitlines()[-1] if text.strip() else "no message")
    for k, (ins, outs) in enumerate(sets):
        cmd = [os.path.join(args.bin, "hexir-run"), hxb]
        for n, (iname, value) in enumerate(ins.items()):
            path = os.path.join(tmp, f"{name}.{k}.in{n}.npy")
            np.save(path, value)
            cmd += ["--input", f"{iname}={path}"]
        out_paths = {}
        for n, oname in enumerate(outs):
            out_paths[oname] = os.path.join(tmp, f"{name}.{k}.out{n}.npy")
            cmd += ["--output", f"{oname}={out_paths[oname]}"]
        rc, text = tool(cmd)
        if rc is None:
            return "HANG", "hexir-run: " + text
        if crashed(rc, text):
            return "CRASH", "hexir-run: " + text.strip()[-2000:]
        if rc != 0:
            errors = [line for line in text.splitlines() if "error" in line.lower()]
            return "refused", "hexir-run: " + (errors[0] if errors else text.strip()[-300:])
        for oname, want in outs.items():
            why = compare(np.load(out_paths[oname]), want, ATOL_OVERRIDES.get(name))
            if why:
                return "WRONG", f"output {oname!r}: {why}"
    return "pass", "" if not fixed else "with --fix-input " + ", ".join(sorted(fixed))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", required=True)
    p.add_argument("--cases", help="a folder of generated node cases (default: generate them now)")
    p.add_argument("--target", default="host")
    p.add_argument("--only", help="run only the cases whose names start with this (after test_)")
    p.add_argument("--sample", type=int, help="run every Nth case only (a sample, e.g. on the CUDA emulator)")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--floor", type=int, help="fail below this many passes (default: conformance_floor.txt)")
    p.add_argument("--report", help="write every case's status and detail here")
    args = p.parse_args()
    floor = args.floor
    if floor is None:
        floor = int(open(os.path.join(HERE, "conformance_floor.txt")).read().split()[0])
        if args.sample or args.only:
            floor = 0  # the recorded floor is for the whole suite
    excluded = load_excluded()
    start = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        node_dir = args.cases or generate(os.path.join(tmp, "cases"))
        names = sorted(d for d in os.listdir(node_dir) if os.path.isdir(os.path.join(node_dir, d)))
        if args.only:
            names = [n for n in names if n[len("test_"):].startswith(args.only)]
        if args.sample:
            names = names[::args.sample]
        work = os.path.join(tmp, "work")
        os.makedirs(work)

        def one(name):
            try:
                return name, run_case(name, os.path.join(node_dir, name), args, work)
            except Exception as e:  # the runner's own failure is a failure, never a pass
                return name, ("CRASH", f"runner: {type(e).__name__}: {e}")
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            results = dict(pool.map(one, names))
        ops = {}
        import onnx
        for name in names:
            try:
                ops[name] = ops_of(onnx.load(os.path.join(node_dir, name, "model.onnx")))
            except Exception:
                ops[name] = set()

    counts = collections.Counter()
    reasons = collections.Counter()
    bad = []
    report = []
    for name in names:
        status, detail = results[name]
        why = excluded.get(name) or next((excluded[f"op:{o}"] for o in sorted(ops[name]) if f"op:{o}" in excluded), None)
        if status == "refused" and why:
            status = "excluded"
            detail = why
        if status == "pass" and why:
            status = "pass"  # an excluded case that passes counts: the list is only for refusals
        counts[status] += 1
        if status == "refused":
            # Group refusals by their message without the node's name and numbers.
            key = re.sub(r"node '[^']*'", "node", detail)
            key = re.sub(r"/[^ :]*model\.onnx", "model.onnx", key)
            reasons[re.sub(r"\d+", "N", key)[:160]] += 1
        if status in ("WRONG", "CRASH", "HANG"):
            bad.append((name, status, detail))
        report.append(f"{status:8} {name}  {detail}")
    if args.report:
        with open(args.report, "w") as f:
            f.write("\n".join(report) + "\n")
    print(f"refusals, by message ({counts['refused']}):")
    for key, n in reasons.most_common(40):
        print(f"  {n:4}  {key}")
    for name, status, detail in bad:
        print(f"{status} {name}: {detail}")
    total = len(names)
    print(f"conformance ({args.target}): {counts['pass']} of {total} cases pass; {counts['refused']} refused, "
          f"{counts['excluded']} excluded by design, {counts['WRONG']} wrong, {counts['CRASH']} crashed, "
          f"{counts['HANG']} hung (floor {floor}) in {time.time() - start:.0f} s")
    ok = not bad and counts["pass"] >= floor
    if counts["pass"] < floor:
        print(f"conformance: {counts['pass']} passes, below the recorded floor of {floor}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
