#include "hexir/status.h"

#include <catch2/catch.hpp>

#include "base/alignment.h"

namespace hexir {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgumentError("odd value ", x);
  return x / 2;
}

Status Quarter(int x, int* out) {
  HEXIR_ASSIGN_OR_RETURN(int h, Half(x));
  HEXIR_ASSIGN_OR_RETURN(*out, Half(h));
  return Status::Ok();
}

TEST_CASE("Status carries code and message", "[base]") {
  Status ok = Status::Ok();
  CHECK(ok.ok());
  CHECK(ok.ToString() == "OK");
  Status bad = DataLossError("checksum ", 3, " != ", 4);
  CHECK_FALSE(bad.ok());
  CHECK(bad.code() == StatusCode::kDataLoss);
  CHECK(bad.ToString() == "DATA_LOSS: checksum 3 != 4");
}

TEST_CASE("StatusOr propagates through the macros", "[base]") {
  int out = 0;
  CHECK(Quarter(8, &out).ok());
  CHECK(out == 2);
  Status s = Quarter(6, &out);
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message() == "odd value 3");
}

TEST_CASE("Alignment helpers", "[base]") {
  CHECK(AlignUp(0, 64) == 0);
  CHECK(AlignUp(1, 64) == 64);
  CHECK(AlignUp(64, 64) == 64);
  CHECK(AlignUp(65, 4096) == 4096);
  CHECK(RangeWithin(10, 5, 15));
  CHECK_FALSE(RangeWithin(10, 6, 15));
  CHECK_FALSE(RangeWithin(~0ull, 2, ~0ull));  // overflow must not wrap around
}

}  // namespace
}  // namespace hexir
