// Shape buckets (hexir-compile --dim NAME=V1,V2,...): the functions compiled from one model
// function with its symbolic dimensions fixed to each combination of values. A session of the
// model function runs the bucket that fits the caller's shapes: the one that matches exactly,
// else the smallest that holds them, with the inputs padded with zeros and the outputs sliced
// back. Padding is exact only where rows are independent, so a dimension is padded only where
// it is the leading axis (the batch) of every tensor that has it; another (a sequence length)
// must match one of its values exactly. A bucket whose rows interact (a Softmax over the batch;
// the compiler proves which do not) takes only inputs of its exact shape.
//
// Which axis carries which dimension is read off the buckets' signatures: an axis whose size
// is the dimension's value in every bucket (a dimension with one value carries none).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hexir/span.h"
#include "hexir/status.h"
#include "hexir/types.h"
#include "vm/module.h"

namespace hexir::vm {

struct BucketGroup {
  std::string name;               // the model function ("main")
  std::vector<std::string> dims;  // in --dim order
  struct Member {
    const FunctionInfo* info = nullptr;
    std::vector<int64_t> values;  // per dimension
    // Why its rows interact (empty: they do not): it is then never padded to (the compiler's
    // hexir-check-bucket-rows), and requests are not batched into it.
    std::string rows_mixed_by;
    // Per dimension: the smallest size padded to it (the compiler checked down to it); its own
    // size where nothing is.
    std::vector<int64_t> pads_from;
  };
  std::vector<Member> members;  // smallest first (by input bytes)
  // Per input and output, per axis: the dimension it carries, or -1.
  std::vector<std::vector<int>> input_axes, output_axes;
  std::vector<bool> paddable;  // per dimension: the leading axis of every tensor carrying it
};

// The group of the functions compiled as buckets of `name`; nullopt when there are none.
std::optional<BucketGroup> FindBucketGroup(const Module& module, const std::string& name);
// Why requests may not be batched into the group's buckets: the first bucket whose rows
// interact, said for a message ("" when rows are independent in every bucket).
std::string RowsMixedBy(const BucketGroup& group);

struct BucketChoice {
  size_t member = 0;
  bool exact = false;  // the inputs have the bucket's shapes: no padding
};
// The bucket for `inputs` (their shapes and count; types are checked by the run). `actual`
// (one entry per dimension) receives each dimension's size in the inputs. INVALID_ARGUMENT
// names the buckets when none fits.
StatusOr<BucketChoice> ChooseBucket(const BucketGroup& group, Span<const TensorView> inputs,
                                    std::vector<int64_t>& actual);
// Output `output`'s shape for a run of `member` on inputs whose dimensions are `actual`.
void BucketOutputShape(const BucketGroup& group, size_t member, size_t output, const std::vector<int64_t>& actual,
                       std::vector<int64_t>& shape);

}  // namespace hexir::vm
