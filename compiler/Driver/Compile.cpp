//===- Compile.cpp - the Hexir compiler as a library ----------------------===//
#include "Driver/Compile.h"

#include "Driver/BuildExecutable.h"
#include "Driver/DispatchReport.h"
#include "Driver/Progress.h"
#include "Driver/Registration.h"
#include "Dialect/Functions.h"
#include "Import/Onnx/OnnxImporter.h"
#include "Target/Machine.h"
#include "Target/TargetRegistry.h"
#include "Transforms/Passes.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/Support/SourceMgr.h"
#include <optional>
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include "base/file_mapping.h"
#include "planner/report.h"
#include "serializer/writer.h"

using namespace mlir;

namespace hexir::compiler {
namespace {

// Whether an error message is MLIR's or LLVM's own text rather than one of Hexir's: an op
// verifier ("'linalg.generic' op ..."), a missing translation or legalization.
bool isInternalMessage(llvm::StringRef message) {
  if (message.starts_with("'")) {
    size_t quote = message.find('\'', 1);
    llvm::StringRef name = message.slice(1, quote);
    if (quote != llvm::StringRef::npos && name.contains('.') && message.substr(quote).starts_with("' op "))
      return true;
  }
  return message.contains("LLVMTranslationDialectInterface") || message.contains("failed to legalize") ||
         message.contains("cannot be converted to LLVM IR");
}

bool writeText(const std::string &path, const std::string &text, ModuleOp module) {
  Status s = WriteFileAtomically(path, text.data(), text.size());
  if (!s.ok())
    module.emitError() << s.message();
  return s.ok();
}

// Whether the target computes int8 products in groups (VNNI's vpdpbusd, or vpmaddwd's pairs):
// there the int8 kernels of a QDQ model outrun its float lowering (with widened int32 multiplies
// they do not). Pairs, measured on a Zen 2 at 1 thread, int8 kernels against float lowering:
// resnet50 98 vs 111 ms (AVX2), 262 vs 313 ms (x86-64, SSE2); bert_like 89 vs 97 ms.
// The target's options from the command line's (the machine, if any, loaded by the caller).
mlir::hexir::TargetOptions targetOptionsOf(const CompileOptions &options,
                                           const mlir::hexir::MachineDescription *machine) {
  mlir::hexir::TargetOptions targetOptions;
  targetOptions.machine = machine;
  targetOptions.name = options.target;
  targetOptions.cpu = options.targetCpu;
  targetOptions.linkerPath = options.linkerPath;
  targetOptions.cudaArch = options.cudaArch;
  targetOptions.allowTf32 = options.allowTf32;
  return targetOptions;
}

bool hasInt8DotProducts(const CompileOptions &options) {
  // (A machine file describes memory spaces, not the CPU's instructions.)
  mlir::hexir::TargetOptions targetOptions = targetOptionsOf(options, nullptr);
  MLIRContext context;
  // A wrong target is reported once, by the compilation itself.
  ScopedDiagnosticHandler quiet(&context, [](Diagnostic &) { return success(); });
  auto target = mlir::hexir::createTargetBackend(targetOptions, UnknownLoc::get(&context));
  return succeeded(target) && (*target)->description().int8DotGroup != 0;
}

bool runCompilation(MLIRContext &context, ModuleOp module, const CompileOptions &options,
                    std::vector<uint8_t> &bytes, llvm::raw_ostream *planOutput, Progress &progress) {
  if (options.emitMlir) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module.print(os);
    bytes.assign(text.begin(), text.end());
    return true;
  }
  // The machine and the target first: a wrong --machine, --target or --target-cpu fails before
  // any work.
  std::optional<mlir::hexir::MachineDescription> machine;
  if (!options.machine.empty()) {
    std::string error;
    auto loaded = mlir::hexir::loadMachine(options.machine, error);
    if (failed(loaded)) {
      module.emitError() << error;
      return false;
    }
    machine = std::move(*loaded);
  }
  mlir::hexir::TargetOptions targetOptions = targetOptionsOf(options, machine ? &*machine : nullptr);
  auto target = mlir::hexir::createTargetBackend(targetOptions, module.getLoc());
  if (failed(target))
    return false;

