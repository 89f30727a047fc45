"""ONNX Loop and If cases for op_cases.py, against NumPy loops.

Loops with a constant trip count and scan outputs, a computed condition, a trip count read at run
time, carried values that swap, captures from two levels out, an If inside a Loop, Ifs on a
run-time bool input (both branches, returning an input and a constant), and an If folded at
import. Error cases: what a static plan cannot hold is refused with the reason.
"""
import numpy as np
from onnx import TensorProto as TP, helper, numpy_helper

F32, I64, BOOL = TP.FLOAT, TP.INT64, TP.BOOL


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def body(nodes, inputs, outputs, inits=None, name="body"):
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in (inits or {}).items()]
    return helper.make_graph(nodes, name, inputs, outputs, initializer=inits)


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, **attrs)


def add_cases(cases, errors, model, rnd):
    def case(fn):
        cases[fn.__name__] = fn
        return fn

    @case
    def loop_scan_trip_number():
        # acc = acc * 0.5 + x * w + trip; rows[trip] = relu(acc). x is captured from the graph,
        # w is the graph's initializer, 0.5 the body's.
        x, a0, w = rnd(8), rnd(8), rnd(8)
        g = body([node("Mul", ["acc_in", "half"], ["h"]), node("Mul", ["x", "w"], ["xw"]),
                  node("Add", ["h", "xw"], ["s"]), node("Cast", ["i"], ["fi"], to=F32),
                  node("Add", ["s", "fi"], ["acc_out"]), node("Identity", ["cond_in"], ["cond_out"]),
                  node("Relu", ["acc_out"], ["row"])],
                 [vi("i", I64, []), vi("cond_in", BOOL, []), vi("acc_in", F32, [8])],
                 [vi("cond_out", BOOL, []), vi("acc_out", F32, [8]), vi("row", F32, [8])],
                 {"half": np.float32(0.5)})
        acc, rows = a0.copy(), []
        for i in range(4):
            acc = acc * np.float32(0.5) + x * w + np.float32(i)
            rows.append(np.maximum(acc, 0))
        outs = {"acc": acc, "rows": np.stack(rows)}
        m = model([node("Loop", ["M", "", "a0"], ["acc", "rows"], body=g)], {"x": x, "a0": a0}, outs,
                  {"M": np.int64(4), "w": w})
        return m, {"x": x, "a0": a0}, outs

    @case
    def loop_computed_condition():
        # while sum(|acc|) < 20 (at most 50 trips): acc = acc * 1.5 + 0.25; count += 1. The
        # condition starts true (a constant) and the body computes the next one.
        x = rnd(4)
        g = body([node("Mul", ["acc_in", "k"], ["m"]), node("Add", ["m", "q"], ["acc_out"]),
                  node("Add", ["count_in", "one"], ["count_out"]), node("Abs", ["acc_out"], ["a"]),
                  node("ReduceSum", ["a"], ["s"], keepdims=0), node("Less", ["s", "limit"], ["cond_out"])],
                 [vi("i", I64, []), vi("cond_in", BOOL, []), vi("acc_in", F32, [4]), vi("count_in", I64, [])],
                 [vi("cond_out", BOOL, []), vi("acc_out", F32, [4]), vi("count_out", I64, [])],
                 {"k": np.float32(1.5), "q": np.float32(0.25), "one": np.int64(1), "limit": np.float32(20)})
        acc, count, go = x.copy(), 0, True
        while go and count < 50:
            acc = acc * np.float32(1.5) + np.float32(0.25)
            count += 1
            go = np.abs(acc).sum(dtype=np.float32) < 20
        outs = {"acc": acc, "count": np.int64(count)}
        m = model([node("Loop", ["M", "t", "x", "zero"], ["acc", "count"], body=g)], {"x": x}, outs,
                  {"M": np.int64(50), "t": np.bool_(True), "zero": np.int64(0)})
        return m, {"x": x}, outs

    @case
    def loop_scan_of_carried_and_input_condition():
        # rows[trip] is the carried value as the trip found it (not as it leaves it); the first
        # condition is a run-time bool input of shape [1], the next ones computed (count < 3);
        # a condition left out starts true.
        x = rnd(5)
        g = body([node("Add", ["x_in", "one_f"], ["x_out"]),
                  node("Add", ["n_in", "one"], ["n_out"]), node("Less", ["n_out", "three"], ["cond_out"])],
                 [vi("i", I64, []), vi("cond_in", BOOL, [1]), vi("x_in", F32, [5]), vi("n_in", I64, [])],
                 [vi("cond_out", BOOL, []), vi("x_out", F32, [5]), vi("n_out", I64, [])],
                 {"one_f": np.float32(1), "one": np.int64(1), "three": np.int64(3)})
        go = np.array([True])
        rows = np.stack([x + np.float32(t) for t in range(3)])
        outs = {"xf": x + np.float32(3), "n": np.int64(3), "rows": rows}
        # A scan output needs a static trip count: M = 3 and the condition (true for 3 trips)
        # cannot be combined with scans, so the rows come from a second Loop without one.
        g2 = body([node("Add", ["y_in", "one_f"], ["y_out"]), node("Identity", ["y_in"], ["row"]),
                   node("Identity", ["c_in"], ["c_out"])],
                  [vi("j", I64, []), vi("c_in", BOOL, []), vi("y_in", F32, [5])],
                  [vi("c_out", BOOL, []), vi("y_out", F32, [5]), vi("row", F32, [5])],
                  {"one_f": np.float32(1)}, name="rows")
        # And with the condition omitted (it starts true) under a bound of 10 trips.
        outs.update({"xf2": outs["xf"], "n2": outs["n"]})
        nodes = [node("Loop", ["", "go", "x", "zero"], ["xf", "n"], body=g),
                 node("Loop", ["M", "", "x"], ["unused", "rows"], body=g2),
                 node("Loop", ["ten", "", "x", "zero"], ["xf2", "n2"], body=g)]
        m = model(nodes, {"x": x, "go": go}, outs, {"zero": np.int64(0), "M": np.int64(3), "ten": np.int64(10)})
        return m, {"x": x, "go": go}, outs

    @case
    def loop_runtime_count_swap():
        # (a, b) = (b, a + b), n times, n an input: the new a is the old b (a swap of carried values).
        a, b, n = rnd(3), rnd(3), np.int64(6)
        g = body([node("Identity", ["b_in"], ["a_out"]), node("Add", ["a_in", "b_in"], ["b_out"]),
                  node("Identity", ["cond_in"], ["cond_out"])],
                 [vi("i", I64, []), vi("cond_in", BOOL, []), vi("a_in", F32, [3]), vi("b_in", F32, [3])],
                 [vi("cond_out", BOOL, []), vi("a_out", F32, [3]), vi("b_out", F32, [3])])
        ra, rb = a.copy(), b.copy()
        for _ in range(n):
            ra, rb = rb, ra + rb
        outs = {"fa": ra, "fb": rb}
        m = model([node("Loop", ["n", "", "a", "b"], ["fa", "fb"], body=g)], {"n": n, "a": a, "b": b}, outs)
        return m, {"n": n, "a": a, "b": b}, outs

    @case
    def loop_nested_if_and_loop():
        # 5 trips: acc = (acc * 2 if trip is even else acc - 1), then 3 inner trips of
        # acc += 0.1 * x (x captured from two levels out); rows[trip] = acc. Whether the trip is
        # even is a carried bool the body negates.
        x, a0 = rnd(4), rnd(4)
        inner = body([node("Mul", ["x", "tenth"], ["xt"]), node("Add", ["c_in", "xt"], ["c_out"]),
                      node("Identity", ["ci"], ["co"])],
                     [vi("j", I64, []), vi("ci", BOOL, []), vi("c_in", F32, [4])],
                     [vi("co", BOOL, []), vi("c_out", F32, [4])], {"tenth": np.float32(0.1)}, name="inner")
        then_b = body([node("Mul", ["acc_in", "two"], ["t_out"])], [], [vi("t_out", F32, [4])],
                      {"two": np.float32(2)}, name="then")
        else_b = body([node("Sub", ["acc_in", "one_f"], ["e_out"])], [], [vi("e_out", F32, [4])],
                      {"one_f": np.float32(1)}, name="else")
        outer = body([node("If", ["even"], ["b"], then_branch=then_b, else_branch=else_b),
                      node("Not", ["even"], ["odd"]),
                      node("Loop", ["three", "", "b"], ["acc_out"], body=inner),
                      node("Identity", ["cond_in"], ["cond_out"]), node("Identity", ["acc_out"], ["row"])],
                     [vi("i", I64, []), vi("cond_in", BOOL, []), vi("acc_in", F32, [4]), vi("even", BOOL, [])],
                     [vi("cond_out", BOOL, []), vi("acc_out", F32, [4]), vi("odd", BOOL, []), vi("row", F32, [4])],
                     {"three": np.int64(3)}, name="outer")
        acc, rows = a0.copy(), []
        for i in range(5):
            acc = acc * np.float32(2) if i % 2 == 0 else acc - np.float32(1)
            for _ in range(3):
                acc = acc + x * np.float32(0.1)
            rows.append(acc)
        outs = {"acc": acc, "rows": np.stack(rows)}
        m = model([node("Loop", ["M", "", "a0", "yes"], ["acc", "parity", "rows"], body=outer)], {"x": x, "a0": a0},
                  outs, {"M": np.int64(5), "yes": np.bool_(True)})
        return m, {"x": x, "a0": a0}, outs

    def if_case(flag):
        # then: (relu(x * w), x); else: (-x, a constant of the else graph). x * w is a graph value.
        x, w, k = rnd(2, 3), rnd(2, 3), rnd(2, 3)
        then_b = body([node("Relu", ["xw"], ["t1"]), node("Identity", ["x"], ["t2"])], [],
                      [vi("t1", F32, [2, 3]), vi("t2", F32, [2, 3])], name="then")
        else_b = body([node("Neg", ["x"], ["e1"]), node("Identity", ["k"], ["e2"])], [],
                      [vi("e1", F32, [2, 3]), vi("e2", F32, [2, 3])], {"k": k}, name="else")
        c = np.bool_(flag)
        outs = {"y1": np.maximum(x * w, 0) if flag else -x, "y2": x if flag else k}
        m = model([node("Mul", ["x", "w"], ["xw"]), node("If", ["c"], ["y1", "y2"], then_branch=then_b,
                                                         else_branch=else_b)],
                  {"c": c, "x": x}, outs, {"w": w})
        return m, {"c": c, "x": x}, outs

    cases["if_runtime_true"] = lambda: if_case(True)
    cases["if_runtime_false"] = lambda: if_case(False)

    @case
    def if_nested_deep():
        # If in If in ... 31 bodies deep on a run-time bool (about as deep as protobuf parses a
        # model): every level is a body of the one around it, and each captures x from the graph.
        x, c = rnd(2), np.bool_(True)
        g = body([node("Neg", ["x"], ["y0"])], [], [vi("y0", F32, [2])], name="leaf")
        for d in range(30):
            other = body([node("Identity", ["x"], [f"z{d}"])], [], [vi(f"z{d}", F32, [2])], name=f"e{d}")
            g = body([node("If", ["c"], [f"y{d + 1}"], then_branch=g, else_branch=other)], [],
                     [vi(f"y{d + 1}", F32, [2])], name=f"t{d}")
        other = body([node("Identity", ["x"], ["z"])], [], [vi("z", F32, [2])], name="e")
        outs = {"y": -x}
        m = model([node("If", ["c"], ["y"], then_branch=g, else_branch=other)], {"c": c, "x": x}, outs)
        return m, {"c": c, "x": x}, outs

    @case
    def if_known_condition_inlined():
        # A condition computed from constants: the else branch is the graph.
        x = rnd(5)
        then_b = body([node("Neg", ["x"], ["t"])], [], [vi("t", F32, [5])], name="then")
        else_b = body([node("Sigmoid", ["x"], ["e"])], [], [vi("e", F32, [5])], name="else")
        outs = {"y": 1 / (1 + np.exp(-x))}
        m = model([node("Less", ["two", "one"], ["c"]), node("If", ["c"], ["y"], then_branch=then_b,
                                                             else_branch=else_b)],
                  {"x": x}, outs, {"one": np.float32(1), "two": np.float32(2)})
        return m, {"x": x}, outs

    # Errors: what a static plan cannot hold.
    def scan_with_condition():
        x = rnd(4)
        g = body([node("Add", ["acc_in", "acc_in"], ["acc_out"]), node("ReduceSum", ["acc_out"], ["s"], keepdims=0),
                  node("Less", ["s", "limit"], ["cond_out"]), node("Identity", ["acc_out"], ["row"])],
                 [vi("i", I64, []), vi("cond_in", BOOL, []), vi("acc_in", F32, [4])],
                 [vi("cond_out", BOOL, []), vi("acc_out", F32, [4]), vi("row", F32, [4])], {"limit": np.float32(9)})
        return model([node("Loop", ["M", "", "x"], ["acc", "rows"], body=g)], {"x": x},
                     {"acc": x, "rows": rnd(3, 4)}, {"M": np.int64(3)}), {}

    def growing_carried():
        x = rnd(2)
        g = body([node("Concat", ["acc_in", "acc_in"], ["acc_out"], axis=0), node("Identity", ["cond_in"], ["cond_out"])],
                 [vi("i", I64, []), vi("cond_in", BOOL, []), vi("acc_in", F32, [2])],
                 [vi("cond_out", BOOL, []), vi("acc_out", F32, [4])])
        return model([node("Loop", ["M", "", "x"], ["acc"], body=g)], {"x": x}, {"acc": rnd(8)},
                     {"M": np.int64(2)}), {}

    def branch_shapes():
        x, c = rnd(2, 3), np.bool_(True)
        then_b = body([node("Relu", ["x"], ["t"])], [], [vi("t", F32, [2, 3])], name="then")
        else_b = body([node("ReduceSum", ["x"], ["e"], keepdims=0)], [], [vi("e", F32, [])], name="else")
        return model([node("If", ["c"], ["y"], then_branch=then_b, else_branch=else_b)], {"c": c, "x": x},
                     {"y": x}), {}

    errors["loop_scan_computed_condition"] = lambda: (
        *scan_with_condition(), "node 'n0' (Loop, domain ai.onnx, opset 13): has 1 scan outputs whose length is "
        "known only at run time (its condition is computed)")
    errors["loop_carried_grows"] = lambda: (
        *growing_carried(), "node 'n0' (Loop, domain ai.onnx, opset 13): carried value 0 ('acc_out') changes from 2 "
        "to 4 across a trip; Hexir plans static shapes")
    errors["if_branch_shapes"] = lambda: (
        *branch_shapes(), "node 'n0' (If, domain ai.onnx, opset 13): output 0 is 2x3 from the then branch and scalar "
        "from the else branch")
