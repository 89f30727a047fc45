"""pytest: the Python API (docs/python.md) against PyTorch and NumPy references.

Run by ctest as python.pytest with PYTHONPATH=build/python."""
import gc
import json
import os
import re
import stat
import sys
import threading

import numpy as np
import pytest

import hexir

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "onnx"))

# A graph written in MLIR: y = tanh(x @ w + 1) for a 4x8 input (tests/graphs/matmul_tanh.mlir).
with open(os.path.join(ROOT, "tests", "graphs", "matmul_tanh.mlir")) as _f:
    MLIR = _f.read()


def reference(x):
    return np.tanh(x.astype(np.float64) @ np.full((8, 16), 0.125) + 1.0)


@pytest.fixture(scope="module")
def module():
    return hexir.load(hexir.compile(MLIR))


def test_mlir_text_compiles_and_runs(module):
    assert [t.name for t in module.inputs] == ["x"]
    assert module.inputs[0].shape == (4, 8) and module.inputs[0].dtype == np.float32
    x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    out = module.session().run({"x": x})
    assert list(out) == ["y"]
    np.testing.assert_allclose(out["y"], reference(x), rtol=1e-5, atol=1e-6)
    # Positional inputs, and outputs written into the caller's array.
    y = np.empty((4, 16), np.float32)
    result = module.session().run([x], outputs={"y": y})
    assert result["y"] is y
    np.testing.assert_allclose(y, reference(x), rtol=1e-5, atol=1e-6)


def test_several_functions_share_constants_and_one_session(module):
    """An MLIR graph of two functions (the same layer at batch 4 and 16): one executable, the
    weights stored once, one session running both in the arenas of the larger."""
    batch16 = MLIR.replace("@main", "@batch16").replace("4x8xf32", "16x8xf32").replace("4x16xf32", "16x16xf32")
    assert batch16 != MLIR
    both = hexir.load(hexir.compile(MLIR + batch16))
    assert both.functions == ["main", "batch16"]
    session = both.session(functions=["batch16"])
    alone = both.session("batch16")
    assert session.arena_bytes == max(both.session().arena_bytes, alone.arena_bytes)
    rng = np.random.default_rng(3)
    for _ in range(2):
        for function, n in [("main", 4), ("batch16", 16)]:
            x = rng.standard_normal((n, 8)).astype(np.float32)
            out = session.run({"x": x}, function=function)
            np.testing.assert_allclose(out["y"], reference(x), rtol=1e-5, atol=1e-6)
    with pytest.raises(hexir.NotFoundError, match="is not one this session runs"):
        both.session().run({"x": np.zeros((16, 8), np.float32)}, function="batch16")
    with pytest.raises(hexir.NotFoundError):
        both.session(functions=["batch8"])


