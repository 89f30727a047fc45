#!/usr/bin/python3
"""Builds generate.onnx: a greedy decoder's whole generation as one graph.

The decoder is tests/onnx/models.py's GptKvCache (a GPT-style decoder with a static KV cache).
Its step (tokens [1, T], pos [1], cache) -> (logits [T, vocab], cache') is exported from PyTorch
once, then used twice in one ONNX graph:
  prefill   the step over the prompt (T = P, pos 0); the first token is the argmax of its last row
  Loop      N - 1 trips of the step over the last token (T = 1), carrying (token, pos, cache);
            each trip's argmax is the next token and a scan output
  tokens    the first token and the scan, [N] int64; cache_out the cache after the last trip
The weights are initializers of the graph, read by both (stored once). Hexir runs the Loop in the
VM: one Session::Run generates all N tokens, with no host round trip per token.

  make_generate.py OUT_DIR [--prompt 8] [--tokens 16] [--full]
writes OUT_DIR/generate.onnx, OUT_DIR/prompt.npy ([1, P] int64) and OUT_DIR/pytorch_tokens.npy
(PyTorch's greedy decode of the same weights, [N] int64). --full: the benchmark size (vocab
8192, width 768, 12 heads, 4 layers, a 128-position cache).
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "onnx"))

FULL = dict(vocab=8192, d=768, heads=12, layers=4, max_seq=128)


def export_step(model, prompt, path):
    import torch
    torch.onnx.export(model, (prompt, torch.tensor([0]), model.empty_cache()), path,
                      input_names=["tokens", "pos", "cache"], output_names=["logits", "cache_out"],
                      dynamic_axes={"tokens": {1: "seq"}, "logits": {0: "seq"}}, opset_version=17)
    return onnx.load(path)


def copy_step(step, prefix, rename):
    """The step's nodes with its inputs and outputs renamed and its other values prefixed."""
    weights = {init.name for init in step.graph.initializer}
    nodes = []
    for n in step.graph.node:
        m = onnx.NodeProto()
        m.CopyFrom(n)
        m.name = prefix + (n.name or n.op_type)
        m.input[:] = [rename.get(x, x if (x in weights or not x) else prefix + x) for x in n.input]
        m.output[:] = [rename.get(x, prefix + x) for x in n.output]
        nodes.append(m)
    return nodes


def build_generate(step, prompt_len, tokens, cache_shape):
    """The generation graph around the exported step (see the module's docstring)."""
    def const(name, value):
        return numpy_helper.from_array(np.asarray(value), name)

    prefill = copy_step(step, "prefill/", {"tokens": "prompt", "pos": "pos0", "cache": "cache",
                                           "logits": "prefill_logits", "cache_out": "cache1"})
    first = [helper.make_node("Gather", ["prefill_logits", "last_row"], ["last_logits"], axis=0),
             helper.make_node("ArgMax", ["last_logits"], ["tok0"], axis=0, keepdims=1),
             helper.make_node("Reshape", ["tok0", "shape_1x1"], ["tok0_2d"])]
    body_nodes = copy_step(step, "step/", {"tokens": "tok_in", "pos": "pos_in", "cache": "cache_in",
                                           "logits": "step_logits", "cache_out": "cache_next"})
    body_nodes += [helper.make_node("ArgMax", ["step_logits"], ["tok_next"], axis=1, keepdims=1),
                   helper.make_node("Add", ["pos_in", "one"], ["pos_next"]),
                   helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                   helper.make_node("Reshape", ["tok_next", "shape_1"], ["tok_row"])]
    f32, i64 = TP.FLOAT, TP.INT64
    body = helper.make_graph(
        body_nodes, "decode_step",
        [helper.make_tensor_value_info("trip", i64, []), helper.make_tensor_value_info("cond_in", TP.BOOL, []),
         helper.make_tensor_value_info("tok_in", i64, [1, 1]), helper.make_tensor_value_info("pos_in", i64, [1]),
         helper.make_tensor_value_info("cache_in", f32, list(cache_shape))],
        [helper.make_tensor_value_info("cond_out", TP.BOOL, []), helper.make_tensor_value_info("tok_next", i64, [1, 1]),
         helper.make_tensor_value_info("pos_next", i64, [1]),
         helper.make_tensor_value_info("cache_next", f32, list(cache_shape)),
         helper.make_tensor_value_info("tok_row", i64, [1])])
    loop = helper.make_node("Loop", ["trips", "", "tok0_2d", "pos1", "cache1"],
                            ["tok_last", "pos_last", "cache_out", "tok_rows"], body=body, name="generate")
    tail = [helper.make_node("Reshape", ["tok_rows", "shape_rest"], ["rest"]),
            helper.make_node("Concat", ["tok0", "rest"], ["tokens"], axis=0)]
    inits = list(step.graph.initializer) + [
        const("pos0", np.array([0], np.int64)), const("last_row", np.int64(prompt_len - 1)),
        const("shape_1x1", np.array([1, 1], np.int64)), const("shape_1", np.array([1], np.int64)),
        const("shape_rest", np.array([tokens - 1], np.int64)), const("one", np.array([1], np.int64)),
        const("pos1", np.array([prompt_len], np.int64)), const("trips", np.int64(tokens - 1))]
    graph = helper.make_graph(
        prefill + first + [loop] + tail, "generate",
        [helper.make_tensor_value_info("prompt", i64, [1, prompt_len]),
         helper.make_tensor_value_info("cache", f32, list(cache_shape))],
        [helper.make_tensor_value_info("tokens", i64, [tokens]),
         helper.make_tensor_value_info("cache_out", f32, list(cache_shape))],
        initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = step.ir_version
    return m


def make(out_dir, prompt_len=8, tokens=16, full=False):
    """Writes the step, the generation model, the prompt and PyTorch's tokens; returns their
    paths (step, model, prompt, tokens) and the cache's shape (cache_shape)."""
    import torch
    import models
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = models.GptKvCache(**(FULL if full else {})).eval()
    cache_shape = tuple(model.empty_cache().shape)
    if prompt_len + tokens > cache_shape[3]:
        sys.exit(f"a {prompt_len}-token prompt and {tokens} tokens overflow the {cache_shape[3]}-position cache")
    prompt = torch.randint(0, model.head.out_features, (1, prompt_len))
    os.makedirs(out_dir, exist_ok=True)
    paths = {k: os.path.join(out_dir, f) for k, f in (("step", "step.onnx"), ("model", "generate.onnx"),
                                                       ("prompt", "prompt.npy"), ("tokens", "pytorch_tokens.npy"))}
    step = export_step(model, prompt, paths["step"])

    def run_step(ids, pos, cache):
        with torch.no_grad():
            return model(torch.as_tensor(ids), torch.as_tensor(pos), cache)

    want = models.greedy_decode(run_step, prompt, model.empty_cache(), tokens)
    onnx.save(build_generate(step, prompt_len, tokens, cache_shape), paths["model"])
    np.save(paths["prompt"], prompt.numpy())
    np.save(paths["tokens"], np.array(want, np.int64))
    return {**paths, "cache_shape": cache_shape}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out_dir")
    p.add_argument("--prompt", type=int, default=8)
    p.add_argument("--tokens", type=int, default=16)
    p.add_argument("--full", action="store_true")
    args = p.parse_args()
    paths = make(args.out_dir, args.prompt, args.tokens, args.full)
    print(f"wrote {paths['model']}; PyTorch's tokens: {np.load(paths['tokens']).tolist()}")


if __name__ == "__main__":
    main()
