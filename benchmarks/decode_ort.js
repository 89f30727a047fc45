#!/usr/bin/env node
// ONNX Runtime (onnxruntime-node) side of benchmarks/decode.py: greedy decoding from a host loop.
//
//   node decode_ort.js --ort DIR/node_modules/onnxruntime-node --model M.onnx --prompt 3,1,4,...
//        --tokens N --cache-shape L,2,H,S,D [--threads T]
//
// The model is a decoder with a static KV cache (tests/onnx/models.py GptKvCache: inputs tokens
// [1, T] int64, pos [1] int64, cache; outputs logits [T, vocab], cache_out). One run on the
// prompt (prefill), then one run a token (decode), each fed the argmax of the last logits row
// and the cache the run before returned. Prints one JSON object:
//   {"tokens": [...], "prefill_ms", "decode_ms": [one per decode step], "threads"}
'use strict';

function fail(message) {
  process.stderr.write(`decode_ort: error: ${message}\n`);
  process.exit(1);
}

function parseArgs(argv) {
  const args = {ort: 'onnxruntime-node', model: null, prompt: null, tokens: 0, cacheShape: null, threads: 1};
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (i + 1 >= argv.length) fail(`${a} needs a value`);
    const v = argv[++i];
    const ints = () => v.split(',').map((s) => parseInt(s, 10));
    if (a === '--ort') args.ort = v;
    else if (a === '--model') args.model = v;
    else if (a === '--prompt') args.prompt = ints();
    else if (a === '--tokens') args.tokens = parseInt(v, 10);
    else if (a === '--cache-shape') args.cacheShape = ints();
    else if (a === '--threads') args.threads = parseInt(v, 10);
    else fail(`unknown argument '${a}'`);
  }
  if (!args.model || !args.prompt || !args.cacheShape || !(args.tokens >= 1) || !(args.threads >= 1))
    fail('needs --model, --prompt, --tokens >= 1, --cache-shape and --threads >= 1');
  if (args.prompt.some((t) => !Number.isInteger(t)) || args.cacheShape.some((d) => !(d >= 1)))
    fail('bad --prompt or --cache-shape');
  return args;
}

function argmaxLastRow(logits) {
  const [rows, vocab] = logits.dims.map(Number);
  const data = logits.data;
  let best = 0;
  for (let j = 1; j < vocab; ++j)
    if (data[(rows - 1) * vocab + j] > data[(rows - 1) * vocab + best]) best = j;
  return best;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  let ort;
  try {
    ort = require(args.ort);
  } catch (e) {
    fail(`cannot load onnxruntime-node from ${args.ort}: ${e.message.split('\n')[0]}`);
  }
  const session = await ort.InferenceSession.create(args.model, {
    intraOpNumThreads: args.threads, interOpNumThreads: 1, graphOptimizationLevel: 'all',
    executionMode: 'sequential'});
  const ids = (list) => new ort.Tensor('int64', BigInt64Array.from(list.map(BigInt)), [1, list.length]);
  const position = (p) => new ort.Tensor('int64', BigInt64Array.of(BigInt(p)), [1]);
  let cache = new ort.Tensor('float32', new Float32Array(args.cacheShape.reduce((a, b) => a * b, 1)), args.cacheShape);
  let t0 = process.hrtime.bigint();
  let out = await session.run({tokens: ids(args.prompt), pos: position(0), cache});
  const prefillMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const tokens = [argmaxLastRow(out.logits)];
  const decodeMs = [];
  while (tokens.length < args.tokens) {
    cache = out.cache_out;
    t0 = process.hrtime.bigint();
    out = await session.run({tokens: ids([tokens[tokens.length - 1]]),
                             pos: position(args.prompt.length + tokens.length - 1), cache});
    tokens.push(argmaxLastRow(out.logits));
    decodeMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  process.stdout.write(JSON.stringify({tokens, prefill_ms: prefillMs, decode_ms: decodeMs, threads: args.threads}) + '\n');
}

main().catch((e) => fail(String(e && e.message ? e.message : e).split('\n')[0]));
