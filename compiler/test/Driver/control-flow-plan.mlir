// RUN: %hexir-compile %s -o %t.hxb --print-plan --no-fusion | FileCheck %s
// RUN: %hexir-dump %t.hxb | FileCheck %s --check-prefix=DUMP

// A loop of 4 trips (acc += x; rows[trip] = exp(acc)), then an if on a bool input
// (tanh(acc) or x). Steps: 0 the LOOP, 1-2 the body's dispatches, 3 the trip's copies, 4 the
// IF, 5 the then branch's dispatch, 6 its copies, 7 the else branch's copies.
//
// The body's one intermediate (exp's result) is planned once, live within the trip's steps:
// no allocation per trip, one ALLOC in all. The carried value is the caller's output acc
// (returned by the graph), updated in place by the add, which reads it at the same element;
// the scan rows go straight into the output rows, one row per trip; the if's result is
// the output y, written by the then branch's kernel or copied from x by the else branch.
//
// CHECK: memory plan for @main
// CHECK-NEXT: buffer
// CHECK-NEXT: main_loop_dispatch_1_generic 64 0 2 3 -
// CHECK-NEXT: arena 64 bytes

// DUMP: commands (9):
// DUMP-NEXT: 0 ALLOC arena 0
// DUMP-NEXT: 1 COPY Input1[0, +32) -> Output0[0, +32)
// DUMP-NEXT: 2 LOOP 3 commands, at most 4 trips
// DUMP-NEXT: 3 DISPATCH main_loop_dispatch_0_generic
// DUMP-NEXT: in Output0[0, +32)
// DUMP-NEXT: in Input0[0, +32)
// DUMP-NEXT: out Output0[0, +32) (in place of input 0)
// DUMP-NEXT: 4 DISPATCH main_loop_dispatch_1_generic
// DUMP-NEXT: in Output0[0, +32)
// DUMP-NEXT: out Arena0[0, +32)
// DUMP-NEXT: 5 COPY Arena0[0, +32) -> Output1[0, +32) + 32 per trip
// DUMP-NEXT: 6 IF Input2[0, +1): then 1 commands, else 1
// DUMP-NEXT: 7 DISPATCH main_then_dispatch_0_generic
// DUMP-NEXT: in Output0[0, +32)
// DUMP-NEXT: out Output2[0, +32)
// DUMP-NEXT: 8 COPY Input0[0, +32) -> Output2[0, +32)
// DUMP-NOT: ALLOC
func.func @main(%x: tensor<8xf32>, %a: tensor<8xf32>, %c: tensor<i8>) -> (tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>) {
  %r:2 = hexir.loop @main_loop inits(%a) captures(%x) {max_trips = 4 : i64}
      : (tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<4x8xf32>)
  %y = hexir.if %c then @main_then(%r#0) else @main_else(%x) : (tensor<i8>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %r#0, %r#1, %y : tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>
}
func.func private @main_loop(%i: tensor<i64>, %acc: tensor<8xf32>, %x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
    attributes {hexir.body} {
  %s = tosa.add %acc, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %t = tosa.exp %s : (tensor<8xf32>) -> tensor<8xf32>
  return %s, %t : tensor<8xf32>, tensor<8xf32>
}
func.func private @main_then(%v: tensor<8xf32>) -> tensor<8xf32> attributes {hexir.body} {
  %t = tosa.tanh %v : (tensor<8xf32>) -> tensor<8xf32>
  return %t : tensor<8xf32>
}
func.func private @main_else(%v: tensor<8xf32>) -> tensor<8xf32> attributes {hexir.body} {
  return %v : tensor<8xf32>
}