  // Graph: verify, lower TOSA, form dispatches.
  PassManager pm(&context);
  if (options.printIRAfterAll) {
    context.disableMultithreading();
    pm.enableIRPrinting();
  }
  mlir::hexir::GraphTargetRules rules;
  rules.padsInPlace = (*target)->description().padProducersInKernel;
  rules.maxPanel = (*target)->description().maxPanel;
  rules.int8DotGroup = (*target)->description().int8DotGroup;
  rules.narrowingEpilogues = (*target)->description().narrowingEpilogues;
  if (options.precision == "bf16") {
    if ((*target)->description().name != "host") {
      module.emitError() << "--precision bf16 is implemented for the host target only, not '" << options.target << "'";
      return false;
    }
    rules.bf16 = true;
    rules.bf16DotGroups = (*target)->description().bf16DotGroups;
    if (!rules.bf16DotGroups)
      emitWarning(module.getLoc()) << "the target CPU '" << options.targetCpu
                                   << "' has no AVX512-BF16 (at 512-bit vectors): --precision bf16 rounds the "
                                      "operands to bf16 and computes on the f32 kernels (the same results, no "
                                      "speed-up)";
  } else if (options.precision != "f32") {
    module.emitError() << "unknown --precision '" << options.precision << "': expected f32 or bf16";
    return false;
  }
  rules.maxRowsPackedInKernel = (*target)->description().maxRowsPackedInKernel;
  const mlir::hexir::TargetBackend *backend = target->get();
  rules.fusesIntoKernel = [backend](mlir::linalg::LinalgOp op) { return backend->fusesIntoKernel(op); };
  mlir::hexir::buildGraphPipeline(pm, options.entries, options.fuseElementwise, rules);
  progress.phase("graph passes: lowering, fusion, dispatch formation");
  if (failed(pm.run(module)))
    return false;
  // The executable's functions, in the input's order.
  SmallVector<func::FuncOp> graphs = mlir::hexir::graphFunctions(module);
  if (options.printDispatches && planOutput)
    for (func::FuncOp graph : graphs)
      mlir::hexir::printDispatches(graph, *planOutput);
  if (!options.dumpGraphPath.empty()) {
    std::string error;
    auto out = openOutputFile(options.dumpGraphPath, &error);
    if (!out) {
      module.emitError() << "cannot write '" << options.dumpGraphPath << "': " << error;
      return false;
    }
    module.print(out->os());
    out->keep();
  }

  // Kernels: one library in the target's format.
  progress.phase("compiling " + std::to_string(mlir::hexir::kernelFunctions(module).size()) + " kernels for " +
                 (*target)->description().name);
  auto library = (*target)->compileKernels(module);
  if (failed(library))
    return false;