def test_shape_buckets_take_any_batch_they_hold(tmp_path):
    """An ONNX model with a symbolic batch compiled with dims={"batch": [2, 8]}: one session of
    "main" runs batch 2 to 8 (padded to the next bucket) against NumPy, and refuses 9 and 1."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(5)
    w, b = rng.standard_normal((6, 3)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "b"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m = hexir.load(hexir.compile(model, dims={"batch": [8, 2]}))
    assert m.functions == ["main_batch2", "main_batch8"]
    session = m.session()
    for n in range(2, 9):
        x = rng.standard_normal((n, 6)).astype(np.float32)
        y = session.run({"x": x})["y"]
        assert y.shape == (n, 3)
        np.testing.assert_allclose(y, x.astype(np.float64) @ w + b, rtol=1e-5, atol=1e-5)
    with pytest.raises(hexir.InvalidArgumentError, match="no shape bucket of 'main' takes x 9x6 f32"):
        session.run({"x": np.zeros((9, 6), np.float32)})
    # One row is never probed by the compiler's check of padding: without a bucket of 1, refused.
    with pytest.raises(hexir.InvalidArgumentError, match="smaller sizes from 2 padded"):
        session.run({"x": np.zeros((1, 6), np.float32)})


def test_prefill_and_decode_buckets_decode_as_pytorch(tmp_path):
    """A decoder with a static KV cache (models.GptKvCache) exported with a symbolic sequence
    and compiled with dims={"seq": [1, 8]}: one executable, weights once, whose 8-token bucket
    is the prefill and 1-token bucket the decode step. 16 greedy tokens equal PyTorch's."""
    torch = pytest.importorskip("torch")
    import models
    torch.manual_seed(0)
    model = models.GptKvCache().eval()
    prompt = torch.randint(0, 50, (1, 8))
    path = str(tmp_path / "decoder.onnx")
    torch.onnx.export(model, (prompt, torch.tensor([0]), model.empty_cache()), path,
                      input_names=["tokens", "pos", "cache"], output_names=["logits", "cache_out"],
                      dynamic_axes={"tokens": {1: "seq"}, "logits": {0: "seq"}}, opset_version=17)

    def torch_step(tokens, pos, cache):
        with torch.no_grad():
            return model(torch.as_tensor(tokens), torch.as_tensor(pos), cache)

    want = models.greedy_decode(torch_step, prompt, model.empty_cache(), 16)
    decoder = hexir.load(hexir.compile(path, dims={"seq": [1, 8]}, donate=["cache"]))
    assert decoder.functions == ["main_seq1", "main_seq8"]
    session = decoder.session()

    def hexir_step(tokens, pos, cache):
        out = session.run({"tokens": np.asarray(tokens, np.int64), "pos": np.asarray(pos, np.int64), "cache": cache})
        return out["logits"], out["cache_out"]

    got = models.greedy_decode(hexir_step, prompt.numpy(), model.empty_cache().numpy(), 16)
    assert got == want
    # The cache donated and updated in place: cache_out is tied to cache (its concatenation runs
    # after every read of the cache), so one buffer is the input and the output of every step.
    cache = model.empty_cache().numpy()

    def in_place_step(tokens, pos, _):
        out = session.run({"tokens": np.asarray(tokens, np.int64), "pos": np.asarray(pos, np.int64), "cache": cache},
                          outputs={"cache_out": cache})
        assert out["cache_out"] is cache
        return out["logits"], cache

    assert models.greedy_decode(in_place_step, prompt.numpy(), cache, 16) == want
    # One name as a string is that one input ("cache", not c, a, c, h, e).
    single = hexir.load(hexir.compile(path, dims={"seq": [1]}, donate="cache")).session()
    one = model.empty_cache().numpy()
    out = single.run({"tokens": np.zeros((1, 1), np.int64), "pos": np.zeros(1, np.int64), "cache": one},
                     outputs={"cache_out": one})
    assert out["cache_out"] is one
    with pytest.raises(hexir.InvalidArgumentError, match="seq in \\(1, 8\\), exactly"):
        session.run({"tokens": np.zeros((1, 3), np.int64), "pos": np.zeros(1, np.int64),
                     "cache": model.empty_cache().numpy()})


def test_plan_is_data(module, tmp_path):
    plan = module.plan()
    assert plan["arena_bytes"] >= plan["lower_bound_bytes"] >= 0
    assert isinstance(plan["buffers"], list)
    assert plan["quality"]
    # The command line's plan outputs, as keywords; a machine and budgets too.
    hexir.compile(MLIR, plan_json=tmp_path / "plan.json", plan_svg=tmp_path / "plan.svg", machine="edge")
    assert json.loads((tmp_path / "plan.json").read_text())["arena_bytes"] == plan["arena_bytes"]
    assert (tmp_path / "plan.svg").read_text().startswith("<svg")
    with pytest.raises(hexir.CompileError, match="the constants take 512 bytes, over the capacity of 100 bytes"):
        hexir.compile(MLIR, memory_budgets={"host": 100})  # the weights: a 512-byte splat
    # Placements as --place: the edge CPU sees its DRAM; the host CPU of an h200 not the GPU's memory.
    hexir.compile(MLIR, machine="edge", placements={"intermediates": "dram"}, plan_json=tmp_path / "placed.json")
    assert json.loads((tmp_path / "placed.json").read_text())["arena_bytes"] == plan["arena_bytes"]
    with pytest.raises(hexir.CompileError, match="processor 'cpu', which runs its kernel, does not see 'device'"):
        hexir.compile(MLIR, machine="h200", placements={"constants": "device"})
    with pytest.raises(hexir.CompileError, match="is not intermediates=SPACE or constants=SPACE"):
        hexir.compile(MLIR, placements={"weights": "host"})


