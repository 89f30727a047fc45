"""hexir.InferenceSession, ONNX Runtime's session shape: ONNX Runtime's getting-started pattern
runs with only its import line changed and equals NumPy; get_inputs()/get_outputs() as ORT's
NodeArgs; get_modelmeta() with the model's metadata_props; run(None | names, feed) returns a list; a wrong dtype raises naming both types, as ORT
does; an .onnx model is compiled once (a second session takes the cached executable), an .hxb
loaded as it is; unknown providers and names are refused."""
import os
import subprocess
import sys

import numpy as np
import pytest

import hexir

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

ORT_EXAMPLE = """import numpy as np
import onnxruntime as ort

sess = ort.InferenceSession(MODEL, providers=["CPUExecutionProvider"])
input_name = sess.get_inputs()[0].name
x = np.load(INPUT)
outputs = sess.run(None, {input_name: x})
np.save(OUTPUT, outputs[0])
"""

RNG = np.random.default_rng(11)
W = RNG.standard_normal((6, 4)).astype(np.float32)
B = RNG.standard_normal(4).astype(np.float32)


def dense(path):
    """y = relu(x @ W + B) and z = x @ W (two outputs), x of shape [2, 6]."""
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["z"]), helper.make_node("Add", ["z", "b"], ["a"]),
         helper.make_node("Relu", ["a"], ["y"])], "dense",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 4])],
        [numpy_helper.from_array(W, "w"), numpy_helper.from_array(B, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="hexir-tests")
    helper.set_model_props(model, {"labels": "a,b,c,d"})
    onnx.save(model, str(path))


def test_an_onnxruntime_example_runs_with_its_import_changed(tmp_path, monkeypatch):
    monkeypatch.setenv("HEXIR_CACHE_DIR", str(tmp_path / "cache"))
    dense(tmp_path / "dense.onnx")
    x = RNG.standard_normal((2, 6)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    script = ORT_EXAMPLE.replace("import onnxruntime as ort", "import hexir as ort")
    assert script != ORT_EXAMPLE and script.count("\n") == ORT_EXAMPLE.count("\n")
    prelude = f"MODEL, INPUT, OUTPUT = {str(tmp_path / 'dense.onnx')!r}, {str(tmp_path / 'x.npy')!r}, " \
              f"{str(tmp_path / 'y.npy')!r}\n"
    r = subprocess.run([sys.executable, "-c", prelude + script], capture_output=True, text=True, env=os.environ)
    assert r.returncode == 0, r.stderr
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"), np.maximum(x @ W + B, 0), rtol=1e-5, atol=1e-5)


def test_session_shape_errors_and_cache(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("HEXIR_CACHE_DIR", str(cache))
    dense(tmp_path / "dense.onnx")
    sess = hexir.InferenceSession(str(tmp_path / "dense.onnx"))
    assert [(a.name, a.shape, a.type) for a in sess.get_inputs()] == [("x", [2, 6], "tensor(float)")]
    assert [(a.name, a.shape, a.type) for a in sess.get_outputs()] == [("y", [2, 4], "tensor(float)"),
                                                                       ("z", [2, 4], "tensor(float)")]
    assert repr(sess.get_inputs()[0]) == "NodeArg(name='x', type='tensor(float)', shape=[2, 6])"
    assert sess.get_providers() == ["CPUExecutionProvider"]
    meta = sess.get_modelmeta()
    assert (meta.producer_name, meta.graph_name, meta.custom_metadata_map) == ("hexir-tests", "dense",
                                                                               {"labels": "a,b,c,d"})
    x = RNG.standard_normal((2, 6)).astype(np.float32)
    y, z = sess.run(None, {"x": x})
    np.testing.assert_allclose(y, np.maximum(x @ W + B, 0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(z, x @ W, rtol=1e-5, atol=1e-5)
    only = sess.run(["z"], {"x": x})
    assert isinstance(only, list) and len(only) == 1
    np.testing.assert_allclose(only[0], z)

    # As ONNX Runtime: a wrong dtype is refused, naming both types; names must exist.
    with pytest.raises(hexir.InvalidArgumentError, match=r"Actual: \(tensor\(int64\)\) , expected: \(tensor\(float\)\)"):
        sess.run(None, {"x": x.astype(np.int64)})
    with pytest.raises(hexir.InvalidArgumentError, match="Invalid output name"):
        sess.run(["nope"], {"x": x})
    with pytest.raises(hexir.InvalidArgumentError, match="Missing Input: x"):
        sess.run(None, {})
    with pytest.raises(ValueError, match="unknown provider"):
        hexir.InferenceSession(str(tmp_path / "dense.onnx"), providers=["TensorrtExecutionProvider"])

    # Compiled once: a second session takes the cached executable; other options compile anew.
    cached = sorted(cache.glob("*.hxb"))
    assert len(cached) == 1
    stamp = cached[0].stat().st_mtime_ns
    options = hexir.SessionOptions()
    options.intra_op_num_threads = 1
    again = hexir.InferenceSession(str(tmp_path / "dense.onnx"), sess_options=options)
    assert sorted(cache.glob("*.hxb")) == cached and cached[0].stat().st_mtime_ns == stamp
    np.testing.assert_allclose(again.run(["y"], {"x": x})[0], y)
    hexir.InferenceSession(str(tmp_path / "dense.onnx"), compile_options={"fusion": False})
    assert len(list(cache.glob("*.hxb"))) == 2
    # An executable is loaded as it is, and bytes work as a path does.
    from_hxb = hexir.InferenceSession(str(cached[0]))
    np.testing.assert_allclose(from_hxb.run(["y"], {"x": x})[0], y)
    from_bytes = hexir.InferenceSession((tmp_path / "dense.onnx").read_bytes())
    np.testing.assert_allclose(from_bytes.run(["y"], {"x": x})[0], y)
    assert hexir.__version__.count(".") == 2