  // Memory plan, commands and the file.
  serializer::ExecutableSpec spec;
  spec.producer = "hexir-compile 0.1.0";
  if (auto metadata = module->getAttrOfType<DictionaryAttr>(mlir::hexir::kModelMetadataAttrName))
    for (NamedAttribute entry : metadata)
      if (auto value = dyn_cast<StringAttr>(entry.getValue()))
        spec.metadata.push_back({entry.getName().str(), value.str()});
  mlir::hexir::TargetDescription description = (*target)->description();
  if (machine) {
    std::string error;
    if (failed(mlir::hexir::applyMachine(description, *machine, description.processorKind, error))) {
      module.emitError() << error;
      return false;
    }
  }
  if (!options.placements.empty()) {
    std::string error;
    if (failed(mlir::hexir::placeBuffers(description, machine ? &*machine : nullptr, options.placements, error))) {
      module.emitError() << error;
      return false;
    }
  }
  for (const auto &[name, budget] : options.memoryBudgets) {
    auto space = llvm::find_if(description.memorySpaces,
                               [&](const mlir::hexir::MemorySpaceDescription &s) { return s.name == name; });
    if (space == description.memorySpaces.end()) {
      std::string known;
      for (const auto &s : description.memorySpaces)
        known += (known.empty() ? "'" : ", '") + s.name + "'";
      module.emitError() << "--memory-budget names memory space '" << name << "', which target '"
                         << description.name << "' does not have (it has " << known << ")";
      return false;
    }
    space->capacity = budget;
  }
  spec.target = description.name;
  spec.memory_spaces.clear();
  for (const mlir::hexir::MemorySpaceDescription &space : description.memorySpaces)
    spec.memory_spaces.push_back({space.name, space.hostVisible});
  spec.constants_memory_space = description.constantSpace;
  // A graph of views and constants only launches nothing: no library to load.
  if (!library->entries.empty())
    spec.libraries.push_back(std::move(*library));
  mlir::hexir::BuildExecutableOptions buildOptions;
  buildOptions.verifyPlan = options.verifyPlan;
  buildOptions.planTimeLimit = options.planTimeLimit;
  buildOptions.planSearchNodes = options.planSearchNodes;
  buildOptions.schedule = options.schedule;
  buildOptions.inPlace = options.inPlace;
  // One pool for every function: a constant they share (the same weights in every shape
  // bucket) is stored and made resident once.
  mlir::hexir::ConstantPool pool(spec);
  std::vector<planner::PlanReport> reports;
  progress.phase("planning memory and writing the executable");
  for (func::FuncOp graph : graphs) {
    // Loop and branch bodies are planned and emitted inside the function that runs them.
    if (mlir::hexir::isBody(graph))
      continue;
    auto built = mlir::hexir::buildFunction(graph, description, spec, pool, buildOptions);
    if (failed(built))
      return false;
    built->function.plan_json = planner::FormatPlanJson(built->report);
    spec.functions.push_back(std::move(built->function));
    if (options.printPlan && planOutput)
      *planOutput << planner::FormatPlanTable(built->report);
    reports.push_back(std::move(built->report));
  }
  // Every function's plan: one function's as before, several together.
  if (!options.planJsonPath.empty() && !writeText(options.planJsonPath, planner::FormatPlansJson(reports), module))
    return false;
  if (!options.planSvgPath.empty() && !writeText(options.planSvgPath, planner::FormatPlansSvg(reports), module))
    return false;
  bytes = serializer::WriteExecutable(spec);
  return true;
}

// The model imported with its symbolic dimensions fixed to `values` (in `dims` order) as a
// function `name` marked a bucket of the model's function; its loop and branch bodies take its
// name too (main_loop_0 -> main_batch4_loop_0).
OwningOpRef<ModuleOp> importBucket(MLIRContext &context, onnx_import::OnnxImportOptions importOptions,
                                   const std::vector<std::pair<std::string, std::vector<int64_t>>> &dims,
                                   ArrayRef<int64_t> values, const std::string &name) {
  importOptions.dims.clear();
  SmallVector<Attribute> dimNames;
  for (size_t d = 0; d < dims.size(); ++d) {
    importOptions.dims[dims[d].first] = values[d];
    dimNames.push_back(StringAttr::get(&context, dims[d].first));
  }
  OwningOpRef<ModuleOp> bucket = onnx_import::importOnnxModel(context, importOptions);
  if (!bucket)
    return nullptr;
  // The importer names the function as asked.
  auto fn = bucket->lookupSymbol<func::FuncOp>(importOptions.entry);
  fn.setSymName(name);
  fn->setAttr(mlir::hexir::kBucketOfAttrName, StringAttr::get(&context, importOptions.entry));
  fn->setAttr(mlir::hexir::kBucketDimNamesAttrName, ArrayAttr::get(&context, dimNames));
  fn->setAttr(mlir::hexir::kBucketDimValuesAttrName, DenseI64ArrayAttr::get(&context, values));
  for (auto body : llvm::make_early_inc_range(bucket->getOps<func::FuncOp>())) {
    if (!mlir::hexir::isBody(body))
      continue;
    std::string renamed = name + body.getSymName().drop_front(importOptions.entry.size()).str();
    if (failed(SymbolTable::replaceAllSymbolUses(body, StringAttr::get(&context, renamed), *bucket)))
      return nullptr;
    body.setSymName(renamed);
  }
  return bucket;
}

void moveFunctions(ModuleOp from, ModuleOp into) {
  for (auto moved : llvm::make_early_inc_range(from.getOps<func::FuncOp>()))
    moved->moveBefore(into.getBody(), into.getBody()->end());
}

// The ONNX model as a module: imported once, or once per combination of the --dim sizes, each
// a function named after its sizes (main_batch4) and marked a bucket of the model's function.
// A request smaller than a bucket is padded to it, which is exact only if the bucket computes
// what the model computes at the request's size: for each bucket of a padded dimension, the
// model is also imported at the smallest size padded into it (at least 2: one row changes
// broadcasting) as a probe that hexir-check-bucket-rows compares the bucket with, then erases.
OwningOpRef<ModuleOp> importShapeBuckets(MLIRContext &context, onnx_import::OnnxImportOptions importOptions,
                                         const std::vector<std::pair<std::string, std::vector<int64_t>>> &dims) {
  if (dims.empty())
    return onnx_import::importOnnxModel(context, importOptions);
  OwningOpRef<ModuleOp> module;
  SmallVector<func::FuncOp> buckets;
  std::vector<size_t> pick(dims.size(), 0);
  while (true) {
    SmallVector<int64_t> values;
    std::string name = importOptions.entry;
    for (size_t d = 0; d < dims.size(); ++d) {
      values.push_back(dims[d].second[pick[d]]);
      name += "_" + dims[d].first + std::to_string(values.back());
    }
    OwningOpRef<ModuleOp> bucket = importBucket(context, importOptions, dims, values, name);
    if (!bucket)
      return nullptr;
    if (!module)
      module = std::move(bucket);
    else
      moveFunctions(*bucket, *module);
    buckets.push_back(module->lookupSymbol<func::FuncOp>(name));
    // The next combination, the first dimension fastest.
    size_t d = 0;
    while (d < pick.size() && ++pick[d] == dims[d].second.size())
      pick[d++] = 0;
    if (d == pick.size())
      break;
  }
  // Per bucket, per dimension: the smallest size padded into it (its own size: none).
  for (func::FuncOp bucket : buckets)
    bucket->setAttr(mlir::hexir::kBucketPadsFromAttrName,
                    bucket->getAttrOfType<DenseI64ArrayAttr>(mlir::hexir::kBucketDimValuesAttrName));
  for (size_t d : mlir::hexir::paddedBucketDims(buckets)) {
    std::vector<int64_t> sizes = dims[d].second;
    llvm::sort(sizes);
    for (func::FuncOp bucket : SmallVector<func::FuncOp>(buckets)) {
      SmallVector<int64_t> values(bucket->getAttrOfType<DenseI64ArrayAttr>(mlir::hexir::kBucketDimValuesAttrName)
                                      .asArrayRef());
      int64_t size = values[d];
      auto at = llvm::find(sizes, size);
      int64_t below = at == sizes.begin() ? 0 : *std::prev(at);
      // The ends of the range padded into it: a threshold inside the range, a parity, shows as
      // a difference from the bucket at one of them. One row is not probed (a unit dimension
      // changes how broadcasts lower): without a bucket of 1, one row is not padded.
      int64_t lowest = std::max<int64_t>(below + 1, 2);
      if (lowest >= size)
        continue;  // nothing is padded into it
      SmallVector<int64_t> padsFrom(bucket->getAttrOfType<DenseI64ArrayAttr>(mlir::hexir::kBucketPadsFromAttrName)
                                        .asArrayRef());
      padsFrom[d] = lowest;
      bucket->setAttr(mlir::hexir::kBucketPadsFromAttrName, DenseI64ArrayAttr::get(&context, padsFrom));
      SmallVector<int64_t> probes{lowest};
      if (size - 1 > lowest)
        probes.push_back(size - 1);
      for (int64_t probe : probes) {
        values[d] = probe;
        std::string name = bucket.getSymName().str() + "_probe_" + dims[d].first + std::to_string(probe);
        OwningOpRef<ModuleOp> imported = importBucket(context, importOptions, dims, values, name);
        if (!imported)
          return nullptr;
        for (auto fn : imported->getOps<func::FuncOp>()) {
          fn->setAttr(mlir::hexir::kBucketProbeAttrName, bucket.getSymNameAttr());
          fn->setAttr(mlir::hexir::kBucketProbeDimAttrName,
                      IntegerAttr::get(IntegerType::get(&context, 64), static_cast<int64_t>(d)));
        }
        moveFunctions(*imported, *module);
      }
    }
  }
  return module;
}

} // namespace

