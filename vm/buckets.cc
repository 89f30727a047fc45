#include "vm/buckets.h"

#include <algorithm>

namespace hexir::vm {
namespace fb = serializer::fb;

namespace {

// Per tensor, per axis: the dimension whose value is the axis's size in every member, or -1.
std::vector<std::vector<int>> AxesOf(const BucketGroup& group, bool outputs) {
  const std::vector<TensorInfo>& first = outputs ? group.members[0].info->outputs : group.members[0].info->inputs;
  std::vector<std::vector<int>> axes(first.size());
  for (size_t t = 0; t < first.size(); ++t) {
    axes[t].assign(first[t].shape.size(), -1);
    for (size_t a = 0; a < first[t].shape.size(); ++a)
      for (size_t d = 0; d < group.dims.size() && axes[t][a] < 0; ++d) {
        bool follows = true, varies = false;
        for (const BucketGroup::Member& m : group.members) {
          const TensorInfo& info = outputs ? m.info->outputs[t] : m.info->inputs[t];
          follows &= info.shape[a] == m.values[d];
          varies |= m.values[d] != group.members[0].values[d];
        }
        if (follows && varies) axes[t][a] = static_cast<int>(d);
      }
  }
  return axes;
}

std::string Values(const BucketGroup& group, size_t d) {
  std::vector<int64_t> values;
  for (const BucketGroup::Member& m : group.members)
    if (std::find(values.begin(), values.end(), m.values[d]) == values.end()) values.push_back(m.values[d]);
  std::sort(values.begin(), values.end());
  std::string text;
  for (int64_t v : values) text += (text.empty() ? "" : ", ") + std::to_string(v);
  return text;
}

// "x: batchx16" for the message of a shape no bucket takes.
std::string Signature(const BucketGroup& group) {
  std::string text;
  const std::vector<TensorInfo>& inputs = group.members[0].info->inputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    text += (i ? ", " : "") + inputs[i].name + ": ";
    for (size_t a = 0; a < inputs[i].shape.size(); ++a) {
      int d = group.input_axes[i][a];
      text += (a ? "x" : "") + (d >= 0 ? group.dims[static_cast<size_t>(d)] : std::to_string(inputs[i].shape[a]));
    }
  }
  return text;
}

// "batch in (1, 4, 16), smaller sizes padded" (only where no bucket's rows interact).
std::string Sizes(const BucketGroup& group) {
  bool pads = RowsMixedBy(group).empty();
  std::string sizes;
  for (size_t d = 0; d < group.dims.size(); ++d) {
    // The smallest size taken, padded (the compiler checked down to it) or exactly.
    int64_t from = INT64_MAX, smallest = INT64_MAX;
    for (const BucketGroup::Member& m : group.members) {
      if (m.pads_from[d] < m.values[d]) from = std::min(from, m.pads_from[d]);
      smallest = std::min(smallest, m.values[d]);
    }
    std::string padded = from == INT64_MAX ? ", exactly"
                         : std::min(from, smallest) <= 1
                             ? ", smaller sizes padded"
                             : ", smaller sizes from " + std::to_string(std::min(from, smallest)) + " padded";
    sizes += (d ? "; " : "") + group.dims[d] + " in (" + Values(group, d) + ")" +
             (group.paddable[d] && pads ? padded : ", exactly");
  }
  return sizes;
}

}  // namespace

std::string RowsMixedBy(const BucketGroup& group) {
  for (const BucketGroup::Member& m : group.members)
    if (!m.rows_mixed_by.empty()) return "bucket '" + m.info->function->name()->str() + "': " + m.rows_mixed_by;
  return "";
}