def test_inputs_in_place_or_converted_once(module):
    session = module.session()
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    session.run({"x": x})
    assert session.last_run_copied_inputs == [False]  # C-contiguous float32: read in place
    wide = rng.standard_normal((4, 16)).astype(np.float32)
    strided = wide[:, ::2]  # not contiguous: converted once, same result
    out = session.run({"x": strided})
    assert session.last_run_copied_inputs == [True]
    np.testing.assert_allclose(out["y"], reference(strided), rtol=1e-5, atol=1e-6)
    as64 = x.astype(np.float64)  # another dtype: converted to the declared one
    out = session.run({"x": as64})
    assert session.last_run_copied_inputs == [True]
    np.testing.assert_allclose(out["y"], reference(x), rtol=1e-5, atol=1e-6)
    with pytest.raises(hexir.InvalidArgumentError, match=r"input 'x' expects shape \(4, 8\), got \(8, 4\)"):
        session.run({"x": x.T.copy()})
    with pytest.raises(hexir.InvalidArgumentError, match="missing input"):
        session.run({})
    with pytest.raises(hexir.InvalidArgumentError, match="must be a writable C-contiguous array of 4x16 f32"):
        session.run({"x": x}, outputs={"y": np.empty((4, 16), np.float64)})


def test_every_documented_refusal(module):
    # Each refusal docs/python.md names, each with an argument wrong in that one way only (an
    # output of the right dtype and shape that is read-only, strided, ...): a test that would
    # fail if that one check were deleted.
    session = module.session()
    x = np.ones((4, 8), np.float32)
    readonly = np.empty((4, 16), np.float32)
    readonly.setflags(write=False)
    strided = np.empty((4, 32), np.float32)[:, ::2]
    assert strided.shape == (4, 16) and strided.dtype == np.float32
    fortran = np.asfortranarray(np.empty((4, 16), np.float32))
    refusals = [
        ({"x": x}, {"y": readonly}, "must be a writable C-contiguous array of 4x16 f32"),
        ({"x": x}, {"y": strided}, "must be a writable C-contiguous array of 4x16 f32"),
        ({"x": x}, {"y": fortran}, "must be a writable C-contiguous array of 4x16 f32"),
        ({"x": x}, {"y": np.empty((16, 4), np.float32)}, "must be a writable C-contiguous array of 4x16 f32"),
        ({"x": x}, {"y": [[0.0] * 16] * 4}, "must be a writable C-contiguous array of 4x16 f32"),
        ({"x": x}, {"z": np.empty((4, 16), np.float32)}, "unknown output 'z'"),
        ({"x": x, "w": x}, None, r"unknown input\(s\) \['w'\]"),
        ({}, None, r"missing input\(s\) \['x'\]"),
        ({"x": np.ones((4, 9), np.float32)}, None, r"input 'x' expects shape \(4, 8\), got \(4, 9\)"),
    ]
    for inputs, outputs, message in refusals:
        with pytest.raises(hexir.InvalidArgumentError, match=message):
            session.run(inputs, outputs)
    # Nothing refused was written: the read-only array is as it was, and a right one works.
    good = np.empty((4, 16), np.float32)
    assert session.run({"x": x}, {"y": good})["y"] is good
    np.testing.assert_allclose(good, reference(x), rtol=1e-5, atol=1e-6)


