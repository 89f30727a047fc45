"""Hexir from Python: compile a static graph ahead of time, load it, run it on NumPy arrays.

    import hexir, numpy as np
    exe = hexir.compile("model.onnx", input_shapes={"input": (1, 3, 224, 224)})
    module = hexir.load(exe)
    session = module.session()
    out = session.run({"input": x})          # {"output": array}

See docs/python.md. Errors raise hexir.Error subclasses carrying the runtime's status code and
message; a model the compiler refuses raises hexir.CompileError with its diagnostics.
"""
import collections
import json
import os
import queue
import tempfile

import numpy as np

from . import _hexir

__all__ = ["compile", "load", "Module", "Session", "SessionPool", "TensorSpec", "Error", "CompileError", "InvalidArgumentError",
           "NotFoundError", "DataLossError", "FailedPreconditionError", "ResourceExhaustedError",
           "UnimplementedError", "InternalError", "InferenceSession", "SessionOptions", "RunOptions", "NodeArg",
           "get_available_providers", "__version__"]


class Error(Exception):
    """A Hexir error: `code` is the runtime's status code name ("INVALID_ARGUMENT", ...)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


class CompileError(Error):
    """The compiler refused the model; the message holds its diagnostics."""


class InvalidArgumentError(Error):
    pass


class NotFoundError(Error):
    pass


class DataLossError(Error):
    pass


class FailedPreconditionError(Error):
    pass


class ResourceExhaustedError(Error):
    pass


class UnimplementedError(Error):
    pass


class InternalError(Error):
    pass


_BY_CODE = {"INVALID_ARGUMENT": InvalidArgumentError, "NOT_FOUND": NotFoundError, "DATA_LOSS": DataLossError,
            "FAILED_PRECONDITION": FailedPreconditionError, "RESOURCE_EXHAUSTED": ResourceExhaustedError,
            "UNIMPLEMENTED": UnimplementedError, "INTERNAL": InternalError}


def _call(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except _hexir._StatusError as e:
        code, message = e.args[0] if len(e.args) == 1 else e.args
        raise _BY_CODE.get(code, Error)(code, message) from None


TensorSpec = collections.namedtuple("TensorSpec", ["name", "shape", "dtype"])


def compile(model, *, output=None, input_shapes=None, entry=None, target="host", target_cpu="host",
            machine=None, memory_budgets=None, placements=None, fusion=True, plan_json=None, plan_svg=None,
            dims=None, donate=None, allow_tf32=False, int8_kernels=None, precision="f32", fix_inputs=None):
    """Compiles a graph into executable bytes (also written to `output` when given).

    `model`: a path to an .onnx model or an .mlir graph, ONNX model bytes, an onnx.ModelProto,
    or MLIR text. The keywords are hexir-compile's options: `input_shapes` {name: shape} for
    symbolic ONNX dimensions, `target`, `target_cpu`, `machine` (a preset or a machine file),
    `memory_budgets` {space: bytes}, `placements` {"intermediates" or "constants": space} (as
    --place), `fusion`, and the plan outputs `plan_json` and `plan_svg`
    (file paths). `entry`: the one function of an MLIR graph to compile (default: every
    function, each a function of the executable sharing its constants). `dims` {name: sizes}
    compiles an ONNX model as shape buckets (--dim): a session of "main" then takes any size a
    bucket holds. `donate` [names]: inputs the caller donates (--donate): an output computed
    from one, or written after its last read, is tied to it and may be bound onto its buffer
    (updated in place). `allow_tf32`: CUDA tensor cores in TF32 (--allow-tf32). `int8_kernels`:
    a QDQ model's Conv, MatMul and Gemm on its int8 values (True: --int8-kernels) or in f32 (False:
    --no-int8-kernels); None: where the target multiplies int8 in groups (VNNI, or pairs: x86). `precision`: "f32"
    or "bf16" (--precision: matmuls and convolutions with constant weights on bf16 operands,
    accumulating in f32). `fix_inputs` {name: array}: ONNX inputs fixed to a value at compile
    time (--fix-input; a shape, axes, pads or k the model takes as an input), which the executable
    no longer takes. Raises CompileError with the diagnostics.
    """
    with tempfile.TemporaryDirectory(prefix="hexir-") as tmp:
        if hasattr(model, "SerializeToString"):
            model = model.SerializeToString()
        if isinstance(model, (bytes, bytearray, memoryview)):
            path = os.path.join(tmp, "model.onnx")
            with open(path, "wb") as f:
                f.write(bytes(model))
        elif isinstance(model, str) and not os.path.exists(model) and "func.func" in model:
            path = os.path.join(tmp, "graph.mlir")
            with open(path, "w") as f:
                f.write(model)
        else:
            path = os.fspath(model)
            if not os.path.exists(path):
                raise NotFoundError("NOT_FOUND", f"no such model '{path}'")
        shapes = {name: [int(d) for d in shape] for name, shape in (input_shapes or {}).items()}
        fixed = []
        for name, value in (fix_inputs or {}).items():
            a = np.asarray(value)
            is_float = a.dtype.kind == "f"
            flat = a.ravel()
            fixed.append((str(name), is_float, [] if is_float else [int(v) for v in flat],
                          [float(v) for v in flat] if is_float else [], [int(d) for d in a.shape]))
        ok, executable, diagnostics = _call(
            _hexir.compile, path, os.fspath(output) if output else "", shapes, entry or "", target, target_cpu,
            machine or "", {k: int(v) for k, v in (memory_budgets or {}).items()},
            {str(k): str(v) for k, v in (placements or {}).items()}, bool(fusion),
            os.fspath(plan_json) if plan_json else "", os.fspath(plan_svg) if plan_svg else "",
            [f"{name}={','.join(str(int(v)) for v in values)}" for name, values in (dims or {}).items()],
            # (One name may be given as a string: "cache" is one input, not five.)
            [str(name) for name in ([donate] if isinstance(donate, (str, os.PathLike)) else (donate or []))],
            bool(allow_tf32),
            -1 if int8_kernels is None else int(bool(int8_kernels)), str(precision), fixed)
        if not ok:
            raise CompileError("COMPILE_ERROR", diagnostics.strip() or "compilation failed")
        return executable


def load(executable, *, device="host", threads=0, verify_weights=False):
    """Loads an executable (bytes from compile(), or a path) on `device` ("host", "cuda") with
    `threads` worker threads per dispatch (0: every core). `verify_weights` also checksums the
    constant pool (reads every weight once; a flipped bit raises DataLossError), as hexir-run
    --verify-weights; the executable's code and metadata are always checked."""
    if isinstance(executable, (bytes, bytearray, memoryview)):
        # Loaded as a private copy, so the temporary file can go at once.
        with tempfile.TemporaryDirectory(prefix="hexir-") as tmp:
            path = os.path.join(tmp, "model.hxb")
            with open(path, "wb") as f:
                f.write(bytes(executable))
            return Module(_call(_hexir.load, path, device, int(threads), True, bool(verify_weights)))
    return Module(_call(_hexir.load, os.fspath(executable), device, int(threads), False, bool(verify_weights)))


