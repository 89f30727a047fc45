// Writes the loader fuzzer's seeds: valid executables (the VM tests' ones): the test executable,
// and with a third argument the one with loops and branches (LOOP, IF, strided COPY).
#include "base/file_mapping.h"
#include "serializer/writer.h"
#include "vm/test_executable.h"

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) return 1;
  auto bytes = hexir::serializer::WriteExecutable(hexir::testing::TestExecutableSpec(argv[1]));
  if (!hexir::WriteFileAtomically(argv[2], bytes.data(), bytes.size()).ok()) return 1;
  if (argc == 3) return 0;
  bytes = hexir::serializer::WriteExecutable(hexir::testing::ControlFlowExecutableSpec(argv[1]));
  return hexir::WriteFileAtomically(argv[3], bytes.data(), bytes.size()).ok() ? 0 : 1;
}
