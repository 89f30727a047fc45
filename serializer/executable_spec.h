// ExecutableSpec: everything the compiler hands the writer, as plain C++ values (no MLIR, no
// flatbuffers). The writer lays it out as a .hxb file (writer.h).
// Thread safety: plain values.
#pragma once

#include <array>
#include <optional>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "serializer/executable_generated.h"

namespace hexir::serializer {

using fb::ElementType;
using fb::KernelFormat;
using fb::SlotKind;
using fb::SectionKind;

struct TensorSignature {
  std::string name;
  ElementType element_type = ElementType::F32;
  std::vector<int64_t> shape;
  bool donated = false;     // inputs
  int32_t tied_input = -1;  // outputs
};

struct Slot {
  SlotKind kind = SlotKind::Arena;
  uint32_t index = 0;  // arena number (Arena), input or output number (Input, Output)
  uint64_t offset = 0;
  uint64_t length = 0;
};

struct AllocCommand {
  uint32_t arena = 0;  // index into Function::arenas
};
struct FillCommand {
  Slot target;
  uint64_t pattern = 0;
  uint8_t pattern_length = 4;
};
struct DispatchCommand {
  uint32_t library = 0;
  uint32_t entry = 0;
  std::array<uint32_t, 3> workgroups = {1, 1, 1};
  std::vector<Slot> bindings;  // inputs, then outputs
  uint32_t num_inputs = 0;
  std::vector<int32_t> aliases;  // per output: the input written in place, or -1
  std::vector<std::string> sources;  // the source ops it computes (for profiles)
};
struct CopyCommand {
  Slot source;
  Slot target;
  uint64_t target_stride = 0;  // per trip of the innermost loop (scan outputs)
};
// The next body_length commands, once per trip (see executable.fbs).
struct LoopCommand {
  uint32_t body_length = 0;
  uint64_t max_trips = 0;  // 0: no static bound
  std::optional<Slot> trip_count, condition, iteration;
};
// The next then_length commands when the bool at `condition` is set, else the else_length after.
struct IfCommand {
  Slot condition;
  uint32_t then_length = 0;
  uint32_t else_length = 0;
};
using Command = std::variant<AllocCommand, FillCommand, DispatchCommand, CopyCommand, LoopCommand, IfCommand>;

// Intermediates of a function in one memory space (index into ExecutableSpec::memory_spaces).
struct Arena {
  uint32_t memory_space = 0;
  uint64_t bytes = 0;
  uint32_t alignment = 64;
};

struct Function {
  std::string name;
  std::vector<TensorSignature> inputs;
  std::vector<TensorSignature> outputs;
  std::vector<Arena> arenas;
  std::vector<Command> commands;
  std::string plan_json;  // the memory plan report (planner::FormatPlanJson)
  // A shape bucket of the model function `bucket_of` (empty: none): its symbolic dimensions'
  // values, in the order --dim named them.
  std::string bucket_of;
  std::vector<std::pair<std::string, int64_t>> bucket_dims;
  // Why its rows interact (empty: proved independent, or not a bucket that may be padded).
  std::string rows_mixed_by;
  // Per bucket dimension: the smallest size padded to it (empty: no padding).
  std::vector<int64_t> bucket_pads_from;
};

struct KernelEntry {
  std::string name;
  uint32_t arity = 0;
  uint32_t workgroups = 1;
  uint32_t stack_bytes = 0;  // its stack buffers (hexir-check-kernel-stack bounds them)
  // Bytes it reads or writes through each binding: every dispatch's slots must be this size,
  // so a hand-made executable cannot make a kernel access past a buffer.
  std::vector<uint64_t> binding_bytes;
  std::array<uint32_t, 3> workgroup_size = {1, 1, 1};  // invocations per workgroup
};

struct KernelLibrary {
  KernelFormat format = KernelFormat::HostElf;  // decides its section's kind
  std::vector<uint8_t> code;
  std::vector<KernelEntry> entries;
  std::vector<std::string> cpu_features;  // host code: extensions it needs
  uint32_t compute_capability = 0;        // CUDA code: 90 for sm_90
};

struct ConstantFillSpec {
  uint64_t offset = 0;
  uint64_t length = 0;
  uint64_t pattern = 0;
  uint8_t pattern_length = 4;
};

struct ConstantWideningSpec {
  uint64_t source = 0;  // byte offset in narrow_constants
  uint64_t target = 0;  // byte offset in the FilledConstant space
  uint64_t count = 0;   // values
  uint8_t format = 0;   // 0: f16, 1: bf16 (base/half.h NarrowFloat)
};

struct MemorySpaceSpec {
  std::string name;
  bool host_visible = false;
};

struct ExecutableSpec {
  std::string producer;
  std::string target = "host";                          // the compiler target
  std::vector<MemorySpaceSpec> memory_spaces = {{"host", true}};  // the target's memory spaces
  uint32_t constants_memory_space = 0;                  // where the constant pool is resident
  std::vector<KernelLibrary> libraries;
  std::vector<uint8_t> constants;  // the constant pool; Constant slots index into it
  uint64_t filled_constants_bytes = 0;
  std::vector<ConstantFillSpec> constant_fills;  // FilledConstant slots index into these
  std::vector<uint8_t> narrow_constants;  // 16-bit constants, widened at load into FilledConstant
  std::vector<ConstantWideningSpec> constant_widenings;
  std::vector<Function> functions;
  // What the model says of itself (key, value), in key order.
  std::vector<std::pair<std::string, std::string>> metadata;
};

// Bytes per element; 0 for an unknown type.
uint64_t ElementTypeSize(ElementType type);
// "f32", "i64", ...
const char* ElementTypeName(ElementType type);

}  // namespace hexir::serializer
