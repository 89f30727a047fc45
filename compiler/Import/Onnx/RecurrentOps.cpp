//===- RecurrentOps.cpp - ONNX RNN, GRU and LSTM --------------------------===//
//
// Unrolled over the (static) sequence: the input projection of every step is one matmul up
// front, then each step is its recurrent matmul and the gates' elementwise ops, which dispatch
// formation fuses. Unrolling, rather than a VM loop, keeps every step's kernels static and
// fusable and the memory plan exact (each step's state is a value the planner packs); its cost is
// compile time and executable size linear in the sequence length, bounded by kMaxSteps.
// A reverse direction runs forward over the sequence reversed per batch row (ReverseSequence's
// order, honouring sequence_lens) and reverses its outputs back.
//
//===----------------------------------------------------------------------===//
#include "Import/Onnx/Emit.h"
#include "Import/Onnx/OpRegistry.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

namespace hexir::onnx_import {
namespace {

constexpr int64_t kMaxSteps = 1024;

enum class Cell { kRnn, kGru, kLstm };

struct Activation {
  std::string name;
  double alpha = 0, beta = 0;
};

bool knownActivation(const std::string &n) {
  for (const char *k : {"Sigmoid", "Tanh", "Relu", "Affine", "LeakyRelu", "ThresholdedRelu", "ScaledTanh",
                        "HardSigmoid", "Elu", "Softsign", "Softplus"})
    if (n == k)
      return true;
  return false;
}

Value activate(OpBuilder &b, Location l, Value x, const Activation &a) {
  auto c = [&](double v) { return floatConst(b, l, v); };
  auto sigmoid = [&](Value v) -> Value {
    return arith::DivFOp::create(b, l, c(1.0),
                                 arith::AddFOp::create(b, l, c(1.0), math::ExpOp::create(b, l, arith::NegFOp::create(b, l, v))));
  };
  const std::string &n = a.name;
  if (n == "Sigmoid")
    return sigmoid(x);
  if (n == "Tanh")
    return math::TanhOp::create(b, l, x);
  if (n == "Relu")
    return arith::MaximumFOp::create(b, l, x, c(0.0));
  if (n == "Affine")
    return arith::AddFOp::create(b, l, arith::MulFOp::create(b, l, c(a.alpha), x), c(a.beta));
  if (n == "LeakyRelu")
    return arith::SelectOp::create(b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, x, c(0.0)), x,
                                   arith::MulFOp::create(b, l, c(a.alpha), x));
  if (n == "ThresholdedRelu")
    return arith::SelectOp::create(b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGT, x, c(a.alpha)), x,
                                   c(0.0));
  if (n == "ScaledTanh")
    return arith::MulFOp::create(b, l, c(a.alpha), math::TanhOp::create(b, l, arith::MulFOp::create(b, l, c(a.beta), x)));
  if (n == "HardSigmoid")
    return arith::MinimumFOp::create(
        b, l, c(1.0),
        arith::MaximumFOp::create(b, l, c(0.0), arith::AddFOp::create(b, l, arith::MulFOp::create(b, l, c(a.alpha), x), c(a.beta))));
  if (n == "Elu")
    return arith::SelectOp::create(b, l, arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, x, c(0.0)), x,
                                   arith::MulFOp::create(b, l, c(a.alpha), math::ExpM1Op::create(b, l, x)));
  if (n == "Softsign")
    return arith::DivFOp::create(b, l, x, arith::AddFOp::create(b, l, c(1.0), math::AbsFOp::create(b, l, x)));
  // Softplus: max(x, 0) + log1p(exp(-|x|)), no overflow.
  return arith::AddFOp::create(
      b, l, arith::MaximumFOp::create(b, l, x, c(0.0)),
      math::Log1pOp::create(b, l, math::ExpOp::create(b, l, arith::NegFOp::create(b, l, math::AbsFOp::create(b, l, x)))));
}

// The rows [offset, offset + size) of `v` along `axis`, the other dims whole (a view).
Value slab(OpBuilder &b, Location l, Value v, int64_t axis, int64_t offset, int64_t size) {
  auto t = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> offs(t.getRank(), 0), sizes(t.getShape()), strides(t.getRank(), 1);
  offs[axis] = offset;
  sizes[axis] = size;
  MLIRContext *mc = b.getContext();
  return tensor::ExtractSliceOp::create(b, l, v, getAsIndexOpFoldResult(mc, offs), getAsIndexOpFoldResult(mc, sizes),
                                        getAsIndexOpFoldResult(mc, strides));
}