std::optional<BucketGroup> FindBucketGroup(const Module& module, const std::string& name) {
  BucketGroup group;
  group.name = name;
  for (const FunctionInfo& info : module.functions()) {
    const fb::Function& fn = *info.function;
    if (fn.bucket_of() == nullptr || fn.bucket_of()->str() != name) continue;
    BucketGroup::Member member;
    member.info = &info;
    for (const fb::DimValue* d : *fn.bucket_dims()) {
      if (group.members.empty()) group.dims.push_back(d->name()->str());
      member.values.push_back(d->value());
    }
    if (fn.rows_mixed_by() != nullptr) member.rows_mixed_by = fn.rows_mixed_by()->str();
    member.pads_from = member.values;
    if (fn.bucket_pads_from() != nullptr && fn.bucket_pads_from()->size() == member.values.size())
      member.pads_from.assign(fn.bucket_pads_from()->begin(), fn.bucket_pads_from()->end());
    group.members.push_back(std::move(member));
  }
  if (group.members.empty()) return std::nullopt;
  auto bytes = [](const BucketGroup::Member& m) {
    uint64_t total = 0;
    for (const TensorInfo& in : m.info->inputs) total += in.byte_size;
    return total;
  };
  std::stable_sort(group.members.begin(), group.members.end(),
                   [&](const auto& a, const auto& b) { return bytes(a) < bytes(b); });
  group.input_axes = AxesOf(group, false);
  group.output_axes = AxesOf(group, true);
  group.paddable.assign(group.dims.size(), true);
  for (const auto* axes : {&group.input_axes, &group.output_axes})
    for (const std::vector<int>& tensor : *axes)
      for (size_t a = 0; a < tensor.size(); ++a)
        if (tensor[a] >= 0 && a != 0) group.paddable[static_cast<size_t>(tensor[a])] = false;
  return group;
}

StatusOr<BucketChoice> ChooseBucket(const BucketGroup& group, Span<const TensorView> inputs,
                                    std::vector<int64_t>& actual) {
  const std::vector<TensorInfo>& sig = group.members[0].info->inputs;
  if (inputs.size() != sig.size())
    return InvalidArgumentError("function '", group.name, "' takes ", sig.size(), " inputs, got ", inputs.size());
  actual.assign(group.dims.size(), -1);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].shape.size() != sig[i].shape.size())
      return InvalidArgumentError("input ", i, " '", sig[i].name, "' has rank ", inputs[i].shape.size(),
                                  "; the buckets of '", group.name, "' take ", Signature(group));
    for (size_t a = 0; a < sig[i].shape.size(); ++a) {
      int d = group.input_axes[i][a];
      if (d < 0) continue;
      int64_t& v = actual[static_cast<size_t>(d)];
      if (v >= 0 && v != inputs[i].shape[a])
        return InvalidArgumentError("dimension '", group.dims[static_cast<size_t>(d)], "' is ", v, " in one input and ",
                                    inputs[i].shape[a], " in input ", i, " '", sig[i].name, "'");
      v = inputs[i].shape[a];
    }
  }
  // The exact bucket, else the smallest (members are in size order) that holds every dimension,
  // padding only the paddable ones.
  std::optional<size_t> holding;
  for (size_t m = 0; m < group.members.size(); ++m) {
    const BucketGroup::Member& member = group.members[m];
    bool exact = true, holds = true;
    for (size_t i = 0; i < inputs.size(); ++i)
      for (size_t a = 0; a < sig[i].shape.size(); ++a) {
        int64_t want = member.info->inputs[i].shape[a], got = inputs[i].shape[a];
        int d = group.input_axes[i][a];
        exact &= want == got;
        holds &= want == got || (d >= 0 && group.paddable[static_cast<size_t>(d)] &&
                                 got >= member.pads_from[static_cast<size_t>(d)] && got < want);
      }
    if (exact) return BucketChoice{m, true};
    if (holds && !holding) holding = m;
  }
  if (holding) {
    const BucketGroup::Member& member = group.members[*holding];
    if (!member.rows_mixed_by.empty())
      return InvalidArgumentError("bucket '", member.info->function->name()->str(), "' of '", group.name,
                                  "' would pad these inputs, but its rows interact (", member.rows_mixed_by,
                                  "): padding would change the answer, so it takes only its exact sizes: ",
                                  Signature(group), " with ", Sizes(group));
    return BucketChoice{*holding, false};
  }
  std::string shapes;
  for (size_t i = 0; i < inputs.size(); ++i)
    shapes += (i ? ", " : "") + sig[i].name + " " + DescribeTensor(inputs[i].element_type, inputs[i].shape);
  return InvalidArgumentError("no shape bucket of '", group.name, "' takes ", shapes, ": its buckets take ",
                              Signature(group), " with ", Sizes(group));
}

void BucketOutputShape(const BucketGroup& group, size_t member, size_t output, const std::vector<int64_t>& actual,
                       std::vector<int64_t>& shape) {
  const TensorInfo& info = group.members[member].info->outputs[output];
  shape.assign(info.shape.begin(), info.shape.end());
  for (size_t a = 0; a < shape.size(); ++a) {
    int d = group.output_axes[output][a];
    if (d >= 0 && actual[static_cast<size_t>(d)] >= 0) shape[a] = actual[static_cast<size_t>(d)];
  }
}

}  // namespace hexir::vm
