//===- Compile.h - the Hexir compiler as a library --------------*- C++ -*-===//
//
// hexir-compile is a thin main over compileFile(). A compilation owns everything it creates
// (MLIRContext, modules, LLVM context, TargetMachine, object buffers) and releases it before
// returning. Diagnostics are printed to `diagnostics` with the input's locations.
//
//===----------------------------------------------------------------------===//
#ifndef HEXIR_COMPILER_DRIVER_COMPILE_H
#define HEXIR_COMPILER_DRIVER_COMPILE_H

#include "Import/Onnx/FixedInput.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
}

namespace hexir::compiler {

struct CompileOptions {
  std::string inputPath;   // a .mlir graph or an .onnx model
  // ONNX inputs with symbolic or unknown dimensions: name -> shape (--input-shape).
  std::map<std::string, std::vector<int64_t>> inputShapes;
  // Shape buckets (--dim NAME=V1,V2,...): an ONNX model's symbolic dimensions and their values;
  // one function per combination, named after the model's function and the values
  // (main_batch4), sharing the constants; a session of the model's function picks among them.
  std::vector<std::pair<std::string, std::vector<int64_t>>> dims;
  // ONNX inputs fixed to a value at compile time (--fix-input NAME=V1,V2,... or =FILE.npy): they
  // become constants and leave the module's inputs.
  std::map<std::string, onnx_import::FixedInput> fixedInputs;
  // ONNX inputs the caller donates (--donate NAME): updated in place where an output is
  // computed from one (a KV cache); hexir-run --in-place binds such an output onto its input.
  std::vector<std::string> donated;
  std::string outputPath;  // the .hxb to write; nothing is written when compilation fails
  // The functions to compile (--entry), each a function of the executable sharing its
  // constants; empty: every function definition of the input (an ONNX model's graph is 'main',
  // or the one name given).
  std::vector<std::string> entries;
  std::string target = "host";     // a registered target (Target/TargetRegistry.h)
  std::string targetCpu = "host";
  std::string cudaArch = "sm_90";  // --cuda-arch: the GPU architecture of --target cuda
  // --allow-tf32: f32 matmuls and convolutions on CUDA tensor cores in TF32 (sm_80 and newer),
  // as PyTorch's allow_tf32; off by default.
  bool allowTf32 = false;
  // A QDQ model's Conv, MatMul and Gemm computed on its int8 values (int32 accumulation, int8
  // tensors between kernels) or in f32 on dequantized copies: --int8-kernels, --no-int8-kernels,
  // by default where the target multiplies int8 in groups (VNNI's fours, vpmaddwd's pairs), which
  // make them the faster.
  enum class Int8Kernels { kAuto, kOn, kOff };
  Int8Kernels int8Kernels = Int8Kernels::kAuto;
  // --precision: "f32", or "bf16": matmuls and convolutions with constant weights multiply bf16
  // values and accumulate in f32 (host targets; Transforms/ReducePrecision.cpp).
  std::string precision = "f32";
  // --memory-budget SPACE=BYTES: the capacity of a memory space of the target (constants and
  // arena together when both live there).
  std::map<std::string, uint64_t> memoryBudgets;
  // --machine NAME|FILE: the machine's memory spaces and capacities for the target.
  std::string machine;
  // --place WHAT=SPACE: "intermediates" or "constants" in a named space instead of the
  // compiler's choice (a space the kernels cannot see is refused with the transfer it needs).
  std::map<std::string, std::string> placements;
  std::string linkerPath;  // empty: the ld.lld found at build time
  bool verifyPlan = true;  // run the planner's independent verifier on the memory plan
  bool printIRAfterAll = false;
  bool emitMlir = false;      // stop after import/parsing: the output is the graph as .mlir text
  std::string dumpGraphPath;  // if set, write the call_tir graph (.mlir) here
  bool printPlan = false;     // print the memory plan table to `planOutput`
  bool printDispatches = false;  // print each dispatch and the source ops it covers to `planOutput`
  std::string planJsonPath;   // if set, write the memory plan as JSON here
  std::string planSvgPath;    // if set, draw the memory plan (offset over time) here
  double planTimeLimit = 60.0;         // seconds for the exact packing search (a safety net)
  uint64_t planSearchNodes = 1000000;  // search nodes: a budget that keeps output deterministic
  bool schedule = true;       // memory-aware dispatch order
  bool inPlace = true;        // elementwise results overwrite dying inputs
  bool fuseElementwise = true;  // chains of elementwise ops as one kernel
  // The phases said on the diagnostics stream as the compile goes (Driver/Progress.h): never,
  // always (--progress), or once it has taken 2 s (hexir-compile on a terminal).
  enum class ProgressReport { kNever, kAlways, kAfterDelay };
  ProgressReport progress = ProgressReport::kNever;
};

// Compiles a graph into executable bytes; false after printing diagnostics.
// `planOutput` receives the --print-plan table.
bool compileToBytes(const CompileOptions &options, std::vector<uint8_t> &bytes,
                    llvm::raw_ostream &diagnostics, llvm::raw_ostream *planOutput = nullptr);
// Parses --memory-budget text "SPACE=BYTES" into `budgets`; false with `error` set.
bool parseMemoryBudget(const std::string &text, std::map<std::string, uint64_t> &budgets, std::string &error);
// Parses --place text "intermediates=SPACE" / "constants=SPACE" into `placements`.
bool parsePlacement(const std::string &text, std::map<std::string, std::string> &placements, std::string &error);
// Parses --input-shape text "NAME=1x3x224x224" into `shapes`; false with `error` set.
// Parses --dim text "NAME=V1,V2,..." (values 1 to 2^31 - 1, each once) into `dims`.
bool parseDim(const std::string &text, std::vector<std::pair<std::string, std::vector<int64_t>>> &dims,
              std::string &error);
bool parseInputShape(const std::string &text, std::map<std::string, std::vector<int64_t>> &shapes,
                     std::string &error);
// Parses --fix-input text "NAME=V1,V2,..." into `fixed` (NAME=FILE.npy is the tool's: it reads
// the file); false with `error` set.
bool parseFixInput(const std::string &text, std::map<std::string, onnx_import::FixedInput> &fixed,
                   std::string &error);

// The targets --target accepts (--list-targets).
std::vector<std::string> targetNames();
// The machine presets --machine accepts by name.
std::vector<std::string> machineNames();

// Prints the ONNX ops the importer supports (--list-ops).
void printSupportedOnnxOps(llvm::raw_ostream &os);

// compileToBytes, then writes options.outputPath atomically ("-": standard output).
bool compileFile(const CompileOptions &options, llvm::raw_ostream &diagnostics,
                 llvm::raw_ostream *planOutput = nullptr);

} // namespace hexir::compiler

#endif // HEXIR_COMPILER_DRIVER_COMPILE_H
