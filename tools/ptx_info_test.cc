#include "tools/ptx_info.h"

#include <catch2/catch.hpp>

namespace hexir::tools {
namespace {

TEST_CASE("ParsePtxEntries reads each entry's shared and local memory") {
  const char* ptx = R"(
.version 7.8
.target sm_90
.address_size 64

	// .globl	a
.visible .entry a(
	.param .u64 .ptr .align 1 a_param_0
)
.maxntid 256, 1, 1
{
	.local .align 4 .b8 	__local_depot0[3072];
	.reg .b32 	%r<5>;
	.shared .align 16 .b8 tile[4096];
	.shared .align 4 .f32 partial[32];
	ret;
}
.visible .entry b__1(
	.param .u64 .ptr .align 1 b__1_param_0
)
{
	ret;
}
)";
  std::map<std::string, PtxEntryInfo> entries = ParsePtxEntries(ptx);
  REQUIRE(entries.size() == 2);
  CHECK(entries["a"].shared_bytes == 4096 + 32 * 4);
  CHECK(entries["a"].local_bytes == 3072);
  CHECK(entries["b__1"].shared_bytes == 0);
  CHECK(entries["b__1"].local_bytes == 0);
}

TEST_CASE("ParsePtxEntries of text without entries is empty") {
  CHECK(ParsePtxEntries("").empty());
  CHECK(ParsePtxEntries(".version 7.8\n.target sm_80\n").empty());
}

}  // namespace
}  // namespace hexir::tools
