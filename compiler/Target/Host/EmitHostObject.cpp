//===- EmitHostObject.cpp - LLVM IR and a PIC object for the host ---------===//
#include "Target/Host/HostCodegen.h"

#include "mlir/IR/Threading.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace mlir;
using namespace mlir::hexir;

namespace {

// Renames each lowered kernel to an internal implementation and exports a wrapper with the
// kernel's name in the Hexir host ABI: void name(void* const* bindings, u32 wg_begin,
// u32 wg_end), which loads the bindings and passes the workgroup range on.
LogicalResult addEntryWrappers(llvm::Module &module, ArrayRef<KernelInfo> kernels, Location loc) {
  llvm::LLVMContext &ctx = module.getContext();
  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx);
  llvm::Type *i32 = llvm::Type::getInt32Ty(ctx);
  auto *entryType = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, i32, i32}, false);
  for (const KernelInfo &k : kernels) {
    llvm::Function *impl = module.getFunction(k.name);
    if (!impl)
      return emitError(loc) << "lowered kernel '" << k.name << "' is missing from the LLVM module";
    // The bindings, then the workgroup range (DistributeWorkgroups adds it to every kernel).
    if (impl->arg_size() != k.arity + 2)
      return emitError(loc) << "kernel '" << k.name << "' lowered to " << impl->arg_size()
                            << " parameters, expected " << k.arity << " bindings and a workgroup range";
    impl->setName("__hexir_impl_" + k.name);
    impl->setLinkage(llvm::GlobalValue::InternalLinkage);
    impl->addFnAttr(llvm::Attribute::AlwaysInline);
    auto *entry = llvm::Function::Create(entryType, llvm::GlobalValue::ExternalLinkage, k.name, module);
    entry->setVisibility(llvm::GlobalValue::DefaultVisibility);
    entry->addFnAttr(llvm::Attribute::NoUnwind);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
    SmallVector<llvm::Value *> args;
    for (unsigned i = 0; i < k.arity; ++i) {
      llvm::Value *slot = b.CreateConstInBoundsGEP1_64(ptr, entry->getArg(0), i);
      args.push_back(b.CreateAlignedLoad(ptr, slot, llvm::Align(8)));
    }
    args.push_back(entry->getArg(1));
    args.push_back(entry->getArg(2));
    b.CreateCall(impl, args);
    b.CreateRetVoid();
  }
  return success();
}

std::unique_ptr<llvm::TargetMachine> createTargetMachine(const HostTargetOptions &options,
                                                         Location loc) {
  static const bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;
  llvm::Triple triple(llvm::sys::getProcessTriple());
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    emitError(loc) << "no LLVM target for " << triple.str() << ": " << error;
    return nullptr;
  }
  std::string cpu = options.cpu;
  std::string features;
  if (cpu != "host") {
    // An unknown name would only print LLVM's warnings and compile for a generic CPU.
    std::unique_ptr<llvm::MCSubtargetInfo> info(target->createMCSubtargetInfo(triple, "", ""));
    if (!info || !info->isCPUStringValid(cpu)) {
      std::vector<std::string> names = {"host"};
      if (info)
        for (const llvm::SubtargetSubTypeKV &kv : info->getAllProcessorDescriptions())
          names.push_back(kv.Key);
      emitError(loc) << "unknown --target-cpu '" << cpu << "'; valid names: " << llvm::join(names, ", ");
      return nullptr;
    }
  }
  if (cpu == "host") {
    cpu = llvm::sys::getHostCPUName().str();
    llvm::SubtargetFeatures subtarget;
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      subtarget.AddFeature(feature.first(), feature.second);
    features = subtarget.getString();
  }
  llvm::TargetOptions targetOptions;
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      triple, cpu, features, targetOptions, llvm::Reloc::PIC_, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
}

void optimize(llvm::Module &module, llvm::TargetMachine &tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::PassBuilder pb(&tm, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(module, mam);
}

// Kernels run inside any process: they may only reference what every process has.
LogicalResult checkExternalSymbols(ArrayRef<char> object, Location loc) {
  static const llvm::StringSet<> allowed = {"memcpy", "memset", "memmove"};
  auto file = llvm::object::ObjectFile::createObjectFile(
      llvm::MemoryBufferRef(llvm::StringRef(object.data(), object.size()), "kernels.o"));
  if (!file)
    return emitError(loc) << "cannot read the emitted object: " << llvm::toString(file.takeError());
  for (const llvm::object::SymbolRef &sym : (*file)->symbols()) {
    auto flags = sym.getFlags();
    auto name = sym.getName();
    if (!flags || !name) {
      llvm::consumeError(flags.takeError());
      llvm::consumeError(name.takeError());
      continue;
    }
    if ((*flags & llvm::object::SymbolRef::SF_Undefined) && !name->empty() && !allowed.contains(*name))
      return emitError(loc) << "the kernels need the external symbol '" << *name
                            << "', which a Hexir kernel library may not use (only memcpy, memset "
                               "and memmove); this is a compiler bug, please report it";
  }
  return success();
}

} // namespace