// a [M, K] times w [N, K] transposed: [M, N].
Value matmulNT(OpBuilder &b, Location l, Value a, Value w) {
  MLIRContext *mc = b.getContext();
  int64_t m = cast<RankedTensorType>(a.getType()).getDimSize(0), n = cast<RankedTensorType>(w.getType()).getDimSize(0);
  Value empty = tensor::EmptyOp::create(b, l, ArrayRef<int64_t>{m, n}, b.getF32Type());
  Value init = linalg::FillOp::create(b, l, ValueRange{floatConst(b, l, 0.0)}, ValueRange{empty}).getResult(0);
  auto d = [&](unsigned i) { return getAffineDimExpr(i, mc); };
  SmallVector<AffineMap> maps = {AffineMap::get(3, 0, {d(0), d(2)}, mc), AffineMap::get(3, 0, {d(1), d(2)}, mc),
                                 AffineMap::get(3, 0, {d(0), d(1)}, mc)};
  SmallVector<utils::IteratorType> it = {utils::IteratorType::parallel, utils::IteratorType::parallel,
                                         utils::IteratorType::reduction};
  return linalg::GenericOp::create(b, l, TypeRange{init.getType()}, ValueRange{a, w}, ValueRange{init}, maps, it,
                                   [](OpBuilder &nb, Location nl, ValueRange args) { yieldMultiplyAccumulate(nb, nl, args); })
      .getResult(0);
}

// An elementwise f32 op over broadcast values.
FailureOr<Value> ew(NodeContext &ctx, ArrayRef<Value> values, const ScalarBody &body) {
  std::vector<OnnxValue> held;
  for (Value v : values)
    held.push_back(OnnxValue::ofValue(v, DType::kFloat));
  std::vector<const OnnxValue *> in;
  for (const OnnxValue &v : held)
    in.push_back(&v);
  auto r = elementwise(ctx, in, DType::kFloat, body);
  if (failed(r))
    return failure();
  return r->value;
}

// `v` [S, B, ...] with each batch row's first lens[b] steps reversed (all S without lens).
Value reverseSteps(NodeContext &ctx, Value v, Value lens) {
  auto t = cast<RankedTensorType>(v.getType());
  std::vector<int64_t> shape(t.getShape().begin(), t.getShape().end());
  int64_t steps = shape[0];
  return generate(ctx, shape, DType::kFloat, [&](OpBuilder &b, Location l, ValueRange at) -> Value {
    Value len = arith::ConstantIndexOp::create(b, l, steps);
    if (lens) {
      len = arith::IndexCastOp::create(b, l, b.getIndexType(), tensor::ExtractOp::create(b, l, lens, ValueRange{at[1]}));
      len = arith::MinSIOp::create(b, l, arith::MaxSIOp::create(b, l, len, arith::ConstantIndexOp::create(b, l, 0)),
                                   arith::ConstantIndexOp::create(b, l, steps));
    }
    Value inside = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, at[0], len);
    Value mirror = arith::SubIOp::create(b, l, arith::SubIOp::create(b, l, len, arith::ConstantIndexOp::create(b, l, 1)), at[0]);
    SmallVector<Value> coords(at.begin(), at.end());
    coords[0] = arith::SelectOp::create(b, l, inside, mirror, at[0]);
    return tensor::ExtractOp::create(b, l, v, coords);
  });
}

