//===- VerifyInput.cpp - reject graphs Hexir cannot compile ---------------===//
//
// The first pass on user input: everything downstream may then assume static f32 tensors and a
// known set of ops. Each rejection is an error at the offending location that says why and
// what to do; nothing downstream has to diagnose user input again.
//
//===----------------------------------------------------------------------===//
#include "Transforms/Passes.h"

#include "Dialect/HexirDialect.h"
#include "Transforms/KernelClassification.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::hexir {
#define GEN_PASS_DEF_VERIFYINPUT
#include "Transforms/Passes.h.inc"
} // namespace mlir::hexir

using namespace mlir;

namespace {

// The TOSA 1.0 ops Hexir compiles today.
const llvm::StringSet<> &supportedTosaOps() {
  static const llvm::StringSet<> ops = {
      "tosa.const",       "tosa.const_shape", "tosa.add",        "tosa.sub",
      "tosa.mul",         "tosa.matmul",      "tosa.clamp",      "tosa.reshape",
      "tosa.transpose",   "tosa.conv2d",      "tosa.max_pool2d", "tosa.avg_pool2d",
      "tosa.reduce_sum",  "tosa.reduce_max",  "tosa.exp",        "tosa.reciprocal",
      "tosa.sigmoid",     "tosa.tanh"};
  return ops;
}

const llvm::StringSet<> &supportedTensorOps() {
  static const llvm::StringSet<> ops = {"tensor.empty",         "tensor.pad",
                                        "tensor.expand_shape",  "tensor.collapse_shape",
                                        "tensor.extract_slice", "tensor.insert_slice",
                                        "tensor.concat"};
  return ops;
}

std::string typeString(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

// Why `type` cannot be a tensor in a Hexir graph, or "" if it can. Graph values are f32, i64,
// i32 and i16 (indices, token ids, the integer types of either sign, the bits of 16-bit floats
// at the interface), i8 (ONNX bools and int8) and f64 (double at the interface); any integer
// constant is allowed where TOSA wants one (the shift of tosa.mul, zero points), via
// `allowInteger`.
std::string checkTensorType(Type type, bool allowInteger) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped)
    return "";
  if (!shaped.hasRank())
    return "is unranked; Hexir compiles ranked, statically shaped tensors only";
  if (!shaped.hasStaticShape())
    return "has a dynamic dimension; Hexir compiles static shapes only: give every dimension "
           "a size";
  // At most 1 TiB per tensor, as the ONNX importer allows (HostTensor.h): every size computed
  // downstream (plans, slots, the loader's checks) stays far from overflowing, and every
  // executable written is one the runtime loads.
  Type element = shaped.getElementType();
  uint64_t bytes = (element.isIntOrFloat() ? (element.getIntOrFloatBitWidth() + 7) / 8 : 8), product = bytes;
  bool tooLarge = false;
  for (int64_t d : shaped.getShape())
    tooLarge |= d != 0 && __builtin_mul_overflow(product, static_cast<uint64_t>(d), &product);
  if (tooLarge || product > (uint64_t{1} << 40))
    return "would take " + (tooLarge ? std::string("more than 2^64") : std::to_string(product)) +
           " bytes, more than the 1099511627776 bytes (1 TiB) Hexir allows for one tensor";
  if (element.isF32() || element.isF64() || element.isSignlessInteger(64) || element.isSignlessInteger(32) ||
      element.isSignlessInteger(16) || element.isSignlessInteger(8))
    return "";
  if (allowInteger && element.isSignlessInteger())
    return "";
  return "has element type " + typeString(element) +
         ", which is not supported yet; Hexir compiles f32, f64, i64, i32, i16 and i8 tensors";
}

struct VerifyInputPass : public mlir::hexir::impl::VerifyInputBase<VerifyInputPass> {
  using VerifyInputBase::VerifyInputBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool failed = false;
    for (Operation &op : module.getBody()->getOperations())
      if (!isa<func::FuncOp>(op)) {
        op.emitError() << "unsupported top-level operation '" << op.getName()
                       << "'; a Hexir input module holds func.func ops only";
        failed = true;
      }
    if (failed)
      return signalPassFailure();
    std::string names;
    for (auto fn : module.getOps<func::FuncOp>())
      names += (names.empty() ? "@" : ", @") + fn.getSymName().str();
    // The functions to compile: those named (the others are dropped), else every definition.
    SmallVector<func::FuncOp> compiled;
    if (!entries.empty()) {
      for (const std::string &entry : entries) {
        auto fn = module.lookupSymbol<func::FuncOp>(entry);
        if (!fn) {
          module.emitError() << "no function @" << entry << " in the input"
                             << (names.empty() ? "" : " (it has " + names + ")")
                             << "; name the functions to compile with --entry NAME";
          return signalPassFailure();
        }
        if (!llvm::is_contained(compiled, fn))
          compiled.push_back(fn);
      }
      // With the loop and branch bodies they run (and those bodies' bodies).
      for (size_t k = 0; k < compiled.size(); ++k)
        compiled[k].walk([&](Operation *op) {
          SmallVector<StringRef> bodies;
          if (auto loop = dyn_cast<hexir::LoopOp>(op))
            bodies.push_back(loop.getBody());
          if (auto branch = dyn_cast<hexir::IfOp>(op))
            bodies.append({branch.getThenBody(), branch.getElseBody()});
          for (StringRef name : bodies)
            if (auto body = module.lookupSymbol<func::FuncOp>(name); body && !llvm::is_contained(compiled, body))
              compiled.push_back(body);
        });
      for (auto fn : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
        if (!llvm::is_contained(compiled, fn))
          fn.erase();
    } else {
      for (auto fn : module.getOps<func::FuncOp>())
        if (!fn.isDeclaration())
          compiled.push_back(fn);
      if (compiled.empty()) {
        module.emitError() << "the input has no function to compile"
                           << (names.empty() ? "" : " (only declarations: " + names + ")");
        return signalPassFailure();
      }
    }
    for (func::FuncOp fn : compiled)
      failed |= !verifyFunction(fn);
    if (failed)
      signalPassFailure();
  }