def test_errors_carry_status_codes(tmp_path):
    with pytest.raises(hexir.CompileError, match="use of undeclared SSA value"):
        hexir.compile("func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n return %y : tensor<4xf32>\n}\n")
    with pytest.raises(hexir.NotFoundError):
        hexir.load(str(tmp_path / "missing.hxb"))
    with pytest.raises(hexir.DataLossError, match="bad magic"):
        hexir.load(b"\0" * 128)
    with pytest.raises(hexir.NotFoundError, match="no such device 'tpu'"):
        hexir.load(hexir.compile(MLIR), device="tpu")
    bad = tmp_path / "bad.onnx"
    import onnx
    from onnx import helper, TensorProto
    node = helper.make_node("LpPool", ["x"], ["y"], name="norm")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(bad))
    with pytest.raises(hexir.CompileError, match=r"node 'norm' \(LpPool.*unsupported op 'LpPool'"):
        hexir.compile(str(bad))
    module = hexir.load(hexir.compile(MLIR))
    with pytest.raises(hexir.ResourceExhaustedError, match="over its limit of 10 bytes"):
        module.session(memory_limit=10)


def test_threads_run_sessions_concurrently(module):
    rng = np.random.default_rng(2)
    xs = [rng.standard_normal((4, 8)).astype(np.float32) for _ in range(16)]
    expected = [module.session().run({"x": x})["y"] for x in xs]
    results = [[None] * len(xs) for _ in range(4)]

    def work(t):
        session = module.session()
        for _ in range(20):
            for i, x in enumerate(xs):
                results[t][i] = session.run({"x": x})["y"]

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for t in range(4):
        for i in range(len(xs)):
            assert np.array_equal(results[t][i], expected[i])  # the same bits


def test_special_files_are_refused_and_devices_kept(tmp_path):
    # A FIFO is refused at once, named, as a model and as a graph (it waited for a writer);
    # an output to /dev/null is written in place, and /dev/null stays a device.
    fifo = str(tmp_path / "fifo")
    os.mkfifo(fifo)
    with pytest.raises(hexir.InvalidArgumentError, match="is a FIFO, not a regular file"):
        hexir.load(fifo)
    with pytest.raises(hexir.CompileError, match="is a FIFO, not a regular file"):
        hexir.compile(fifo)
    with pytest.raises(hexir.CompileError, match="'/dev/zero' is a character device"):
        hexir.compile("/dev/zero")
    hexir.compile(MLIR, output="/dev/null")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    with pytest.raises(hexir.InvalidArgumentError, match="it is a directory"):
        hexir.compile(MLIR, output=str(tmp_path))


def test_verify_weights_catches_a_flipped_weight(tmp_path):
    # (Values no f16 or bf16 holds exactly: the pool stores them as f32.)
    graph = ("func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {\n"
             "  %w = arith.constant dense<[" + ", ".join(f"{i}.1" for i in range(64)) + "]> : tensor<64xf32>\n"
             "  %y = tosa.add %x, %w : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>\n"
             "  return %y : tensor<64xf32>\n}\n")
    path = tmp_path / "w.hxb"
    hexir.compile(graph, output=str(path))
    data = bytearray(path.read_bytes())
    weights = np.array([float(f"{i}.1") for i in range(64)], dtype=np.float32)
    at = bytes(data).find(weights.tobytes())
    assert at > 0
    data[at + 17] ^= 0x04
    path.write_bytes(bytes(data))
    hexir.load(str(path))  # not read at load: loads
    with pytest.raises(hexir.DataLossError, match="checksum"):
        hexir.load(str(path), verify_weights=True)


def _threads_run(run, xs, threads=8, rounds=30):
    """Each of `threads` threads runs every x `rounds` times through `run`; returns their results."""
    results = [[None] * len(xs) for _ in range(threads)]
    errors = []

    def work(t):
        try:
            for _ in range(rounds):
                for i, x in enumerate(xs):
                    results[t][i] = run({"x": x})["y"]
        except Exception as e:  # reported below, on the test's thread
            errors.append(e)

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert not errors
    return results