FailureOr<KernelPipelineOptions> mlir::hexir::describeHostTarget(const HostTargetOptions &options,
                                                                 Location loc) {
  std::unique_ptr<llvm::TargetMachine> tm = createTargetMachine(options, loc);
  if (!tm)
    return failure();
  const llvm::MCSubtargetInfo *sti = tm->getMCSubtargetInfo();
  KernelPipelineOptions description;
  description.vectorBits = sti->checkFeatures("+avx512f") ? 512 : sti->checkFeatures("+avx") ? 256 : 128;
  description.fma = sti->checkFeatures("+fma");
  description.rounding = sti->checkFeatures("+sse4.1");
  // (Dot products and pairs are x86 instructions: another architecture gets neither.)
  bool x86 = tm->getTargetTriple().isX86();
  description.dotBits = !x86                                                                ? 0
                        : description.vectorBits == 512 && sti->checkFeatures("+avx512vnni") ? 512
                        : description.vectorBits == 256 && sti->checkFeatures("+avxvnni")  ? 256
                                                                                            : 0;
  description.pairBits = !x86 || description.dotBits                                          ? 0
                         : description.vectorBits == 512 && sti->checkFeatures("+avx512bw") ? 512
                         : description.vectorBits == 256 && sti->checkFeatures("+avx2")     ? 256
                         : description.vectorBits == 128                                    ? 128
                                                                                            : 0;
  description.bf16DotBits = x86 && description.vectorBits == 512 && sti->checkFeatures("+avx512bf16") ? 512 : 0;
  return description;
}

namespace {

// One part of the kernels (a module of LLVM-dialect functions) as an optimized object, in an
// LLVM context of its own: parts run on different threads.
LogicalResult emitPart(ModuleOp part, ArrayRef<KernelInfo> kernels, const HostTargetOptions &options,
                       std::vector<char> &object) {
  Location loc = part.getLoc();
  std::unique_ptr<llvm::TargetMachine> tm = createTargetMachine(options, loc);
  if (!tm)
    return failure();
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> module = translateModuleToLLVMIR(part, ctx, "hexir_kernels");
  if (!module)
    return emitError(loc) << "translating the kernels to LLVM IR failed";
  module->setTargetTriple(tm->getTargetTriple());
  module->setDataLayout(tm->createDataLayout());
  if (failed(addEntryWrappers(*module, kernels, loc)))
    return failure();
  // The kernels' vectors are as wide as the registers: keep them whole on CPUs whose LLVM
  // tuning prefers 256-bit vectors (which would otherwise split every 512-bit FMA in two).
  if (tm->getMCSubtargetInfo()->checkFeatures("+avx512f"))
    for (llvm::Function &f : *module)
      if (!f.isDeclaration())
        f.addFnAttr("min-legal-vector-width", "512");
  std::string verifyErrors;
  llvm::raw_string_ostream verifyStream(verifyErrors);
  if (llvm::verifyModule(*module, &verifyStream))
    return emitError(loc) << "invalid kernel LLVM IR: " << verifyErrors;
  optimize(*module, *tm);

  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager codegen;
  if (tm->addPassesToEmitFile(codegen, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    return emitError(loc) << "the target cannot emit object files";
  codegen.run(*module);
  if (failed(checkExternalSymbols(buffer, loc)))
    return failure();
  object.assign(buffer.begin(), buffer.end());
  return success();
}

} // namespace

FailureOr<HostObject> mlir::hexir::emitHostObject(ModuleOp llvmModule, ArrayRef<KernelInfo> kernels,
                                                  const HostTargetOptions &options) {
  Location loc = llvmModule.getLoc();
  std::unique_ptr<llvm::TargetMachine> tm = createTargetMachine(options, loc);
  if (!tm)
    return failure();
  // The parts lowerKernelsToLLVMDialect made, or the module itself as one part.
  SmallVector<ModuleOp> parts = llvm::to_vector(llvmModule.getOps<ModuleOp>());
  if (parts.empty())
    parts.push_back(llvmModule);
  SmallVector<SmallVector<KernelInfo>> partKernels(parts.size());
  for (const KernelInfo &k : kernels) {
    auto owner = llvm::find_if(parts, [&](ModuleOp part) { return SymbolTable::lookupSymbolIn(part, k.name); });
    if (owner == parts.end())
      return emitError(loc) << "lowered kernel '" << k.name << "' is missing from the LLVM module";
    partKernels[owner - parts.begin()].push_back(k);
  }
  HostObject result;
  result.objects.resize(parts.size());
  if (failed(failableParallelForEachN(llvmModule.getContext(), 0, parts.size(), [&](size_t i) {
        return emitPart(parts[i], partKernels[i], options, result.objects[i]);
      })))
    return failure();
  // The extensions this target enables, among those the runtime can check on its CPU
  // (hal/host/cpu_features.h keeps the same list).
  static const char *kCheckable[] = {"sse4.1", "sse4.2",   "popcnt",   "avx",      "avx2",
                                     "fma",    "f16c",     "bmi",      "bmi2",     "avx512f",
                                     "avx512bw", "avx512dq", "avx512vl", "avx512cd", "avx512vnni",
                                     "avxvnni",  "avx512bf16"};
  const llvm::MCSubtargetInfo *sti = tm->getMCSubtargetInfo();
  for (const char *feature : kCheckable)
    if (sti->checkFeatures(std::string("+") + feature))
      result.cpuFeatures.push_back(feature);
  return result;
}