  // One function Hexir compiles: a body of one block, tensors in and out, supported ops.
  bool verifyFunction(func::FuncOp entryFn) {
    std::string entry = entryFn.getSymName().str();
    if (entryFn.isDeclaration()) {
      entryFn.emitError() << "function @" << entry << " has no body";
      return false;
    }
    if (!entryFn.getBody().hasOneBlock()) {
      entryFn.emitError() << "function @" << entry
                          << " has control flow (several blocks); Hexir compiles straight-line graphs";
      return false;
    }
    bool failed = false;
    FunctionType type = entryFn.getFunctionType();
    for (auto [i, argType] : llvm::enumerate(type.getInputs())) {
      std::string why = isa<RankedTensorType, UnrankedTensorType>(argType)
                            ? checkTensorType(argType, /*allowInteger=*/false)
                            : "is not a tensor; inputs must be tensors";
      if (!why.empty()) {
        emitError(entryFn.getArgument(i).getLoc())
            << "argument " << i << " of @" << entry << " has type " << argType << " which " << why;
        failed = true;
      }
    }
    for (auto [i, resType] : llvm::enumerate(type.getResults())) {
      std::string why = isa<RankedTensorType, UnrankedTensorType>(resType)
                            ? checkTensorType(resType, /*allowInteger=*/false)
                            : "is not a tensor; results must be tensors";
      if (!why.empty()) {
        entryFn.emitError() << "result " << i << " of @" << entry << " has type " << resType
                            << " which " << why;
        failed = true;
      }
    }

    for (Operation &op : entryFn.getBody().front()) {
      if (!verifyTopLevelOp(op))
        failed = true;
    }
    return !failed;
  }

  bool verifyTopLevelOp(Operation &op) {
    StringRef name = op.getName().getStringRef();
    StringRef dialect = op.getName().getDialectNamespace();
    // Loops and branches run body functions, verified on their own (their symbols by the op).
    if (isa<hexir::LoopOp, hexir::IfOp>(op))
      return true;
    bool supported = supportedTosaOps().contains(name) || supportedTensorOps().contains(name) ||
                     dialect == "linalg" || isa<arith::ConstantOp, func::ReturnOp>(op);
    if (!supported) {
      InFlightDiagnostic diag = op.emitError() << "unsupported operation '" << name << "'";
      if (dialect == "tosa")
        diag << "; supported TOSA ops: const, const_shape, add, sub, mul, matmul, clamp, "
                "reshape, transpose, conv2d, max_pool2d, avg_pool2d, reduce_sum, reduce_max, "
                "exp, reciprocal, sigmoid, tanh";
      else if (isa<func::CallOp>(op))
        diag << "; Hexir compiles each function on its own: inline the callee first";
      else
        diag << "; Hexir accepts TOSA, linalg-on-tensors and the tensor ops listed in "
                "docs/architecture.md";
      return false;
    }
    bool isConstant = isa<tosa::ConstOp, arith::ConstantOp>(op);
    bool ok = true;
    for (auto [i, result] : llvm::enumerate(op.getResults())) {
      if (isa<tosa::shapeType>(result.getType()))
        continue;
      if (!isConstant && !isa<ShapedType>(result.getType()) && !result.getType().isIntOrIndexOrFloat()) {
        op.emitError() << "result " << i << " of '" << name << "' has type " << result.getType()
                       << ", which Hexir cannot compile";
        ok = false;
        continue;
      }
      std::string why = checkTensorType(result.getType(), /*allowInteger=*/isConstant);
      if (!why.empty()) {
        op.emitError() << "result " << i << " of '" << name << "' has type " << result.getType()
                       << " which " << why;
        ok = false;
      }
    }
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op); linalgOp && !hexir::hasLinearIndexingMaps(linalgOp)) {
      op.emitError() << "'" << name << "' has an indexing map with floordiv, ceildiv or mod; Hexir tiles "
                     << "kernels along linear maps only: make the divided loop two loops (a grouped "
                     << "convolution's group a loop of its own, as linalg.conv_2d_ngchw_gfchw)";
      ok = false;
    }
    // Bodies of linalg ops and tensor.pad hold scalar code; it must be lowerable to plain
    // arithmetic (no calls, no memory effects beyond the op itself).
    op.walk([&](Operation *nested) {
      if (nested == &op)
        return;
      StringRef d = nested->getName().getDialectNamespace();
      if (d != "arith" && d != "math" && d != "linalg" && d != "tensor") {
        nested->emitError() << "unsupported operation '" << nested->getName()
                            << "' inside '" << name
                            << "'; kernel bodies may use arith and math ops only";
        ok = false;
      }
    });
    return ok;
  }
};

} // namespace
