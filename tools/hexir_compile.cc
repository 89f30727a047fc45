// hexir-compile: a graph (.mlir) to a Hexir executable (.hxb). A thin main over
// hexir::compiler::compileFile().
#include "Driver/Compile.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::OptionCategory category("hexir-compile options");
  cl::opt<std::string> input(cl::Positional, cl::desc("<graph.mlir>"), cl::Required, cl::cat(category));
  cl::opt<std::string> output("o", cl::desc("Output executable (.hxb)"), cl::value_desc("file"),
                              cl::Required, cl::cat(category));
  cl::opt<std::string> entry("entry", cl::desc("Function to compile (default: main)"),
                             cl::init("main"), cl::cat(category));
  cl::opt<std::string> cpu("target-cpu", cl::desc("LLVM CPU name for host kernels (default: host)"),
                           cl::init("host"), cl::cat(category));
  cl::opt<std::string> linker("linker", cl::desc("ld.lld to link host kernels with"), cl::cat(category));
  cl::opt<bool> verifyPlan("verify-plan", cl::desc("Verify the memory plan independently"),
                           cl::init(true), cl::cat(category));
  cl::opt<bool> printIR("print-ir-after-all", cl::desc("Print the IR after every pass"),
                        cl::cat(category));
  cl::opt<std::string> dumpGraph("dump-graph", cl::desc("Write the call_tir graph (.mlir) here"),
                                 cl::value_desc("file"), cl::cat(category));
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv, "Hexir compiler: graph to executable\n");

  hexir::compiler::CompileOptions options;
  options.inputPath = input;
  options.outputPath = output;
  options.entry = entry;
  options.targetCpu = cpu;
  options.linkerPath = linker;
  options.verifyPlan = verifyPlan;
  options.printIRAfterAll = printIR;
  options.dumpGraphPath = dumpGraph;
  return hexir::compiler::compileFile(options, llvm::errs()) ? 0 : 1;
}
