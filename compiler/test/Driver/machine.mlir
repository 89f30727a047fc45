// RUN: %hexir-compile %s -o %t.hxb --no-fusion --machine edge --print-plan | FileCheck %s
// RUN: %hexir-dump %t.hxb | FileCheck %s --check-prefix=DUMP
// RUN: not %hexir-compile %s -o %t.hxb --no-fusion --machine edge --memory-budget sram=400 2>&1 | FileCheck %s --check-prefix=SRAM
// RUN: not %hexir-compile %s -o %t.hxb --machine tpu-pod 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: echo '{"name": "x", "processors": [{"name": "cpu", "kind": "host"}], "memory_spaces": [{"name": "ram", "visible_to": ["gpu"]}]}' > %t.bad.json
// RUN: not %hexir-compile %s -o %t.hxb --machine %t.bad.json 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: echo '{"name": "x", "processors": [{"name": "gpu", "kind": "cuda"}], "memory_spaces": [{"name": "hbm", "visible_to": ["gpu"]}]}' > %t.gpu.json
// RUN: not %hexir-compile %s -o %t.hxb --machine %t.gpu.json 2>&1 | FileCheck %s --check-prefix=NOHOST
// RUN: echo '{"name": "x",' > %t.syntax.json
// RUN: not %hexir-compile %s -o %t.hxb --machine %t.syntax.json 2>&1 | FileCheck %s --check-prefix=SYNTAX

// The edge preset: 1 MiB of SRAM (intermediates) beside 16 MiB of DRAM (constants). The
// chain's 512-byte arena fits its SRAM.
// CHECK: arena 512 bytes; lower bound 512 bytes
// CHECK: capacity 1048576 bytes for the arena
// DUMP: target: host; memory spaces: 0 sram 1 dram; constants in dram
// DUMP: arena 0: 512 bytes, align 64, memory space sram

// A budget is a capacity of one of the machine's spaces. `a` is idle at dispatch 1 and is
// recomputed before dispatch 2, but there the mul reads both of its operands.
// SRAM: error: the arena in memory space 'sram' peaks at 512 bytes at dispatch 2 ('c'), over its capacity of 400 bytes; live there: {{.*}} (after moving or recomputing 1 value); each of them is read or written by that dispatch, so none can be moved out or recomputed; the smallest plan found needs 512 bytes

// UNKNOWN: error: unknown machine 'tpu-pod' (presets: host, h200, edge; or give a path to a machine file)
// BAD: memory space 0 ('ram'): "visible_to" names 'gpu', which is not a processor of the machine
// NOHOST: error: machine 'x' has no host processor for target 'host'
// SYNTAX: not valid JSON
func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {
  %a = tosa.tanh %x : (tensor<64xf32>) -> tensor<64xf32> loc("a")
  %b = tosa.exp %x : (tensor<64xf32>) -> tensor<64xf32> loc("b")
  %zero = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %c = tosa.mul %a, %b, %zero : (tensor<64xf32>, tensor<64xf32>, tensor<1xi8>) -> tensor<64xf32> loc("c")
  %y = tosa.tanh %c : (tensor<64xf32>) -> tensor<64xf32> loc("y")
  return %y : tensor<64xf32>
}
