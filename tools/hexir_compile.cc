// hexir-compile: a graph (.mlir) or an ONNX model (.onnx) to a Hexir executable (.hxb). A thin main over
// hexir::compiler::compileFile().
#include "Driver/Compile.h"
#include "tools/npy.h"

#include <cmath>

#include <unistd.h>

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

namespace {

// --fix-input NAME=FILE.npy: the file's values and shape (read as hexir-run reads inputs).
bool readFixedInput(const std::string &name, const std::string &path,
                    std::map<std::string, hexir::onnx_import::FixedInput> &fixed, std::string &error) {
  if (fixed.count(name)) {
    error = "--fix-input gives input '" + name + "' twice";
    return false;
  }
  hexir::StatusOr<hexir::npy::Array> array = hexir::npy::Read(path);
  if (!array.ok()) {
    error = "--fix-input " + name + ": " + array.status().message();
    return false;
  }
  hexir::onnx_import::FixedInput value;
  value.hasShape = true;
  value.shape = array->shape;
  uint64_t n = array->element_count();
  const void *data = array->data();
  using hexir::ElementType;
  switch (array->element_type) {
  case ElementType::kF32:
  case ElementType::kF64:
    value.isFloat = true;
    for (uint64_t k = 0; k < n; ++k)
      value.floats.push_back(array->element_type == ElementType::kF32 ? static_cast<const float *>(data)[k]
                                                                      : static_cast<const double *>(data)[k]);
    break;
  case ElementType::kI64:
    value.ints.assign(static_cast<const int64_t *>(data), static_cast<const int64_t *>(data) + n);
    break;
  case ElementType::kI32:
    value.ints.assign(static_cast<const int32_t *>(data), static_cast<const int32_t *>(data) + n);
    break;
  case ElementType::kI8:
    value.ints.assign(static_cast<const int8_t *>(data), static_cast<const int8_t *>(data) + n);
    break;
  case ElementType::kI16:
    value.ints.assign(static_cast<const int16_t *>(data), static_cast<const int16_t *>(data) + n);
    break;
  case ElementType::kU16:
    value.ints.assign(static_cast<const uint16_t *>(data), static_cast<const uint16_t *>(data) + n);
    break;
  case ElementType::kU32:
    value.ints.assign(static_cast<const uint32_t *>(data), static_cast<const uint32_t *>(data) + n);
    break;
  case ElementType::kU8:
  case ElementType::kBool:
    value.ints.assign(static_cast<const uint8_t *>(data), static_cast<const uint8_t *>(data) + n);
    break;
  default:
    error = "--fix-input " + name + ": " + path + " holds " + hexir::ElementTypeName(array->element_type) +
            " values; give float32, float64, int64, int32, int16, int8, uint32, uint16, uint8 or bool";
    return false;
  }
  fixed[name] = std::move(value);
  return true;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << "hexir-compile " << HEXIR_VERSION << " (MLIR/LLVM " << LLVM_VERSION_STRING << ")\n";
  });
  cl::OptionCategory category("hexir-compile options");
  cl::opt<std::string> input(cl::Positional, cl::desc("<graph.mlir | model.onnx>"), cl::cat(category));
  cl::opt<std::string> output("o", cl::desc("Output executable (.hxb)"), cl::value_desc("file"),
                              cl::cat(category));
  cl::list<std::string> dims("dim",
                             cl::desc("NAME=V1,V2,...: compile an ONNX model once per value of its symbolic "
                                      "dimension NAME (repeatable: every combination), as shape buckets a session "
                                      "picks among"),
                             cl::value_desc("name=sizes"), cl::ZeroOrMore, cl::cat(category));
  cl::list<std::string> donate("donate",
                               cl::desc("NAME: an ONNX input the caller donates, which the module may update in "
                                        "place (a KV cache; repeatable)"),
                               cl::value_desc("input"), cl::ZeroOrMore, cl::cat(category));
  cl::list<std::string> inputShapes("input-shape",
                                    cl::desc("Static shape for an ONNX input with symbolic dimensions, "
                                             "NAME=1x3x224x224 (repeatable)"),
                                    cl::value_desc("name=dims"), cl::cat(category));
  cl::list<std::string> fixInputs("fix-input",
                                  cl::desc("NAME=V1,V2,... or NAME=FILE.npy: fix an ONNX input to this value at "
                                           "compile time (a shape, axes, pads or k the model takes as an input); "
                                           "the executable no longer has that input (repeatable)"),
                                  cl::value_desc("name=values"), cl::ZeroOrMore, cl::cat(category));
  cl::opt<bool> emitMlir("emit-mlir",
                         cl::desc("Write the imported graph (.mlir, before any pass) instead of an executable"),
                         cl::cat(category));
  cl::opt<bool> listOps("list-ops", cl::desc("List the supported ONNX ops and opsets, then exit"),
                        cl::cat(category));
  cl::list<std::string> entry("entry",
                              cl::desc("A function to compile (repeatable; default: every function of the input; "
                                       "an ONNX model's graph is named 'main')"),
                              cl::ZeroOrMore, cl::cat(category));
  cl::opt<std::string> target("target", cl::desc("Target to generate kernels for (default: host; see --list-targets)"),
                              cl::init("host"), cl::cat(category));
  cl::opt<bool> listTargets("list-targets", cl::desc("List the targets kernels can be generated for, then exit"),
                            cl::cat(category));
  cl::opt<std::string> cpu("target-cpu", cl::desc("LLVM CPU name for host kernels (default: host)"),
                           cl::init("host"), cl::cat(category));
  cl::opt<std::string> cudaArch("cuda-arch",
                                cl::desc("GPU architecture for --target cuda, e.g. sm_80 (default: sm_90)"),
                                cl::init("sm_90"), cl::cat(category));
  cl::opt<bool> allowTf32("allow-tf32",
                          cl::desc("--target cuda: f32 matmuls and convolutions on tensor cores in TF32 (10-bit "
                                   "mantissa inputs, f32 accumulation; sm_80 and newer), as PyTorch's allow_tf32"),
                          cl::init(false), cl::cat(category));
  cl::opt<bool> int8Kernels("int8-kernels",
                            cl::desc("Compute a QDQ model's Conv, MatMul and Gemm on its int8 values (int32 "
                                     "accumulation, int8 tensors between kernels) instead of in f32 on dequantized "
                                     "copies (default: where the target multiplies int8 in groups: VNNI, or pairs with SSE2, AVX2 and AVX512BW)"),
                            cl::init(false), cl::cat(category));
  cl::opt<bool> noInt8Kernels("no-int8-kernels",
                              cl::desc("Compute a QDQ model's Conv, MatMul and Gemm in f32 on dequantized copies"),
                              cl::init(false), cl::cat(category));
  cl::opt<std::string> precision("precision",
                                 cl::desc("f32 (default), or bf16: matmuls and convolutions with constant weights "
                                          "multiply bf16 values (weights stored in bf16) and accumulate in f32, "
                                          "on AVX512-BF16 dot products where the CPU has them"),
                                 cl::value_desc("f32|bf16"), cl::init("f32"), cl::cat(category));
  cl::opt<std::string> machine("machine",
                               cl::desc("Machine description: a preset (host, h200, edge) or a machine file "
                                        "(.json): memory spaces and capacities"),
                               cl::value_desc("name|file"), cl::cat(category));
  cl::list<std::string> budgets("memory-budget",
                                cl::desc("Capacity of a memory space of the target, SPACE=BYTES (repeatable): "
                                         "a plan that does not fit fails with the reason"),
                                cl::value_desc("space=bytes"), cl::cat(category));
  cl::list<std::string> places("place",
                               cl::desc("Put the intermediates or the constants in a memory space of the machine, "
                                        "intermediates=SPACE or constants=SPACE (default: the compiler's choice)"),
                               cl::value_desc("what=space"), cl::cat(category));
  cl::opt<std::string> linker("linker", cl::desc("an ld.lld program to link host kernels with (default: lld inside this process)"), cl::cat(category));
  cl::opt<bool> verifyPlan("verify-plan", cl::desc("Verify the memory plan independently"),
                           cl::init(true), cl::cat(category));
  cl::opt<bool> printIR("print-ir-after-all", cl::desc("Print the IR after every pass"),
                        cl::cat(category));
  cl::opt<std::string> dumpGraph("dump-graph", cl::desc("Write the call_tir graph (.mlir) here"),
                                 cl::value_desc("file"), cl::cat(category));
  cl::opt<bool> printDispatches("print-dispatches",
                                cl::desc("Print each dispatch and the source ops (ONNX nodes) it covers"),
                                cl::cat(category));
  cl::opt<bool> printPlan("print-plan", cl::desc("Print the memory plan (buffers, offsets, lifetimes)"),
                          cl::cat(category));
  cl::opt<std::string> planJson("plan-json", cl::desc("Write the memory plan as JSON"),
                                cl::value_desc("file"), cl::cat(category));
  cl::opt<std::string> planSvg("plan-svg", cl::desc("Draw the memory plan as SVG (offset over time)"),
                               cl::value_desc("file"), cl::cat(category));
  cl::opt<double> planTime("plan-time-limit",
                           cl::desc("Seconds for the exact packing search, a safety net (default 60)"),
                           cl::init(60.0), cl::cat(category));
  cl::opt<uint64_t> planNodes("plan-search-nodes",
                              cl::desc("Search nodes for the exact packing search (default 1000000); a node "
                                       "budget keeps compilation deterministic"),
                              cl::init(1000000), cl::cat(category));
  cl::opt<bool> noSchedule("no-schedule", cl::desc("Keep the program order of dispatches"), cl::cat(category));
  cl::opt<bool> noInPlace("no-in-place", cl::desc("Never write results over dying inputs"), cl::cat(category));
  cl::opt<bool> progress("progress",
                         cl::desc("Say each phase as it begins, with the time so far (on a terminal: once the "
                                  "compile has taken 2 s)"),
                         cl::cat(category));
  cl::opt<bool> noFusion("no-fusion", cl::desc("One kernel per elementwise op (no elementwise fusion)"),
                         cl::cat(category));
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv, "Hexir compiler: graph to executable\n");

  // LLVM's parser takes "nan", "inf" and negative numbers for a double.
  if (!std::isfinite(planTime) || planTime < 0 || planTime > 86400) {
    llvm::errs() << "hexir-compile: --plan-time-limit needs seconds from 0 to 86400, got " << planTime << "\n";
    return 2;
  }
  if (listOps) {
    hexir::compiler::printSupportedOnnxOps(llvm::outs());
    return 0;
  }
  if (listTargets) {
    for (const std::string &name : hexir::compiler::targetNames())
      llvm::outs() << name << "\n";
    return 0;
  }
  if (input.empty() || output.empty()) {
    llvm::errs() << "hexir-compile: " << (input.empty() ? "an input graph (.mlir or .onnx)" : "-o OUTPUT")
                 << " must be specified (see --help)\n";
    return 2;
  }
  hexir::compiler::CompileOptions options;
  for (const std::string &text : inputShapes) {
    std::string error;
    if (!hexir::compiler::parseInputShape(text, options.inputShapes, error)) {
      llvm::errs() << "hexir-compile: " << error << "\n";
      return 2;
    }
  }
  for (const std::string &text : fixInputs) {
    std::string error;
    size_t eq = text.find('=');
    bool isFile = eq != std::string::npos && text.size() > 4 && text.compare(text.size() - 4, 4, ".npy") == 0;
    if (isFile ? !readFixedInput(text.substr(0, eq), text.substr(eq + 1), options.fixedInputs, error)
               : !hexir::compiler::parseFixInput(text, options.fixedInputs, error)) {
      llvm::errs() << "hexir-compile: " << error << "\n";
      return 2;
    }
  }
  for (const std::string &text : dims) {
    std::string error;
    if (!hexir::compiler::parseDim(text, options.dims, error)) {
      llvm::errs() << "hexir-compile: " << error << "\n";
      return 2;
    }
  }
  for (const std::string &text : budgets) {
    std::string error;
    if (!hexir::compiler::parseMemoryBudget(text, options.memoryBudgets, error)) {
      llvm::errs() << "hexir-compile: " << error << "\n";
      return 2;
    }
  }
  for (const std::string &text : places) {
    std::string error;
    if (!hexir::compiler::parsePlacement(text, options.placements, error)) {
      llvm::errs() << "hexir-compile: " << error << "\n";
      return 2;
    }
  }
  options.inputPath = input;
  options.outputPath = output;
  // Phases on stderr: always with --progress; on a terminal, once a compile takes 2 s.
  options.progress = progress                ? hexir::compiler::CompileOptions::ProgressReport::kAlways
                     : ::isatty(STDERR_FILENO) ? hexir::compiler::CompileOptions::ProgressReport::kAfterDelay
                                               : hexir::compiler::CompileOptions::ProgressReport::kNever;
  options.entries.assign(entry.begin(), entry.end());
  options.donated.assign(donate.begin(), donate.end());
  options.target = target;
  options.machine = machine;
  options.targetCpu = cpu;
  options.cudaArch = cudaArch;
  options.allowTf32 = allowTf32;
  if (int8Kernels && noInt8Kernels) {
    llvm::errs() << "hexir-compile: --int8-kernels and --no-int8-kernels contradict each other\n";
    return 2;
  }
  options.int8Kernels = int8Kernels     ? hexir::compiler::CompileOptions::Int8Kernels::kOn
                        : noInt8Kernels ? hexir::compiler::CompileOptions::Int8Kernels::kOff
                                        : hexir::compiler::CompileOptions::Int8Kernels::kAuto;
  options.precision = precision;
  options.linkerPath = linker;
  options.verifyPlan = verifyPlan;
  options.printIRAfterAll = printIR;
  options.emitMlir = emitMlir;
  options.dumpGraphPath = dumpGraph;
  options.printPlan = printPlan;
  options.printDispatches = printDispatches;
  options.planJsonPath = planJson;
  options.planSvgPath = planSvg;
  options.planTimeLimit = planTime;
  options.planSearchNodes = planNodes;
  options.schedule = !noSchedule;
  options.inPlace = !noInPlace;
  options.fuseElementwise = !noFusion;
  return hexir::compiler::compileFile(options, llvm::errs(), &llvm::outs()) ? 0 : 1;
}