static bool compileToBytesImpl(const CompileOptions &options, std::vector<uint8_t> &bytes,
                               llvm::raw_ostream &diagnostics, llvm::raw_ostream *planOutput) {
  // The input is read once, checked to be a regular file first (a FIFO would block the open,
  // /dev/zero would be read until memory runs out) and to the size it had when opened.
  Progress progress(diagnostics, options.progress == CompileOptions::ProgressReport::kAlways ? Progress::Mode::kAlways
                                 : options.progress == CompileOptions::ProgressReport::kAfterDelay
                                     ? Progress::Mode::kAfterDelay
                                     : Progress::Mode::kNever);
  StatusOr<std::string> source = ReadFileToString(options.inputPath);
  if (!source.ok()) {
    diagnostics << "error: " << source.status().message() << "\n";
    return false;
  }
  DialectRegistry registry;
  mlir::hexir::registerCompilerDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics point at the user's source; dumping the generic op form only adds noise.
  context.printOpOnDiagnostic(false);

  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context, diagnostics);
  if (llvm::StringRef(options.inputPath).ends_with(".onnx")) {
    // ONNX has no source lines: "model.onnx: error: node 'conv1' (Conv, ...): ..."; later
    // diagnostics carry the node's name in their location.
    ScopedDiagnosticHandler onnxHandler(&context, [&](Diagnostic &diag) {
      auto print = [&](Diagnostic &d, const char *severity) {
        diagnostics << options.inputPath << ": " << severity << ": ";
        if (auto name = dyn_cast<NameLoc>(d.getLocation());
            name && !llvm::StringRef(d.str()).starts_with("node '"))
          diagnostics << "node '" << name.getName().strref() << "': ";
        diagnostics << d.str() << "\n";
      };
      const char *severity = diag.getSeverity() == DiagnosticSeverity::Error     ? "error"
                             : diag.getSeverity() == DiagnosticSeverity::Warning ? "warning"
                                                                                 : "note";
      // An ONNX model's user never wrote MLIR: an op verifier's or a translation's message is
      // a bug in Hexir (the importer checks what the lowering would reject), said as such,
      // with the original text as a note for the report.
      if (diag.getSeverity() == DiagnosticSeverity::Error && isInternalMessage(diag.str())) {
        Diagnostic bug(diag.getLocation(), DiagnosticSeverity::Error);
        bug << "internal compiler error: Hexir failed to compile this node; this is a bug in Hexir, "
               "please report it with the model";
        print(bug, "error");
        diagnostics << options.inputPath << ": note: details: " << diag.str() << "\n";
      } else {
        print(diag, severity);
      }
      for (Diagnostic &note : diag.getNotes())
        print(note, "note");
      return success();
    });
    onnx_import::OnnxImportOptions importOptions;
    importOptions.path = options.inputPath;
    importOptions.contents = &*source;
    if (options.entries.size() > 1) {
      diagnostics << options.inputPath << ": error: an ONNX model has one graph; --entry names it once\n";
      return false;
    }
    importOptions.entry = options.entries.empty() ? "main" : options.entries.front();
    importOptions.inputShapes = options.inputShapes;
    importOptions.fixedInputs = options.fixedInputs;
    importOptions.donated = options.donated;
    importOptions.int8Kernels = options.int8Kernels == CompileOptions::Int8Kernels::kOn ||
                                (options.int8Kernels == CompileOptions::Int8Kernels::kAuto && hasInt8DotProducts(options));
    progress.phase("importing " + options.inputPath);
    OwningOpRef<ModuleOp> module = importShapeBuckets(context, importOptions, options.dims);
    if (!module)
      return false;
    return runCompilation(context, *module, options, bytes, planOutput, progress);
  }
  if (!options.donated.empty()) {
    diagnostics << "error: --donate marks an ONNX model's inputs; '" << options.inputPath
                << "' is an MLIR graph: mark the argument {hexir.donate}\n";
    return false;
  }
  if (!options.dims.empty()) {
    diagnostics << "error: --dim fixes an ONNX model's symbolic dimensions; '" << options.inputPath
                << "' is an MLIR graph, whose shapes are in its types: write one function per shape\n";
    return false;
  }
  if (!options.inputShapes.empty()) {
    diagnostics << "error: --input-shape applies to ONNX models; '" << options.inputPath
                << "' is an MLIR graph, whose shapes are in its types\n";
    return false;
  }
  if (!options.fixedInputs.empty()) {
    diagnostics << "error: --fix-input applies to ONNX models; '" << options.inputPath
                << "' is an MLIR graph: make the value an arith.constant\n";
    return false;
  }
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(*source, options.inputPath), llvm::SMLoc());
  progress.phase("parsing " + options.inputPath);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return false;
  return runCompilation(context, *module, options, bytes, planOutput, progress);
}

