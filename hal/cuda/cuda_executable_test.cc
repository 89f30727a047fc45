#include "hal/cuda/cuda_executable.h"

#include <catch2/catch.hpp>

namespace hexir::hal::cuda {
namespace {

TEST_CASE("PTX runs on its compute capability and later ones, and an older device refuses it") {
  CHECK(CheckComputeCapability(90, 90, "cuda:0").ok());
  CHECK(CheckComputeCapability(80, 90, "cuda:0").ok());
  CHECK(CheckComputeCapability(0, 50, "cuda:0").ok());  // no requirement recorded
  Status s = CheckComputeCapability(90, 86, "cuda:1");
  CHECK(s.code() == StatusCode::kFailedPrecondition);
  CHECK(s.message() ==
        "the kernels were compiled for sm_90 (compute capability 9.0); device cuda:1 has compute capability 8.6: "
        "recompile with hexir-compile --target cuda --cuda-arch sm_86");
}

}  // namespace
}  // namespace hexir::hal::cuda