LogicalResult convertRecurrent(NodeContext &ctx, Cell cell) {
  const OnnxValue &x = ctx.input(0), &w = ctx.input(1), &r = ctx.input(2);
  if (failed(ctx.requireFloatInputs({0, 1, 2, 3, 5, 6, 7})))
    return failure();
  int64_t gates = cell == Cell::kLstm ? 4 : cell == Cell::kGru ? 3 : 1;
  std::string direction = ctx.attrString("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    return ctx.error() << "direction '" << direction << "' is not forward, reverse or bidirectional";
  int64_t dirs = direction == "bidirectional" ? 2 : 1;
  int64_t layout = ctx.attrInt("layout", 0);
  if (x.rank() != 3 || (layout != 0 && layout != 1))
    return ctx.error() << "X must have rank 3 and layout be 0 or 1";
  int64_t steps = x.shape[layout == 0 ? 0 : 1], batch = x.shape[layout == 0 ? 1 : 0], inputSize = x.shape[2];
  int64_t hidden = ctx.attrInt("hidden_size", r.rank() == 3 ? r.shape[2] : 0);
  if (r.rank() != 3 || hidden != r.shape[2] || hidden > (int64_t{1} << 40))
    return ctx.error() << "hidden_size " << hidden << " must be R's last dimension (R has shape "
                       << shapeString(r.shape) << ")";
  if (w.shape != std::vector<int64_t>{dirs, gates * hidden, inputSize} ||
      r.shape != std::vector<int64_t>{dirs, gates * hidden, hidden})
    return ctx.error() << "W " << shapeString(w.shape) << " and R " << shapeString(r.shape) << " must be ["
                       << dirs << ", " << gates * hidden << ", " << inputSize << "] and [" << dirs << ", "
                       << gates * hidden << ", " << hidden << "]";
  if (steps < 1 || steps > kMaxSteps)
    return ctx.error() << "the sequence has " << steps << " steps; Hexir unrolls recurrent ops over at most "
                       << kMaxSteps;
  if (hidden < 1 || batch < 1)
    return ctx.error() << "hidden_size and the batch must be at least 1";
  auto expect = [&](size_t i, std::vector<int64_t> shape, const char *what) -> LogicalResult {
    if (ctx.hasInput(i) && ctx.input(i).shape != shape)
      return ctx.error() << what << " (input " << i << ") must have shape " << shapeString(shape);
    return success();
  };
  if (failed(expect(3, {dirs, 2 * gates * hidden}, "B")) || failed(expect(5, {dirs, batch, hidden}, "initial_h")))
    return failure();
  if (cell == Cell::kLstm && (failed(expect(6, {dirs, batch, hidden}, "initial_c")) ||
                              failed(expect(7, {dirs, 3 * hidden}, "P"))))
    return failure();
  if (ctx.hasInput(4) && (ctx.input(4).shape != std::vector<int64_t>{batch} || isFloat(ctx.input(4).type)))
    return ctx.error() << "sequence_lens (input 4) must be " << batch << " integers";
  // Activations: per direction, defaults by cell; alpha and beta are consumed in order by those
  // that take them.
  std::vector<std::string> names;
  if (const auto *a = ctx.attr("activations"))
    for (const std::string &s : a->strings())
      names.push_back(s);
  size_t perDir = cell == Cell::kLstm ? 3 : cell == Cell::kGru ? 2 : 1;
  if (names.empty())
    for (int64_t d = 0; d < dirs; ++d)
      for (const char *n : cell == Cell::kLstm ? std::vector<const char *>{"Sigmoid", "Tanh", "Tanh"}
                           : cell == Cell::kGru ? std::vector<const char *>{"Sigmoid", "Tanh"}
                                                : std::vector<const char *>{"Tanh"})
        names.push_back(n);
  if (names.size() != perDir * dirs)
    return ctx.error() << "activations lists " << names.size() << " functions; " << perDir * dirs << " expected";
  std::vector<float> alphas, betas;
  if (const auto *a = ctx.attr("activation_alpha"))
    alphas.assign(a->floats().begin(), a->floats().end());
  if (const auto *a = ctx.attr("activation_beta"))
    betas.assign(a->floats().begin(), a->floats().end());
  std::vector<Activation> acts;
  size_t ai = 0, bi = 0;
  for (const std::string &n : names) {
    if (!knownActivation(n))
      return ctx.error() << "activation '" << n << "' is not supported";
    Activation act{n};
    bool takesAlpha = n == "Affine" || n == "LeakyRelu" || n == "ThresholdedRelu" || n == "ScaledTanh" ||
                      n == "HardSigmoid" || n == "Elu";
    bool takesBeta = n == "Affine" || n == "ScaledTanh" || n == "HardSigmoid";
    double defAlpha = n == "LeakyRelu" ? 0.01 : n == "HardSigmoid" ? 0.2 : 1.0, defBeta = n == "HardSigmoid" ? 0.5 : 0.0;
    act.alpha = takesAlpha ? (ai < alphas.size() ? alphas[ai++] : defAlpha) : 0;
    act.beta = takesBeta ? (bi < betas.size() ? betas[bi++] : defBeta) : 0;
    acts.push_back(act);
  }
  double clip = ctx.attrFloat("clip", 0.0f);
  bool inputForget = ctx.attrInt("input_forget", 0) != 0, linearBeforeReset = ctx.attrInt("linear_before_reset", 0) != 0;

  OpBuilder &b = ctx.b;
  Location l = ctx.loc;
  Value xs = materialize(ctx, x);
  if (layout == 1)
    xs = transposeValue(b, l, xs, {1, 0, 2});  // [S, B, I]
  Value lens = ctx.hasInput(4) ? materialize(ctx, ctx.input(4)) : Value();
  Value wv = materialize(ctx, w), rv = materialize(ctx, r);
  Value bv = ctx.hasInput(3) ? materialize(ctx, ctx.input(3)) : Value();
  Value pv = cell == Cell::kLstm && ctx.hasInput(7) ? materialize(ctx, ctx.input(7)) : Value();
  auto squeeze0 = [&](Value v, std::vector<int64_t> shape) { return reshapeView(b, l, v, shape); };
  auto zeros = [&](std::vector<int64_t> shape) {
    Value empty = tensor::EmptyOp::create(b, l, shape, b.getF32Type());
    return linalg::FillOp::create(b, l, ValueRange{floatConst(b, l, 0.0)}, ValueRange{empty}).getResult(0);
  };
  auto clipped = [clip](OpBuilder &nb, Location nl, Value v) -> Value {
    if (clip <= 0)
      return v;
    return arith::MinimumFOp::create(nb, nl, arith::MaximumFOp::create(nb, nl, v, floatConst(nb, nl, -clip)),
                                     floatConst(nb, nl, clip));
  };
  int64_t gh = gates * hidden;
  std::vector<Value> dirY, dirH, dirC;
  for (int64_t d = 0; d < dirs; ++d) {
    bool reverse = direction == "reverse" || d == 1;
    Value wd = squeeze0(slab(b, l, wv, 0, d, 1), {gh, inputSize});
    Value rd = squeeze0(slab(b, l, rv, 0, d, 1), {gh, hidden});
    Value seq = reverse ? reverseSteps(ctx, xs, lens) : xs;
    // Every step's input projection at once: [S*B, I] x [G*H, I]^T, plus the input bias.
    Value xw = matmulNT(b, l, reshapeView(b, l, seq, {steps * batch, inputSize}), wd);
    Value wb, rb;
    if (bv) {
      Value bd = squeeze0(slab(b, l, bv, 0, d, 1), {2 * gh});
      wb = slab(b, l, bd, 0, 0, gh);
      rb = slab(b, l, bd, 0, gh, gh);
    } else {
      wb = rb = zeros({gh});
    }
    auto addB = ew(ctx, {xw, wb}, [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
      return arith::AddFOp::create(nb, nl, a[0], a[1]);
    });
    if (failed(addB))
      return failure();
    xw = reshapeView(b, l, *addB, {steps, batch, gh});
    Value h = ctx.hasInput(5) ? squeeze0(slab(b, l, materialize(ctx, ctx.input(5)), 0, d, 1), {batch, hidden})
                              : zeros({batch, hidden});
    Value c = cell == Cell::kLstm && ctx.hasInput(6)
                  ? squeeze0(slab(b, l, materialize(ctx, ctx.input(6)), 0, d, 1), {batch, hidden})
                  : zeros({batch, hidden});
    Value pi, po, pf;
    if (pv) {
      Value pd = squeeze0(slab(b, l, pv, 0, d, 1), {3 * hidden});
      pi = slab(b, l, pd, 0, 0, hidden);
      po = slab(b, l, pd, 0, hidden, hidden);
      pf = slab(b, l, pd, 0, 2 * hidden, hidden);
    } else {
      pi = po = pf = zeros({hidden});
    }
    const Activation *fAct = &acts[d * perDir], *gAct = perDir > 1 ? &acts[d * perDir + 1] : nullptr,
                     *hAct = perDir > 2 ? &acts[d * perDir + 2] : nullptr;
    std::vector<Value> ys;
    for (int64_t t = 0; t < steps; ++t) {
      Value xt = reshapeView(b, l, slab(b, l, xw, 0, t, 1), {batch, gh});
      Value hr = matmulNT(b, l, h, rd);
      Value hNew, cNew;
      if (cell == Cell::kRnn) {
        auto v = ew(ctx, {xt, hr, rb}, [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          return activate(nb, nl, clipped(nb, nl, arith::AddFOp::create(nb, nl, arith::AddFOp::create(nb, nl, a[0], a[1]), a[2])), *fAct);
        });
        if (failed(v))
          return failure();
        hNew = *v;
      } else if (cell == Cell::kLstm) {
        auto gate = [&](int64_t k) { return slab(b, l, xt, 1, k * hidden, hidden); };
        auto rgate = [&](int64_t k) { return slab(b, l, hr, 1, k * hidden, hidden); };
        auto bgate = [&](int64_t k) { return slab(b, l, rb, 0, k * hidden, hidden); };
        // Gates i, o, f, c; C' = f C + i g(c); H' = o h(C'), with peepholes on i, f (C) and o (C').
        auto cv = ew(ctx, {gate(0), rgate(0), bgate(0), gate(2), rgate(2), bgate(2), gate(3), rgate(3), bgate(3), c, pi, pf},
                     [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                       auto sum3 = [&](Value p, Value q, Value s) {
                         return arith::AddFOp::create(nb, nl, arith::AddFOp::create(nb, nl, p, q), s);
                       };
                       Value iPre = arith::AddFOp::create(nb, nl, sum3(a[0], a[1], a[2]), arith::MulFOp::create(nb, nl, a[10], a[9]));
                       Value i = activate(nb, nl, clipped(nb, nl, iPre), *fAct);
                       Value f;
                       if (inputForget) {
                         f = arith::SubFOp::create(nb, nl, floatConst(nb, nl, 1.0), i);
                       } else {
                         Value fPre = arith::AddFOp::create(nb, nl, sum3(a[3], a[4], a[5]), arith::MulFOp::create(nb, nl, a[11], a[9]));
                         f = activate(nb, nl, clipped(nb, nl, fPre), *fAct);
                       }
                       Value g = activate(nb, nl, clipped(nb, nl, sum3(a[6], a[7], a[8])), *gAct);
                       return arith::AddFOp::create(nb, nl, arith::MulFOp::create(nb, nl, f, a[9]), arith::MulFOp::create(nb, nl, i, g));
                     });
        if (failed(cv))
          return failure();
        cNew = *cv;
        auto hv = ew(ctx, {gate(1), rgate(1), bgate(1), cNew, po}, [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          Value oPre = arith::AddFOp::create(nb, nl, arith::AddFOp::create(nb, nl, arith::AddFOp::create(nb, nl, a[0], a[1]), a[2]),
                                             arith::MulFOp::create(nb, nl, a[4], a[3]));
          Value o = activate(nb, nl, clipped(nb, nl, oPre), *fAct);
          return arith::MulFOp::create(nb, nl, o, activate(nb, nl, a[3], *hAct));
        });
        if (failed(hv))
          return failure();
        hNew = *hv;
      } else {
        // GRU: z, r gates; h~ = g(x Wh + (r * H) Rh^T + Rbh), or with linear_before_reset
        // g(x Wh + r * (H Rh^T + Rbh)); H' = (1 - z) h~ + z H.
        auto gate = [&](int64_t k) { return slab(b, l, xt, 1, k * hidden, hidden); };
        auto rgate = [&](int64_t k) { return slab(b, l, hr, 1, k * hidden, hidden); };
        auto bgate = [&](int64_t k) { return slab(b, l, rb, 0, k * hidden, hidden); };
        auto gateOf = [&](int64_t k) {
          return ew(ctx, {gate(k), rgate(k), bgate(k)}, [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
            return activate(nb, nl, clipped(nb, nl, arith::AddFOp::create(nb, nl, arith::AddFOp::create(nb, nl, a[0], a[1]), a[2])),
                            *fAct);
          });
        };
        auto z = gateOf(0), rr = gateOf(1);
        if (failed(z) || failed(rr))
          return failure();
        Value candidate;
        if (linearBeforeReset) {
          auto v = ew(ctx, {gate(2), *rr, rgate(2), bgate(2)}, [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
            Value inner = arith::AddFOp::create(nb, nl, a[2], a[3]);
            return activate(nb, nl, clipped(nb, nl, arith::AddFOp::create(nb, nl, a[0], arith::MulFOp::create(nb, nl, a[1], inner))),
                            *gAct);
          });
          if (failed(v))
            return failure();
          candidate = *v;
        } else {
          auto rh = ew(ctx, {*rr, h}, [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
            return arith::MulFOp::create(nb, nl, a[0], a[1]);
          });
          if (failed(rh))
            return failure();
          Value rhr = matmulNT(b, l, *rh, slab(b, l, rd, 0, 2 * hidden, hidden));
          auto v = ew(ctx, {gate(2), rhr, bgate(2)}, [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
            return activate(nb, nl, clipped(nb, nl, arith::AddFOp::create(nb, nl, arith::AddFOp::create(nb, nl, a[0], a[1]), a[2])),
                            *gAct);
          });
          if (failed(v))
            return failure();
          candidate = *v;
        }
        auto v = ew(ctx, {*z, candidate, h}, [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          Value keep = arith::MulFOp::create(nb, nl, a[0], a[2]);
          return arith::AddFOp::create(nb, nl, arith::MulFOp::create(nb, nl, arith::SubFOp::create(nb, nl, floatConst(nb, nl, 1.0), a[0]), a[1]),
                                       keep);
        });
        if (failed(v))
          return failure();
        hNew = *v;
      }
      // Past a row's sequence length: the state stays, the output is 0.
      Value y = hNew;
      if (lens) {
        Value valid = generate(ctx, {batch, 1}, DType::kFloat, [&](OpBuilder &nb, Location nl, ValueRange at) -> Value {
          Value len = tensor::ExtractOp::create(nb, nl, lens, ValueRange{at[0]});
          Value in = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sgt, len,
                                           arith::ConstantOp::create(nb, nl, nb.getIntegerAttr(len.getType(), t)));
          return arith::SelectOp::create(nb, nl, in, floatConst(nb, nl, 1.0), floatConst(nb, nl, 0.0));
        });
        auto keep = [&](Value now, Value before) -> FailureOr<Value> {
          return ew(ctx, {valid, now, before}, [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
            Value on = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::ONE, a[0], floatConst(nb, nl, 0.0));
            return arith::SelectOp::create(nb, nl, on, a[1], a[2]);
          });
        };
        auto yv = keep(hNew, zeros({batch, hidden}));
        auto hv = keep(hNew, h);
        if (failed(yv) || failed(hv))
          return failure();
        y = *yv;
        hNew = *hv;
        if (cell == Cell::kLstm) {
          auto cv = keep(cNew, c);
          if (failed(cv))
            return failure();
          cNew = *cv;
        }
      }
      ys.push_back(reshapeView(b, l, y, {1, batch, hidden}));
      h = hNew;
      if (cell == Cell::kLstm)
        c = cNew;
    }
    Value yd = ys.size() == 1 ? ys[0] : tensor::ConcatOp::create(b, l, 0, ys).getResult();  // [S, B, H]
    if (reverse)
      yd = reverseSteps(ctx, yd, lens);
    dirY.push_back(reshapeView(b, l, yd, {steps, 1, batch, hidden}));
    dirH.push_back(reshapeView(b, l, h, {1, batch, hidden}));
    dirC.push_back(reshapeView(b, l, c, {1, batch, hidden}));
  }
  auto cat = [&](std::vector<Value> &vs, int64_t axis) {
    return vs.size() == 1 ? vs[0] : tensor::ConcatOp::create(b, l, axis, vs).getResult();
  };
  Value y = cat(dirY, 1), yh = cat(dirH, 0), yc = cat(dirC, 0);
  if (layout == 1) {
    y = transposeValue(b, l, y, {2, 0, 1, 3});
    yh = transposeValue(b, l, yh, {1, 0, 2});
    yc = transposeValue(b, l, yc, {1, 0, 2});
  }
  if (ctx.hasOutput(0))
    ctx.setOutput(0, OnnxValue::ofValue(y, DType::kFloat));
  if (ctx.hasOutput(1))
    ctx.setOutput(1, OnnxValue::ofValue(yh, DType::kFloat));
  if (cell == Cell::kLstm && ctx.hasOutput(2))
    ctx.setOutput(2, OnnxValue::ofValue(yc, DType::kFloat));
  return success();
}

LogicalResult convertRNN(NodeContext &ctx) { return convertRecurrent(ctx, Cell::kRnn); }
LogicalResult convertGRU(NodeContext &ctx) { return convertRecurrent(ctx, Cell::kGru); }
LogicalResult convertLSTM(NodeContext &ctx) { return convertRecurrent(ctx, Cell::kLstm); }

} // namespace

void addRecurrentOps(std::vector<OpSupport> &ops) {
  const char *common = "activation_alpha activation_beta activations clip direction hidden_size layout";
  static const std::string gru = std::string(common) + " linear_before_reset";
  static const std::string lstm = std::string(common) + " input_forget";
  ops.insert(ops.end(), {
      {"GRU", 13, 21, convertGRU, "unrolled over at most 1024 steps", gru.c_str(), 3},
      {"LSTM", 13, 21, convertLSTM, "unrolled over at most 1024 steps", lstm.c_str(), 3},
      {"RNN", 13, 21, convertRNN, "unrolled over at most 1024 steps", common, 3},
  });
}

} // namespace hexir::onnx_import