bool compileToBytes(const CompileOptions &options, std::vector<uint8_t> &bytes,
                    llvm::raw_ostream &diagnostics, llvm::raw_ostream *planOutput) {
  // No exception leaves the compiler: one escaping a library (protobuf, ONNX, the standard
  // library) becomes an error instead of an abort.
  try {
    return compileToBytesImpl(options, bytes, diagnostics, planOutput);
  } catch (const std::bad_alloc &) {
    diagnostics << "error: out of memory while compiling '" << options.inputPath << "'\n";
  } catch (const std::exception &e) {
    diagnostics << "error: internal compiler error while compiling '" << options.inputPath << "': " << e.what()
                << " (a bug in Hexir; please report it with the model)\n";
  }
  return false;
}

bool parseMemoryBudget(const std::string &text, std::map<std::string, uint64_t> &budgets, std::string &error) {
  size_t eq = text.rfind('=');
  std::string name = eq == std::string::npos ? std::string() : text.substr(0, eq);
  std::string digits = eq == std::string::npos ? std::string() : text.substr(eq + 1);
  uint64_t value = 0;
  bool number = !digits.empty() && digits.size() <= 19 &&
                llvm::all_of(digits, [](char c) { return c >= '0' && c <= '9'; });
  if (number)
    value = std::stoull(digits);
  if (name.empty() || !number || value == 0 || value > (uint64_t{1} << 62)) {
    error = "--memory-budget '" + text + "' is not SPACE=BYTES (e.g. host=1073741824, at most 2^62)";
    return false;
  }
  if (!budgets.emplace(name, value).second) {
    error = "--memory-budget gives memory space '" + name + "' twice";
    return false;
  }
  return true;
}

