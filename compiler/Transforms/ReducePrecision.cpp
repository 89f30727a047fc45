//===- ReducePrecision.cpp - contractions on bf16 operands ----------------===//
//
// --precision bf16: the matmuls and convolutions whose weights are constants multiply bf16
// values and accumulate in f32, as ONNX Runtime's and oneDNN's bf16 modes do. The weights are
// rounded at compile time (to nearest, ties to even), the activation by an elementwise op
// before the contraction, once per activation however many contractions read it. Everything
// else (elementwise work, normalizations, softmax, depthwise convolutions, attention's products
// of two activations) stays f32. A product of two bf16 values is exact in f32, so the kernels
// differ from f32 ones only in their operands.
//
// With bf16 operands (a target with bf16 dot products) the weights become bf16 constants (half
// the bytes) and the activations bf16 tensors, which the packing passes group in pairs
// (DotGroups.h). Without, the operands are rounded to bf16 values but stay f32: the same
// products on the f32 kernels, the results those of a bf16 target up to the order of the sums.
//
//===----------------------------------------------------------------------===//
#include "Dialect/Functions.h"
#include "Transforms/DotGroups.h"
#include "Transforms/PackedLayout.h"
#include "Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <cstring>

namespace mlir::hexir {
#define GEN_PASS_DEF_REDUCEPRECISION
#include "Transforms/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;
using namespace mlir::hexir;

namespace {

// The bf16 nearest to `f` (ties to even; NaN stays a quiet NaN), as its 16 bits.
uint16_t toBF16Bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

// The same bf16 as an f32 value (the 16 bits on top, zeros below: exact).
float bf16Value(uint16_t bf16) {
  uint32_t bits = static_cast<uint32_t>(bf16) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// An f32 constant's values rounded to bf16: as a bf16 constant, or (`asF32`) as f32 values.
Value roundedConstant(RewriterBase &rewriter, Location loc, DenseElementsAttr values, bool asF32) {
  std::vector<float> floats = denseFloats(values);
  std::vector<uint16_t> rounded(floats.size());
  for (size_t i = 0; i < floats.size(); ++i)
    rounded[i] = toBF16Bits(floats[i]);
  if (asF32) {
    for (size_t i = 0; i < floats.size(); ++i)
      floats[i] = bf16Value(rounded[i]);
    return arith::ConstantOp::create(rewriter, loc, values.getType(),
                                     DenseElementsAttr::get(values.getType(), ArrayRef<float>(floats)));
  }
  auto type = RankedTensorType::get(values.getType().getShape(), rewriter.getBF16Type());
  return arith::ConstantOp::create(
      rewriter, loc, type,
      DenseElementsAttr::getFromRawBuffer(
          type, ArrayRef<char>(reinterpret_cast<const char *>(rounded.data()), rounded.size() * sizeof(uint16_t))));
}

// The constant f32 values `v` holds, or null.
DenseElementsAttr f32Constant(Value v) {
  auto cst = v.getDefiningOp<arith::ConstantOp>();
  auto values = cst ? dyn_cast<DenseElementsAttr>(cst.getValue()) : nullptr;
  return values && values.getElementType().isF32() ? values : nullptr;
}

bool isF32Tensor(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getElementType().isF32();
}

// Whether a contraction's body is acc + a * b in f32 (either order of both). (A Gemm's alpha
// makes it no contraction to linalg, nor to the packing passes: it stays f32.)
bool isMultiplyAdd(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 3)
    return false;
  auto add = cast<linalg::YieldOp>(body.getTerminator()).getOperand(0).getDefiningOp<arith::AddFOp>();
  Value acc = body.getArgument(2);
  Value product = !add ? Value() : add.getLhs() == acc ? add.getRhs() : add.getRhs() == acc ? add.getLhs() : Value();
  auto mul = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  return mul && ((mul.getLhs() == body.getArgument(0) && mul.getRhs() == body.getArgument(1)) ||
                 (mul.getLhs() == body.getArgument(1) && mul.getRhs() == body.getArgument(0)));
}

class Rounding {
public:
  Rounding(RewriterBase &rewriter, bool bf16Operands, int64_t maxPanel)
      : rewriter(rewriter), bf16Operands(bf16Operands), maxPanel(maxPanel) {}

