// Writes the loader fuzzer's seed: a valid executable (the VM tests' one).
#include "base/file_mapping.h"
#include "serializer/writer.h"
#include "vm/test_executable.h"

int main(int argc, char** argv) {
  if (argc != 3) return 1;
  auto bytes = hexir::serializer::WriteExecutable(hexir::testing::TestExecutableSpec(argv[1]));
  return hexir::WriteFileAtomically(argv[2], bytes.data(), bytes.size()).ok() ? 0 : 1;
}
