"""ONNX Runtime's session, over Hexir: code written against onnxruntime runs by changing its
import line.

    import hexir as ort                       # was: import onnxruntime as ort
    sess = ort.InferenceSession("model.onnx", providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    y = sess.run(None, {name: x})[0]

An .onnx model (a path, bytes or an onnx.ModelProto) is compiled ahead of time once and its
executable cached, keyed by the model's bytes, the compile options, this package's version and
the CPU (the kernels are compiled for it): HEXIR_CACHE_DIR, else ~/.cache/hexir. An .hxb path is
loaded as it is. Inputs must have the declared dtype (ONNX Runtime raises on an int64 array fed
to a float input, and so does this).
"""
import hashlib
import json
import os
import sys
import tempfile

import numpy as np

from ._version import __version__

# The package itself: its compile, load and errors (it imports this module last).
_core = sys.modules[__package__]

# ONNX Runtime's type names, by NumPy dtype.
_TYPE_NAMES = {
    np.dtype(np.float32): "tensor(float)", np.dtype(np.float64): "tensor(double)",
    np.dtype(np.float16): "tensor(float16)", np.dtype(np.int8): "tensor(int8)", np.dtype(np.uint8): "tensor(uint8)",
    np.dtype(np.int16): "tensor(int16)", np.dtype(np.uint16): "tensor(uint16)", np.dtype(np.int32): "tensor(int32)",
    np.dtype(np.uint32): "tensor(uint32)", np.dtype(np.int64): "tensor(int64)", np.dtype(np.uint64): "tensor(uint64)",
    np.dtype(np.bool_): "tensor(bool)",
}

# The providers, as ONNX Runtime names them, and the Hexir device each runs on.
_PROVIDERS = {"CPUExecutionProvider": "host", "CUDAExecutionProvider": "cuda"}


def get_available_providers():
    """The providers this build has (the CUDA one needs a GPU and its driver at load)."""
    return ["CUDAExecutionProvider", "CPUExecutionProvider"]


def _type_name(dtype):
    return _TYPE_NAMES.get(np.dtype(dtype), f"tensor({np.dtype(dtype).name})")


class NodeArg:
    """An input's or output's name, shape and type, as ONNX Runtime's NodeArg."""

    def __init__(self, name, shape, type):
        self.name, self.shape, self.type = name, shape, type

    def __repr__(self):
        return f"NodeArg(name='{self.name}', type='{self.type}', shape={self.shape})"


class ModelMetadata:
    """ONNX Runtime's ModelMetadata: the model's own fields and its metadata_props."""

    def __init__(self, entries):
        self.producer_name = entries.get("onnx:producer_name", "")
        self.graph_name = entries.get("onnx:graph_name", "")
        self.domain = entries.get("onnx:domain", "")
        self.description = entries.get("onnx:description", "")
        self.graph_description = ""
        self.version = int(entries.get("onnx:version", "0"))
        self.custom_metadata_map = {k: v for k, v in entries.items() if not k.startswith("onnx:")}


class SessionOptions:
    """The options of ONNX Runtime's SessionOptions that apply: intra_op_num_threads (worker
    threads per dispatch, 0: every core). The others are accepted and have no effect (Hexir
    optimizes ahead of time, always)."""

    def __init__(self):
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.graph_optimization_level = None
        self.log_severity_level = 2


class RunOptions:
    """Accepted for ONNX Runtime's run(..., run_options); it has no effect."""


def _cpu_key():
    """What the host kernels were compiled for: the CPU's model and flags."""
    try:
        with open("/proc/cpuinfo") as f:
            lines = [line for line in f if line.startswith(("model name", "flags"))]
        return "".join(sorted(set(lines)))
    except OSError:
        return ""


def _model_bytes(model):
    if hasattr(model, "SerializeToString"):
        return model.SerializeToString()
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model)
    path = os.fspath(model)
    if not os.path.exists(path):
        raise _core.NotFoundError("NOT_FOUND", f"no such model '{path}'")
    with open(path, "rb") as f:
        return f.read()