bool parsePlacement(const std::string &text, std::map<std::string, std::string> &placements, std::string &error) {
  size_t eq = text.find('=');
  std::string what = eq == std::string::npos ? std::string() : text.substr(0, eq);
  std::string space = eq == std::string::npos ? std::string() : text.substr(eq + 1);
  if ((what != "intermediates" && what != "constants") || space.empty()) {
    error = "--place '" + text + "' is not intermediates=SPACE or constants=SPACE";
    return false;
  }
  if (!placements.emplace(what, space).second) {
    error = "--place gives the " + what + " twice";
    return false;
  }
  return true;
}

bool parseDim(const std::string &text, std::vector<std::pair<std::string, std::vector<int64_t>>> &dims,
              std::string &error) {
  size_t eq = text.find('=');
  std::string name = eq == std::string::npos ? std::string() : text.substr(0, eq);
  std::vector<int64_t> values;
  bool ok = !name.empty() && eq + 1 < text.size();
  for (size_t start = eq + 1; ok && start <= text.size();) {
    size_t comma = text.find(',', start);
    std::string digits = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    ok = !digits.empty() && digits.size() <= 10 && llvm::all_of(digits, [](char c) { return c >= '0' && c <= '9'; });
    if (ok) {
      int64_t v = std::stoll(digits);
      ok = v >= 1 && v <= INT32_MAX && !llvm::is_contained(values, v);
      values.push_back(v);
    }
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  if (!ok) {
    error = "--dim '" + text + "' is not NAME=V1,V2,... (distinct sizes from 1 to 2^31 - 1, e.g. batch=1,4,16)";
    return false;
  }
  for (const auto &[known, ignored] : dims)
    if (known == name) {
      error = "--dim gives dimension '" + name + "' twice";
      return false;
    }
  std::sort(values.begin(), values.end());
  dims.push_back({name, values});
  return true;
}

bool parseInputShape(const std::string &text, std::map<std::string, std::vector<int64_t>> &shapes,
                     std::string &error) {
  size_t eq = text.rfind('=');
  std::vector<int64_t> shape;
  if (eq == std::string::npos || eq == 0 || !onnx_import::parseShape(text.substr(eq + 1), shape)) {
    error = "--input-shape '" + text + "' is not NAME=DIMS (e.g. input=1x3x224x224)";
    return false;
  }
  std::string name = text.substr(0, eq);
  if (shapes.count(name)) {
    error = "--input-shape gives input '" + name + "' twice";
    return false;
  }
  shapes[name] = shape;
  return true;
}

bool parseFixInput(const std::string &text, std::map<std::string, onnx_import::FixedInput> &fixed,
                   std::string &error) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    error = "--fix-input '" + text + "' is not NAME=V1,V2,... or NAME=FILE.npy";
    return false;
  }
  std::string name = text.substr(0, eq);
  if (fixed.count(name)) {
    error = "--fix-input gives input '" + name + "' twice";
    return false;
  }
  onnx_import::FixedInput value;
  std::string why;
  if (!onnx_import::parseFixedValues(text.substr(eq + 1), value, why)) {
    error = "--fix-input " + name + ": " + why + " (give V1,V2,... or a .npy file)";
    return false;
  }
  fixed[name] = std::move(value);
  return true;
}

void printSupportedOnnxOps(llvm::raw_ostream &os) { onnx_import::printSupportedOps(os); }

std::vector<std::string> targetNames() { return mlir::hexir::registeredTargetNames(); }

std::vector<std::string> machineNames() { return mlir::hexir::machinePresetNames(); }

bool compileFile(const CompileOptions &options, llvm::raw_ostream &diagnostics,
                 llvm::raw_ostream *planOutput) {
  std::vector<uint8_t> bytes;
  if (!compileToBytes(options, bytes, diagnostics, planOutput))
    return false;
  if (options.outputPath == "-") {
    llvm::outs().write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
    return true;
  }
  Status written = WriteFileAtomically(options.outputPath, bytes.data(), bytes.size());
  if (!written.ok()) {
    diagnostics << "error: " << written.message() << "\n";
    return false;
  }
  return true;
}

} // namespace hexir::compiler
