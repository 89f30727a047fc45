// RUN: %hexir-compile %s -o %t.hxb --no-fusion --machine edge --place intermediates=dram --place constants=sram
// RUN: %hexir-dump %t.hxb | FileCheck %s --check-prefix=EDGE
// RUN: not %hexir-compile %s -o %t.hxb --no-fusion --machine h200 --target cuda --place constants=host 2>&1 | FileCheck %s --check-prefix=GPU
// RUN: not %hexir-compile %s -o %t.hxb --no-fusion --machine h200 --place intermediates=device 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: echo '{"name": "island", "processors": [{"name": "cpu", "kind": "host"}, {"name": "dsp", "kind": "cuda"}], "memory_spaces": [{"name": "ram", "visible_to": ["cpu"]}, {"name": "tcm", "visible_to": ["dsp"]}]}' > %t.island.json
// RUN: not %hexir-compile %s -o %t.hxb --no-fusion --machine %t.island.json --place intermediates=tcm 2>&1 | FileCheck %s --check-prefix=NOLINK
// RUN: not %hexir-compile %s -o %t.hxb --machine edge --place intermediates=flash 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not %hexir-compile %s -o %t.hxb --machine h200 --place intermediates=shared 2>&1 | FileCheck %s --check-prefix=WITHIN
// RUN: not %hexir-compile %s -o %t.hxb --place intermediates=dram 2>&1 | FileCheck %s --check-prefix=NOMACHINE
// RUN: not %hexir-compile %s -o %t.hxb --place weights=host 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: echo 'func.func @main(%%x: tensor<16xf32>) -> tensor<16xf32> { %%a = tosa.tanh %%x : (tensor<16xf32>) -> tensor<16xf32>  return %%a : tensor<16xf32> }' > %t.noconst.mlir
// RUN: not %hexir-compile %t.noconst.mlir -o %t.hxb --machine h200 --target cuda --place constants=host 2>&1 | FileCheck %s --check-prefix=EMPTY

// A placement the processor sees: the edge CPU sees both its spaces, so the arena may go to
// DRAM and the constants to SRAM.
// EDGE: memory spaces: 0 sram 1 dram; constants in sram
// EDGE: arena 0: {{[0-9]+}} bytes, align 64, memory space dram

// A placement it does not see is refused at the first dispatch that touches it, with the
// value, both spaces and the transfer the machine file prices.
// GPU: error: {{.*}}dispatch 1 ('c') reads the constant (tensor<16xf32>, 64 B), which --place constants=host put in memory space 'host'; processor 'gpu', which runs its kernel, does not see 'host' (it sees 'device'); it needs a transfer 'host' -> 'device' before this dispatch, 0.010 ms (5.5e+10 bytes/s + 1e-05 s latency) by the machine file, on every run: leave the placement of the constants to the compiler {{.*}}, or --place constants=device
// CPU: error: {{.*}}dispatch 0 ('a') writes the intermediate 'a' (tensor<16xf32>, 64 B), which --place intermediates=device put in memory space 'device'; processor 'cpu', which runs its kernel, does not see 'device' (it sees 'host'); it needs a transfer 'device' -> 'host'
// NOLINK: error: {{.*}}processor 'cpu', which runs its kernel, does not see 'tcm' (it sees 'ram'); the machine file gives no transfer from 'tcm' to a space it sees
// UNKNOWN: error: --place intermediates=flash: no memory space 'flash' in machine 'edge' (it has 'sram', 'dram')
// WITHIN: error: --place intermediates=shared: memory space 'shared' lies within 'device' and holds a kernel's scratch, never intermediates
// NOMACHINE: error: --place intermediates=dram: no memory space 'dram' in target 'host' (it has 'host'; a machine file, --machine, gives others)
// SYNTAX: --place 'weights=host' is not intermediates=SPACE or constants=SPACE
// A placement into a space the processor does not see that holds nothing is refused too: the
// executable would list a space the GPU cannot hold.
// EMPTY: error: --place constants=host: processor 'gpu' does not see memory space 'host', and no kernel of 'main' reads a constant there, so the placement holds nothing: leave it out
func.func @main(%x: tensor<16xf32>) -> tensor<16xf32> {
  %w = arith.constant dense<2.0> : tensor<16xf32>
  %a = tosa.tanh %x : (tensor<16xf32>) -> tensor<16xf32> loc("a")
  %zero = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %c = tosa.mul %a, %w, %zero : (tensor<16xf32>, tensor<16xf32>, tensor<1xi8>) -> tensor<16xf32> loc("c")
  %y = tosa.exp %c : (tensor<16xf32>) -> tensor<16xf32> loc("y")
  return %y : tensor<16xf32>
}
