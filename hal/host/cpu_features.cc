#include "hal/host/cpu_features.h"

namespace hexir::hal {

bool HostCpuSupports(const std::string& f) {
#if defined(__x86_64__) || defined(__i386__)
  // __builtin_cpu_supports needs literal names, hence the table.
  if (f == "sse4.1") return __builtin_cpu_supports("sse4.1");
  if (f == "sse4.2") return __builtin_cpu_supports("sse4.2");
  if (f == "popcnt") return __builtin_cpu_supports("popcnt");
  if (f == "avx") return __builtin_cpu_supports("avx");
  if (f == "avx2") return __builtin_cpu_supports("avx2");
  if (f == "fma") return __builtin_cpu_supports("fma");
  if (f == "f16c") return __builtin_cpu_supports("f16c");
  if (f == "bmi") return __builtin_cpu_supports("bmi");
  if (f == "bmi2") return __builtin_cpu_supports("bmi2");
  if (f == "avx512f") return __builtin_cpu_supports("avx512f");
  if (f == "avx512bw") return __builtin_cpu_supports("avx512bw");
  if (f == "avx512dq") return __builtin_cpu_supports("avx512dq");
  if (f == "avx512vl") return __builtin_cpu_supports("avx512vl");
  if (f == "avx512cd") return __builtin_cpu_supports("avx512cd");
  if (f == "avx512vnni") return __builtin_cpu_supports("avx512vnni");
  if (f == "avxvnni") return __builtin_cpu_supports("avxvnni");
  if (f == "avx512bf16") return __builtin_cpu_supports("avx512bf16");
#endif
  return false;
}

}  // namespace hexir::hal