class Module:
    """A loaded executable: immutable, shared by its sessions (each keeps it alive)."""

    def __init__(self, impl):
        self._impl = impl

    @property
    def functions(self):
        return list(self._impl.function_names())

    def _specs(self, which, function):
        return [TensorSpec(t["name"], tuple(t["shape"]), np.dtype(t["dtype"])) for t in which(function)]

    @property
    def inputs(self):
        """Inputs of "main": TensorSpec(name, shape, dtype) in signature order."""
        return self.inputs_of("main")

    @property
    def outputs(self):
        return self.outputs_of("main")

    def inputs_of(self, function):
        return _call(self._specs, self._impl.inputs, function)

    def outputs_of(self, function):
        return _call(self._specs, self._impl.outputs, function)

    @property
    def device(self):
        return self._impl.device

    @property
    def metadata(self):
        """What the model says of itself: {key: value} from an ONNX model's metadata_props, and
        "onnx:producer_name", "onnx:graph_name", "onnx:description", "onnx:version", ..."""
        return dict(self._impl.metadata)

    def plan(self, function="main"):
        """The memory plan the compiler made, as data: arena_bytes, lower_bound_bytes, buffers
        (name, size, offset, first, last, alias_of), constants, solver and quality."""
        return json.loads(_call(self._impl.plan_json, function))

    def session(self, function="main", *, memory_limit=0, functions=()):
        """A session of `function`; `memory_limit`: the most device memory it may hold (0: what
        the device has free). `functions`: others it runs too (run(..., function=NAME)), in the
        same arenas, sized for the largest."""
        impl = _call(_hexir.session, self._impl, function, int(memory_limit), [str(f) for f in functions])
        return Session(self, impl, function)

    def session_pool(self, size, function="main", *, memory_limit=0):
        """`size` sessions of `function` that threads share, runs in parallel (SessionPool)."""
        return SessionPool(self, size, function, memory_limit=memory_limit)