def test_one_session_shared_by_threads_takes_turns():
    # One session run from 8 threads at once: each run waits for the one before (a session has
    # one arena), none crashes, every output is right. With one worker thread per dispatch too.
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal((4, 8)).astype(np.float32) for _ in range(16)]
    for threads in (0, 1):
        shared_module = hexir.load(hexir.compile(MLIR), threads=threads)
        session = shared_module.session()
        expected = [session.run({"x": x})["y"] for x in xs]
        for per_thread in _threads_run(session.run, xs):
            for i in range(len(xs)):
                assert np.array_equal(per_thread[i], expected[i])
        for i, x in enumerate(xs):
            np.testing.assert_allclose(expected[i], reference(x), rtol=1e-5, atol=1e-6)


def test_session_pool_runs_in_parallel(module):
    rng = np.random.default_rng(4)
    xs = [rng.standard_normal((4, 8)).astype(np.float32) for _ in range(16)]
    pool = module.session_pool(3)
    assert pool.size == 3 and [t.name for t in pool.inputs] == ["x"]
    expected = [module.session().run({"x": x})["y"] for x in xs]
    for per_thread in _threads_run(pool.run, xs):
        for i in range(len(xs)):
            assert np.array_equal(per_thread[i], expected[i])
    with pytest.raises(hexir.InvalidArgumentError, match="at least one session"):
        module.session_pool(0)


def _rss_kib():
    with open("/proc/self/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def test_sessions_keep_modules_alive_and_nothing_grows():
    exe = hexir.compile(MLIR)
    module = hexir.load(exe)
    session = module.session()
    del module
    gc.collect()
    x = np.ones((4, 8), np.float32)
    np.testing.assert_allclose(session.run({"x": x})["y"], reference(x), rtol=1e-5, atol=1e-6)
    del session
    for _ in range(100):  # warm-up: allocator pools reach their steady size
        hexir.load(exe).session().run({"x": x})
    gc.collect()
    before = _rss_kib()
    for _ in range(1000):
        hexir.load(exe).session().run({"x": x})
    gc.collect()
    assert _rss_kib() - before < 8 * 1024  # KiB: no per-cycle leak (a generous bound)


# Every model of the ONNX end-to-end tests (tests/onnx/models.py's CI_MODELS).
MODELS = ["mlp", "resnet18", "mobilenet_v2", "mobilenet_v3_small", "squeezenet1_1", "shufflenet_v2_x1_0",
          "efficientnet_b0", "bert_like", "gpt_like"]


@pytest.mark.parametrize("name", MODELS)
def test_onnx_models_match_pytorch(name, tmp_path):
    import models  # tests/onnx/models.py: PyTorch -> ONNX
    path = str(tmp_path / (name + ".onnx"))
    input_name, x, ref = models.export(name, path)
    module = hexir.load(hexir.compile(path))
    out = module.session().run({input_name: x})
    got = out[module.outputs[0].name]
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)


def test_docs_example_runs(tmp_path, monkeypatch):
    with open(os.path.join(ROOT, "docs", "python.md")) as f:
        text = f.read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "docs/python.md has no python example"
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        exec(compile(block, "docs/python.md", "exec"), {})


def test_fix_inputs_become_constants(tmp_path):
    # A Reshape whose shape is a model input: refused with the remedy, then fixed at compile time
    # (as hexir-compile --fix-input); the module then takes x alone.
    import onnx
    from onnx import helper, TensorProto
    node = helper.make_node("Reshape", ["x", "shape"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6]),
                                            helper.make_tensor_value_info("shape", TensorProto.INT64, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2, 2])])
    path = tmp_path / "reshape.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    with pytest.raises(hexir.CompileError, match="fix its value with --fix-input shape="):
        hexir.compile(str(path))
    module = hexir.load(hexir.compile(str(path), fix_inputs={"shape": np.array([3, 2, 2])}))
    assert [spec.name for spec in module.inputs] == ["x"]
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    np.testing.assert_array_equal(module.session().run({"x": x})["y"], x.reshape(3, 2, 2))