def _cached_executable(model, compile_options):
    """The executable of an ONNX model: from the cache, or compiled and written there (by
    rename: a concurrent reader sees a whole file or none)."""
    data = _model_bytes(model)
    key = hashlib.sha256()
    for part in (data, json.dumps(compile_options, sort_keys=True).encode(), __version__.encode(),
                 _cpu_key().encode()):
        key.update(hashlib.sha256(part).digest())
    cache = os.environ.get("HEXIR_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "hexir")
    os.makedirs(cache, exist_ok=True)
    path = os.path.join(cache, key.hexdigest()[:32] + ".hxb")
    if not os.path.exists(path):
        executable = _core.compile(data, **compile_options)
        fd, partial = tempfile.mkstemp(dir=cache, suffix=".partial")
        with os.fdopen(fd, "wb") as f:
            f.write(executable)
        os.replace(partial, path)
    return path


class InferenceSession:
    """ONNX Runtime's InferenceSession: `path_or_bytes` an .onnx or .hxb path, ONNX bytes or an
    onnx.ModelProto; `providers` ONNX Runtime's names (the first Hexir has is used: CPU or
    CUDA); `sess_options` a SessionOptions. `compile_options` (Hexir's own) go to
    hexir.compile for an ONNX model: input_shapes, dims, precision, ..."""

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, *,
                 compile_options=None, **kwargs):
        names = list(providers) if providers else ["CPUExecutionProvider"]
        names = [p[0] if isinstance(p, (tuple, list)) else p for p in names]
        unknown = [p for p in names if p not in _PROVIDERS]
        if unknown:
            raise ValueError(f"unknown provider(s) {unknown}; Hexir has {sorted(_PROVIDERS)}")
        self._providers = names[:1]
        device = _PROVIDERS[names[0]]
        options = dict(compile_options or {})
        if device == "cuda":
            options.setdefault("target", "cuda")
        threads = int(getattr(sess_options, "intra_op_num_threads", 0) or 0)
        path = None
        if isinstance(path_or_bytes, (str, os.PathLike)) and os.fspath(path_or_bytes).endswith(".hxb"):
            path = os.fspath(path_or_bytes)
        else:
            path = _cached_executable(path_or_bytes, options)
        self._module = _core.load(path, device=device, threads=threads)
        self._session = self._module.session()

    def get_inputs(self):
        return [NodeArg(t.name, list(t.shape), _type_name(t.dtype)) for t in self._session.inputs]

    def get_outputs(self):
        return [NodeArg(t.name, list(t.shape), _type_name(t.dtype)) for t in self._session.outputs]

    def get_providers(self):
        return list(self._providers)

    def get_modelmeta(self):
        return ModelMetadata(self._module.metadata)

    def run(self, output_names, input_feed, run_options=None):
        """The outputs named (None: every output, in order) as a list of arrays."""
        feed = {}
        for spec in self._session.inputs:
            if spec.name not in input_feed:
                raise _core.InvalidArgumentError("INVALID_ARGUMENT", f"Missing Input: {spec.name}")
            value = np.asarray(input_feed[spec.name])
            if value.dtype != spec.dtype:
                raise _core.InvalidArgumentError(
                    "INVALID_ARGUMENT", f"Unexpected input data type for '{spec.name}'. Actual: "
                    f"({_type_name(value.dtype)}) , expected: ({_type_name(spec.dtype)})")
            feed[spec.name] = value
        unknown = set(input_feed) - set(feed)
        if unknown:
            raise _core.InvalidArgumentError("INVALID_ARGUMENT", f"Invalid input name(s): {sorted(unknown)}")
        names = [t.name for t in self._session.outputs] if output_names is None else list(output_names)
        missing = [n for n in names if n not in {t.name for t in self._session.outputs}]
        if missing:
            raise _core.InvalidArgumentError("INVALID_ARGUMENT", f"Invalid output name(s): {missing}")
        results = self._session.run(feed)
        return [results[n] for n in names]
