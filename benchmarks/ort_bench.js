#!/usr/bin/env node
// ONNX Runtime (onnxruntime-node) side of benchmarks/compare_ort.py: times one model.
//
//   node ort_bench.js --ort DIR/node_modules/onnxruntime-node --model M.onnx
//        --input NAME=FILE.npy... [--output NAME=FILE.npy]... [--threads T] [--runs N] [--warmup W]
//        [--each K]
//
// With --each K, nothing is timed: each file name holds "{}", replaced by 0 .. K-1, and the
// model runs once per index, writing that index's outputs (compare_ort's agreement check over
// many inputs, one session).
// Creates the session (intraOpNumThreads T, interOpNumThreads 1, all graph optimizations,
// sequential execution), runs W warm-up runs, then N timed runs, writes the requested outputs
// of the last run as .npy files and prints one JSON object on stdout:
//   {"session_ms", "median_ms", "p90_ms", "min_ms", "runs", "threads", "peak_rss_kib", "baseline_rss_kib"}
// peak_rss_kib is process.resourceUsage().maxRSS: the whole Node process, V8 included;
// baseline_rss_kib the same before the session is created (Node.js and the ORT binding alone).
'use strict';
const fs = require('fs');

function fail(message) {
  process.stderr.write(`ort_bench: error: ${message}\n`);
  process.exit(1);
}

function parseArgs(argv) {
  const args = {ort: 'onnxruntime-node', model: null, inputs: [], outputs: [], threads: 1, runs: 10, warmup: 2, each: 0};
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) fail(`${a} needs a value`);
      return argv[++i];
    };
    const pair = () => {
      const v = value();
      const eq = v.indexOf('=');
      if (eq <= 0 || eq + 1 === v.length) fail(`${a} needs NAME=FILE.npy, not '${v}'`);
      return [v.slice(0, eq), v.slice(eq + 1)];
    };
    if (a === '--ort') args.ort = value();
    else if (a === '--model') args.model = value();
    else if (a === '--input') args.inputs.push(pair());
    else if (a === '--output') args.outputs.push(pair());
    else if (a === '--threads') args.threads = parseInt(value(), 10);
    else if (a === '--runs') args.runs = parseInt(value(), 10);
    else if (a === '--warmup') args.warmup = parseInt(value(), 10);
    else if (a === '--each') args.each = parseInt(value(), 10);
    else fail(`unknown argument '${a}'`);
  }
  if (!args.model) fail('no --model given');
  if (!(args.threads >= 1) || !(args.runs >= 1) || !(args.warmup >= 0) || !(args.each >= 0))
    fail('bad --threads, --runs, --warmup or --each');
  return args;
}

// .npy (versions 1-3, C order, little-endian) of float32, float64, int32 or int64.
const kTypes = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
  '<i4': ['int32', Int32Array], '<i8': ['int64', BigInt64Array],
};

function readNpy(path) {
  const buf = fs.readFileSync(path);
  if (buf.length < 10 || buf.readUInt8(0) !== 0x93 || buf.toString('latin1', 1, 6) !== 'NUMPY')
    fail(`${path}: not a .npy file`);
  const major = buf.readUInt8(6);
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const fortran = /'fortran_order':\s*(True|False)/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !fortran || !shape) fail(`${path}: cannot read the header ${header}`);
  if (fortran[1] === 'True') fail(`${path}: Fortran order is not supported`);
  const type = kTypes[descr[1]];
  if (!type) fail(`${path}: element type ${descr[1]} is not supported`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s.length).map((s) => parseInt(s, 10));
  const offset = start + headerLen;
  // Copy into a fresh ArrayBuffer: a Buffer's byteOffset need not suit the typed array.
  const bytes = buf.buffer.slice(buf.byteOffset + offset, buf.byteOffset + buf.length);
  const data = new type[1](bytes);
  const count = dims.reduce((a, b) => a * b, 1);
  if (data.length !== count) fail(`${path}: ${data.length} elements for shape (${dims})`);
  return {type: type[0], data, dims};
}

function writeNpy(path, tensor) {
  const descr = Object.keys(kTypes).find((k) => kTypes[k][0] === tensor.type);
  if (!descr) fail(`output element type ${tensor.type} is not supported`);
  const dims = tensor.dims.map(Number);
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const prefix = Buffer.alloc(10);
  prefix.writeUInt8(0x93, 0);
  prefix.write('NUMPY', 1, 'latin1');
  prefix.writeUInt8(1, 6);
  prefix.writeUInt8(0, 7);
  prefix.writeUInt16LE(header.length, 8);
  const data = tensor.data;
  fs.writeFileSync(path, Buffer.concat([prefix, Buffer.from(header, 'latin1'),
    Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  let ort;
  try {
    ort = require(args.ort);
  } catch (e) {
    fail(`cannot load onnxruntime-node from ${args.ort}: ${e.message.split('\n')[0]}`);
  }
  const feedsOf = (index) => {
    const feeds = {};
    for (const [name, file] of args.inputs) {
      const a = readNpy(file.replace('{}', String(index)));
      feeds[name] = new ort.Tensor(a.type, a.data, a.dims);
    }
    return feeds;
  };
  const feeds = args.each ? null : feedsOf(0);
  const baselineRss = process.resourceUsage().maxRSS;  // Node.js and the ORT binding, no model
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(args.model, {
    intraOpNumThreads: args.threads, interOpNumThreads: 1, graphOptimizationLevel: 'all',
    executionMode: 'sequential',
  });
  const sessionMs = Number(process.hrtime.bigint() - t0) / 1e6;
  for (const name of session.inputNames)
    if (!args.inputs.some(([n]) => n === name)) fail(`the model's input '${name}' has no --input`);
  if (args.each) {
    for (let i = 0; i < args.each; ++i) {
      const results = await session.run(feedsOf(i));
      for (const [name, file] of args.outputs) {
        if (!(name in results)) fail(`no output named '${name}' (outputs: ${session.outputNames.join(', ')})`);
        writeNpy(file.replace('{}', String(i)), results[name]);
      }
    }
    process.stdout.write(JSON.stringify({each: args.each, session_ms: sessionMs}) + '\n');
    return;
  }
  let results;
  for (let i = 0; i < args.warmup; ++i) results = await session.run(feeds);
  const ms = [];
  for (let i = 0; i < args.runs; ++i) {
    const s = process.hrtime.bigint();
    results = await session.run(feeds);
    ms.push(Number(process.hrtime.bigint() - s) / 1e6);
  }
  for (const [name, file] of args.outputs) {
    if (!(name in results)) fail(`no output named '${name}' (outputs: ${session.outputNames.join(', ')})`);
    writeNpy(file, results[name]);
  }
  const sorted = ms.slice().sort((a, b) => a - b);
  const report = {
    session_ms: sessionMs,
    median_ms: sorted[Math.floor(sorted.length / 2)],
    p90_ms: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 9 / 10))],
    min_ms: sorted[0],
    runs: args.runs,
    threads: args.threads,
    peak_rss_kib: process.resourceUsage().maxRSS,
    baseline_rss_kib: baselineRss,
  };
  process.stdout.write(JSON.stringify(report) + '\n');
}

main().catch((e) => fail(String(e && e.message ? e.message : e).split('\n')[0]));