  // The activation `v` rounded to bf16 (a bf16 tensor, or `asF32` f32 values), made once.
  Value activation(Value v, bool asF32) {
    std::pair<Value, unsigned> key(v, asF32 ? 1u : 0u);
    if (auto it = rounded_.find(key); it != rounded_.end())
      return it->second;
    OpBuilder::InsertionGuard guard(rewriter);
    // A padded activation (a convolution's): its source rounded, then padded with the rounded
    // value, so that the rounding kernel writes into the padded tensor (a pad's producer does)
    // and an odd channel count's pad folds into the spatial one (packConvDotGroups).
    FloatAttr padValue;
    if (auto pad = v.getDefiningOp<tensor::PadOp>();
        pad && pad.getConstantPaddingValue() && matchPattern(pad.getConstantPaddingValue(), m_Constant(&padValue))) {
      Value source = activation(pad.getSource(), asF32);
      rewriter.setInsertionPoint(pad);
      float rounded = bf16Value(toBF16Bits(static_cast<float>(padValue.getValueAsDouble())));
      Type element = asF32 ? rewriter.getF32Type() : rewriter.getBF16Type();
      Value value = arith::ConstantOp::create(rewriter, pad.getLoc(), rewriter.getFloatAttr(element, rounded));
      auto type = RankedTensorType::get(pad.getResultType().getShape(), element);
      return rounded_[key] = tensor::PadOp::create(rewriter, pad.getLoc(), type, source, pad.getMixedLowPad(),
                                                   pad.getMixedHighPad(), value)
                                 .getResult();
    }
    rewriter.setInsertionPointAfterValue(v);
    auto type = cast<RankedTensorType>(v.getType());
    Type element = asF32 ? rewriter.getF32Type() : rewriter.getBF16Type();
    Location loc = v.getLoc();
    Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(), element);
    AffineMap identity = rewriter.getMultiDimIdentityMap(type.getRank());
    SmallVector<utils::IteratorType> iterators(type.getRank(), utils::IteratorType::parallel);
    return rounded_[key] = linalg::GenericOp::create(
                     rewriter, loc, TypeRange{empty.getType()}, ValueRange{v}, ValueRange{empty},
                     ArrayRef<AffineMap>{identity, identity}, iterators,
                     [&](OpBuilder &b, Location l, ValueRange args) {
                       Value x = arith::TruncFOp::create(b, l, b.getBF16Type(), args[0]);
                       if (asF32)
                         x = arith::ExtFOp::create(b, l, b.getF32Type(), x);
                       linalg::YieldOp::create(b, l, x);
                     })
                     ->getResult(0);
  }

  // A matmul or Gemm with constant f32 weights: on bf16 operands. As bf16 tensors where the
  // packing will group them in pairs (K even, ...: bf16MatmulPackable); else (an unpacked bf16
  // contraction would run on no dot product) rounded as f32.
  void contraction(linalg::GenericOp op) {
    std::optional<MatmulDotOperands> operands = matmulDotOperands(op);
    if (!operands || !isMultiplyAdd(op) || !isF32Tensor(op->getResult(0)))
      return;
    unsigned w = operands->weights;
    DenseElementsAttr weights = f32Constant(op.getDpsInputs()[w]);
    Value lhs = op.getDpsInputs()[1 - w];
    if (!weights || !isF32Tensor(lhs))
      return;
    bool asF32 = !bf16Operands || !bf16MatmulPackable(op, maxPanel);
    rewriter.setInsertionPoint(op);
    SmallVector<Value> inputs(2);
    inputs[w] = roundedConstant(rewriter, op.getLoc(), weights, asF32);
    inputs[1 - w] = activation(lhs, asF32);
    if (asF32) {
      rewriter.modifyOpInPlace(op, [&] { op->setOperands(0, 2, inputs); });
      return;
    }
    rewriter.setInsertionPoint(op);
    auto generic = linalg::GenericOp::create(rewriter, op.getLoc(), op->getResultTypes(), inputs, op.getDpsInits(),
                                             op.getIndexingMapsArray(), op.getIteratorTypesArray(), bf16DotBody);
    rewriter.replaceOp(op, generic->getResults());
  }

  // A channels-last convolution with a constant f32 filter: the same (bf16ConvPackable).
  void convolution(linalg::Conv2DNhwcHwcfOp op) {
    DenseElementsAttr filter = f32Constant(op.getDpsInputs()[1]);
    Value image = op.getDpsInputs()[0];
    if (!filter || !op.hasPureTensorSemantics() || !isF32Tensor(image) || !isF32Tensor(op->getResult(0)))
      return;
    bool asF32 = !bf16Operands || !bf16ConvPackable(op, maxPanel);
    rewriter.setInsertionPoint(op);
    Value rounded = roundedConstant(rewriter, op.getLoc(), filter, asF32);
    Value roundedImage = activation(image, asF32);
    rewriter.setInsertionPoint(op);
    auto conv = linalg::Conv2DNhwcHwcfOp::create(rewriter, op.getLoc(), op->getResultTypes(),
                                                 ValueRange{roundedImage, rounded}, op.getDpsInits(), op.getStrides(),
                                                 op.getDilations());
    rewriter.replaceOp(op, conv->getResults());
  }

private:
  RewriterBase &rewriter;
  bool bf16Operands;
  int64_t maxPanel;
  llvm::DenseMap<std::pair<Value, unsigned>, Value> rounded_;  // (activation, asF32)
};

struct ReducePrecisionPass : public mlir::hexir::impl::ReducePrecisionBase<ReducePrecisionPass> {
  using ReducePrecisionBase::ReducePrecisionBase;
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    for (func::FuncOp fn : mlir::hexir::graphFunctions(getOperation())) {
      SmallVector<Operation *> ops;
      fn.walk([&](Operation *op) {
        if (isa<linalg::GenericOp, linalg::Conv2DNhwcHwcfOp>(op))
          ops.push_back(op);
      });
      Rounding rounding(rewriter, bf16Operands, maxPanel);
      for (Operation *op : ops) {
        if (auto generic = dyn_cast<linalg::GenericOp>(op))
          rounding.contraction(generic);
        else
          rounding.convolution(cast<linalg::Conv2DNhwcHwcfOp>(op));
      }
    }
  }
};

} // namespace