class Session:
    """Runs one function on one arena. Holds its module (and runtime) alive. Threads may share
    a session: their runs take turns (each waits for the one before); for runs in parallel,
    give each thread its own session, or share a SessionPool."""

    def __init__(self, module, impl, function):
        self._module = module
        self._impl = impl
        self._function = function
        # A model compiled as shape buckets: its signature is the smallest bucket's, and a run
        # takes any size a bucket holds (the runtime checks it).
        self._buckets = function not in module.functions
        self.inputs = module.inputs_of(function)
        self.outputs = module.outputs_of(function)

    @property
    def arena_bytes(self):
        return self._impl.arena_bytes

    def run(self, inputs, outputs=None, *, function=None):
        """Runs on `inputs` (a dict name -> array, or arrays in signature order) and returns a dict
        name -> array. An input that is C-contiguous, of the declared dtype and aligned is read in
        place; any other is converted once (numpy.ascontiguousarray with the declared dtype).
        `outputs` (a dict name -> array) are written in place: each must be a writable
        C-contiguous array of exactly the declared dtype and shape. `function`: another function
        the session runs (Module.session's `functions`)."""
        in_specs, out_specs = self.inputs, self.outputs
        if function is not None and function != self._function:
            in_specs = self._module.inputs_of(function)
            out_specs = self._module.outputs_of(function)
        else:
            function = None
        if isinstance(inputs, dict):
            unknown = set(inputs) - {t.name for t in in_specs}
            if unknown:
                raise InvalidArgumentError("INVALID_ARGUMENT", f"unknown input(s) {sorted(unknown)}; the function takes "
                                           f"{[t.name for t in in_specs]}")
            missing = [t.name for t in in_specs if t.name not in inputs]
            if missing:
                raise InvalidArgumentError("INVALID_ARGUMENT", f"missing input(s) {missing}")
            arrays = [inputs[t.name] for t in in_specs]
        else:
            arrays = list(inputs)
        for spec, a in zip(in_specs, arrays):
            shape = tuple(np.shape(a))
            if shape != spec.shape and not (self._buckets and function is None):
                raise InvalidArgumentError("INVALID_ARGUMENT", f"input '{spec.name}' expects shape {spec.shape}, "
                                           f"got {shape}")
        given = [None] * len(out_specs)
        for name, array in (outputs or {}).items():
            index = [i for i, t in enumerate(out_specs) if t.name == name]
            if not index:
                raise InvalidArgumentError("INVALID_ARGUMENT", f"unknown output '{name}'")
            given[index[0]] = array
        results = _call(self._impl.run, arrays, given, function or "")
        return {t.name: r for t, r in zip(out_specs, results)}

    @property
    def last_run_copied_inputs(self):
        """Per input of the last run: whether it was converted (False: read in place)."""
        return list(self._impl.last_copied)


class SessionPool:
    """`size` sessions of one function, shared by threads: run() takes a free session (waiting
    while all are busy), runs on it and gives it back, so up to `size` runs go in parallel.
    Each session holds an arena: memory grows with `size`."""

    def __init__(self, module, size, function="main", *, memory_limit=0):
        if int(size) < 1:
            raise InvalidArgumentError("INVALID_ARGUMENT", f"a session pool needs at least one session, got {size}")
        self._free = queue.SimpleQueue()
        self.size = int(size)
        for _ in range(self.size):
            self._free.put(module.session(function, memory_limit=memory_limit))
        first = self._free.get()
        self.inputs, self.outputs = first.inputs, first.outputs
        self._free.put(first)

    def run(self, inputs, outputs=None):
        """Session.run on a free session of the pool."""
        session = self._free.get()
        try:
            return session.run(inputs, outputs)
        finally:
            self._free.put(session)


# ONNX Runtime's session shape (inference_session.py), last: it uses what is defined above.
from ._version import __version__  # noqa: E402
from .inference_session import (InferenceSession, NodeArg, RunOptions, SessionOptions,  # noqa: E402
                                get_available_providers)
