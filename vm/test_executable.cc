#include "vm/test_executable.h"

#include <unistd.h>

#include <cstring>

#include "base/file_mapping.h"
#include "serializer/writer.h"

namespace hexir::testing {

using serializer::AllocCommand;
using serializer::DispatchCommand;
using serializer::ExecutableSpec;
using serializer::FillCommand;
using serializer::Function;
using serializer::KernelLibrary;
using serializer::SlotKind;
namespace fbt = serializer::fb;

serializer::ExecutableSpec TestExecutableSpec(const std::string& kernel_library_path) {
  ExecutableSpec spec;
  auto elf = ReadFileToString(kernel_library_path);
  if (!elf.ok()) return spec;
  KernelLibrary lib;
  lib.code.assign(elf->begin(), elf->end());
  lib.entries = {{"test_add8", 3, 1, 0, {32, 32, 32}}, {"test_relu8", 2, 1, 0, {32, 32}}};
  spec.libraries.push_back(lib);
  // constants: 8 floats of -1
  spec.constants.resize(32);
  float minus_one[8];
  for (float& v : minus_one) v = -1.0f;
  std::memcpy(spec.constants.data(), minus_one, 32);
  Function fn;
  fn.name = "main";
  fn.inputs = {{"x", fbt::ElementType::F32, {2, 4}}};
  fn.outputs = {{"y", fbt::ElementType::F32, {2, 4}}, {"t", fbt::ElementType::F32, {8}}};
  fn.arenas = {{0, 64, 64}};  // one 64-byte arena in memory space 0 (host)
  fn.commands.push_back(AllocCommand{0});
  // t = x + (-1) -> output 1; a = relu(t) -> arena[0, 32); arena[32, 64) = 2 (FILL);
  // arena[32, 64) += a (in place, alias bit); y = arena[32, 64) + 3 (a filled constant).
  spec.filled_constants_bytes = 64;
  spec.constant_fills = {{32, 32, 0x40400000, 4}};  // 3.0f at [32, 64)
  DispatchCommand add;
  add.bindings = {{SlotKind::Input, 0, 0, 32}, {SlotKind::Constant, 0, 0, 32}, {SlotKind::Output, 1, 0, 32}};
  add.num_inputs = 2;
  add.aliases = {-1};
  fn.commands.push_back(add);
  DispatchCommand relu;
  relu.entry = 1;
  relu.bindings = {{SlotKind::Output, 1, 0, 32}, {SlotKind::Arena, 0, 0, 32}};
  relu.num_inputs = 1;
  relu.aliases = {-1};
  fn.commands.push_back(relu);
  fn.commands.push_back(FillCommand{{SlotKind::Arena, 0, 32, 32}, 0x40000000, 4});  // 2.0f
  DispatchCommand accumulate;
  accumulate.bindings = {{SlotKind::Arena, 0, 0, 32}, {SlotKind::Arena, 0, 32, 32}, {SlotKind::Arena, 0, 32, 32}};
  accumulate.num_inputs = 2;
  accumulate.aliases = {1};
  fn.commands.push_back(accumulate);
  DispatchCommand add3;
  add3.bindings = {{SlotKind::Arena, 0, 32, 32}, {SlotKind::FilledConstant, 0, 32, 32}, {SlotKind::Output, 0, 0, 32}};
  add3.num_inputs = 2;
  add3.aliases = {-1};
  fn.commands.push_back(add3);
  spec.functions.push_back(fn);
  return spec;
}

serializer::ExecutableSpec ControlFlowExecutableSpec(const std::string& kernel_library_path) {
  using serializer::CopyCommand;
  using serializer::IfCommand;
  using serializer::LoopCommand;
  using serializer::Slot;
  ExecutableSpec spec = TestExecutableSpec(kernel_library_path);
  spec.functions.clear();
  const Slot acc{SlotKind::Arena, 0, 0, 32}, trip{SlotKind::Arena, 0, 32, 8}, flag{SlotKind::Arena, 0, 40, 1};
  const Slot minus_one{SlotKind::Constant, 0, 0, 32}, x{SlotKind::Input, 0, 0, 32}, y{SlotKind::Output, 0, 0, 32};
  auto decrement = [&] {
    DispatchCommand d;
    d.bindings = {acc, minus_one, acc};
    d.num_inputs = 2;
    d.aliases = {0};
    return d;
  };
  Function main;
  main.name = "main";
  main.inputs = {{"x", fbt::ElementType::F32, {8}}, {"n", fbt::ElementType::I64, {}}, {"c", fbt::ElementType::BOOL, {}}};
  main.outputs = {{"y", fbt::ElementType::F32, {8}}, {"rows", fbt::ElementType::F32, {4, 8}},
                  {"last", fbt::ElementType::I64, {}}};
  main.arenas = {{0, 64, 64}};
  main.commands.push_back(AllocCommand{0});
  main.commands.push_back(CopyCommand{x, acc});
  main.commands.push_back(FillCommand{trip, ~uint64_t{0}, 8});
  LoopCommand loop;
  loop.body_length = 2;
  loop.max_trips = 4;
  loop.trip_count = Slot{SlotKind::Input, 1, 0, 8};
  loop.iteration = trip;
  main.commands.push_back(loop);
  main.commands.push_back(decrement());
  main.commands.push_back(CopyCommand{acc, {SlotKind::Output, 1, 0, 32}, 32});
  main.commands.push_back(IfCommand{{SlotKind::Input, 2, 0, 1}, 1, 1});
  DispatchCommand relu;
  relu.entry = 1;
  relu.bindings = {acc, y};
  relu.num_inputs = 1;
  relu.aliases = {-1};
  main.commands.push_back(relu);
  main.commands.push_back(CopyCommand{acc, y});
  main.commands.push_back(CopyCommand{trip, {SlotKind::Output, 2, 0, 8}});
  spec.functions.push_back(main);

  Function once;
  once.name = "once";
  once.inputs = {main.inputs[0]};
  once.outputs = {main.outputs[0]};
  once.arenas = {{0, 64, 64}};
  once.commands.push_back(AllocCommand{0});
  once.commands.push_back(CopyCommand{x, acc});
  once.commands.push_back(FillCommand{{SlotKind::Arena, 0, 40, 8}, 1, 1});
  LoopCommand loop_while;
  loop_while.body_length = 2;
  loop_while.condition = flag;
  once.commands.push_back(loop_while);
  once.commands.push_back(decrement());
  once.commands.push_back(FillCommand{{SlotKind::Arena, 0, 40, 8}, 0, 1});
  once.commands.push_back(CopyCommand{acc, y});
  spec.functions.push_back(once);

  Function nested;
  nested.name = "nested";
  nested.inputs = {main.inputs[0]};
  nested.outputs = {main.outputs[0], {"rows", fbt::ElementType::F32, {2, 8}}};
  nested.arenas = {{0, 64, 64}};
  nested.commands.push_back(AllocCommand{0});
  nested.commands.push_back(CopyCommand{x, acc});
  LoopCommand outer, inner;
  outer.body_length = 3;
  outer.max_trips = 2;
  inner.body_length = 1;
  inner.max_trips = 3;
  nested.commands.push_back(outer);
  nested.commands.push_back(inner);
  nested.commands.push_back(decrement());
  nested.commands.push_back(CopyCommand{acc, {SlotKind::Output, 1, 0, 32}, 32});
  nested.commands.push_back(CopyCommand{acc, y});
  spec.functions.push_back(nested);
  return spec;
}

std::string WriteTestExecutable(const std::string& kernel_library_path, const std::string& tag) {
  return WriteSpec(TestExecutableSpec(kernel_library_path), tag);
}

std::string WriteSpec(const serializer::ExecutableSpec& spec, const std::string& tag) {
  std::vector<uint8_t> bytes = serializer::WriteExecutable(spec);
  std::string path = "/tmp/hexir_vm_test_" + tag + "." + std::to_string(::getpid()) + ".hxb";
  if (!WriteFileAtomically(path, bytes.data(), bytes.size()).ok()) return "";
  return path;
}

}  // namespace hexir::testing
