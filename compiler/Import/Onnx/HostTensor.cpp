//===- HostTensor.cpp - constant tensors the ONNX importer computes with -------===//
#include "Import/Onnx/HostTensor.h"

#include <cassert>

namespace hexir::onnx_import {

bool isFloat(DType t) { return t == DType::kFloat; }

bool isUnsigned(DType t) {
  return t == DType::kUInt8 || t == DType::kUInt16 || t == DType::kUInt32 || t == DType::kUInt64;
}

int64_t wrapInteger(int64_t v, DType t) {
  switch (t) {
  case DType::kBool: return v != 0;
  case DType::kInt8: return static_cast<int8_t>(v);
  case DType::kUInt8: return static_cast<uint8_t>(v);
  case DType::kInt16: return static_cast<int16_t>(v);
  case DType::kUInt16: return static_cast<uint16_t>(v);
  case DType::kInt32: return static_cast<int32_t>(v);
  case DType::kUInt32: return static_cast<uint32_t>(v);
  default: return v;  // int64 and uint64: all 64 bits
  }
}

const char *dtypeName(DType t) {
  switch (t) {
  case DType::kFloat: return "float";
  case DType::kInt64: return "int64";
  case DType::kInt32: return "int32";
  case DType::kBool: return "bool";
  case DType::kInt8: return "int8";
  case DType::kUInt8: return "uint8";
  case DType::kInt16: return "int16";
  case DType::kUInt16: return "uint16";
  case DType::kUInt32: return "uint32";
  case DType::kUInt64: return "uint64";
  }
  return "?";
}

int64_t elementBytes(DType type) {
  switch (type) {
  case DType::kFloat: return 4;
  case DType::kInt64: return 8;
  case DType::kInt32: return 4;
  case DType::kBool: return 1;
  case DType::kInt8: return 1;
  case DType::kUInt8: return 1;
  case DType::kInt16: return 2;
  case DType::kUInt16: return 2;
  case DType::kUInt32: return 4;
  case DType::kUInt64: return 8;
  }
  return 8;
}

std::string sizeProblem(const std::vector<int64_t> &shape, DType type) {
  uint64_t bytes = static_cast<uint64_t>(elementBytes(type));
  bool tooLarge = false;
  for (int64_t d : shape)
    if (d < 0)
      return "has a negative dimension (" + std::to_string(d) + ")";
  // Zero dimensions aside, so that an empty tensor's other dimensions stay in range too (every
  // element count computed from them, in any order, then fits 64 bits).
  bool empty = false;
  for (int64_t d : shape) {
    empty |= d == 0;
    if (d != 0 && !tooLarge && __builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes))
      tooLarge = true;
  }
  if (!tooLarge && bytes <= kMaxTensorBytes)
    return "";
  if (empty)
    return "has dimensions whose product (the 0 aside) exceeds the " + std::to_string(kMaxTensorBytes) +
           " bytes (1 TiB) Hexir allows for one tensor";
  return "would take " + (tooLarge ? std::string("more than 2^64") : std::to_string(bytes)) + " bytes (" +
         dtypeName(type) + "), more than the " + std::to_string(kMaxTensorBytes) +
         " bytes (1 TiB) Hexir allows for one tensor";
}

bool foldable(const std::vector<int64_t> &shape) {
  for (int64_t d : shape)
    if (d < 0)
      return false;
  return elementCount(shape) <= kMaxFoldedElements;
}

int64_t elementCount(const std::vector<int64_t> &shape) {
  for (int64_t d : shape)
    if (d == 0)
      return 0;
  int64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n))
      return INT64_MAX;
  return n;
}

int64_t HostTensor::numElements() const { return elementCount(shape); }

std::vector<int64_t> HostTensor::ints() const {
  std::vector<int64_t> out(numElements());
  for (int64_t k = 0; k < numElements(); ++k)
    out[k] = asInt(k);
  return out;
}

HostTensor HostTensor::zeros(DType type, std::vector<int64_t> shape) {
  HostTensor t;
  t.type = type;
  t.shape = std::move(shape);
  if (isFloat(type))
    t.f.assign(t.numElements(), 0.0f);
  else
    t.i.assign(t.numElements(), 0);
  return t;
}

HostTensor HostTensor::fromInts(std::vector<int64_t> values, std::vector<int64_t> shape, DType type) {
  HostTensor t;
  t.type = type;
  t.shape = std::move(shape);
  t.i = std::move(values);
  assert(static_cast<int64_t>(t.i.size()) == t.numElements());
  return t;
}

HostTensor HostTensor::scalarFloat(float v) {
  HostTensor t;
  t.f = {v};
  return t;
}

std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

std::string shapeString(const std::vector<int64_t> &shape) {
  if (shape.empty())
    return "scalar";
  std::string s;
  for (size_t d = 0; d < shape.size(); ++d)
    s += (d ? "x" : "") + std::to_string(shape[d]);
  return s;
}

bool broadcastShapes(const std::vector<int64_t> &a, const std::vector<int64_t> &b,
                     std::vector<int64_t> &out) {
  size_t rank = std::max(a.size(), b.size());
  out.assign(rank, 1);
  for (size_t k = 0; k < rank; ++k) {
    int64_t da = k < rank - a.size() ? 1 : a[k - (rank - a.size())];
    int64_t db = k < rank - b.size() ? 1 : b[k - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return false;
    out[k] = da == 1 ? db : da;
  }
  return true;
}

namespace {
// Offset into `t` of the broadcast output index `index` (output rank `rank`).
int64_t broadcastOffset(const HostTensor &t, const std::vector<int64_t> &index) {
  size_t lead = index.size() - t.shape.size();
  int64_t offset = 0, stride = 1;
  for (int64_t d = static_cast<int64_t>(t.shape.size()) - 1; d >= 0; --d) {
    int64_t i = t.shape[d] == 1 ? 0 : index[d + lead];
    offset += i * stride;
    stride *= t.shape[d];
  }
  return offset;
}

// out[k] = t[src], whatever the storage.
void copyElement(HostTensor &out, int64_t k, const HostTensor &t, int64_t src) {
  if (isFloat(out.type))
    out.f[k] = static_cast<float>(t.asDouble(src));
  else
    out.i[k] = t.asInt(src);
}

// The next row-major index of `shape`.
void increment(std::vector<int64_t> &index, const std::vector<int64_t> &shape) {
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    if (++index[d] < shape[d])
      return;
    index[d] = 0;
  }
}

// out[index] = t[base + sum index[d] * strides[d]]: transposes, slices and broadcasts are all
// one strided walk (a stride of 0 repeats, a negative one walks backwards).
HostTensor stridedCopy(const HostTensor &t, const std::vector<int64_t> &shape, int64_t base,
                       const std::vector<int64_t> &strides) {
  HostTensor out = HostTensor::zeros(t.type, shape);
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t k = 0; k < out.numElements(); ++k) {
    int64_t src = base;
    for (size_t d = 0; d < shape.size(); ++d)
      src += index[d] * strides[d];
    copyElement(out, k, t, src);
    increment(index, shape);
  }
  return out;
}

} // namespace

HostTensor foldElementwise(const std::vector<const HostTensor *> &inputs, DType resultType,
                           const std::function<double(const std::vector<double> &)> &fop,
                           const std::function<int64_t(const std::vector<int64_t> &)> &iop) {
  std::vector<int64_t> shape;
  for (const HostTensor *t : inputs) {
    std::vector<int64_t> next;
    bool ok = broadcastShapes(shape, t->shape, next);
    assert(ok && "caller checks broadcasting");
    (void)ok;
    shape = next;
  }
  HostTensor out = HostTensor::zeros(resultType, shape);
  bool allInt = true;
  for (const HostTensor *t : inputs)
    allInt &= !isFloat(t->type);
  std::vector<int64_t> index(shape.size(), 0);
  std::vector<double> fargs(inputs.size());
  std::vector<int64_t> iargs(inputs.size());
  for (int64_t k = 0; k < out.numElements(); ++k) {
    if (allInt) {
      for (size_t j = 0; j < inputs.size(); ++j)
        iargs[j] = inputs[j]->i[broadcastOffset(*inputs[j], index)];
      int64_t v = iop(iargs);
      if (isFloat(resultType))
        out.f[k] = static_cast<float>(v);
      else
        out.i[k] = wrapInteger(v, resultType);
    } else {
      for (size_t j = 0; j < inputs.size(); ++j)
        fargs[j] = inputs[j]->asDouble(broadcastOffset(*inputs[j], index));
      double v = fop(fargs);
      if (isFloat(resultType))
        out.f[k] = static_cast<float>(v);
      else
        out.i[k] = static_cast<int64_t>(v);
    }
    increment(index, shape);
  }
  return out;
}

HostTensor castTo(const HostTensor &t, DType type) {
  HostTensor out = HostTensor::zeros(type, t.shape);
  for (int64_t k = 0; k < t.numElements(); ++k) {
    if (isFloat(type))
      out.f[k] = static_cast<float>(t.asDouble(k));
    else if (type == DType::kBool)
      out.i[k] = t.asDouble(k) != 0.0;
    else if (type == DType::kInt32 && isFloat(t.type))  // NaN and out of range: INT32_MIN, as cvttss2si
      out.i[k] = t.f[k] >= -2147483648.0f && t.f[k] < 2147483648.0f ? static_cast<int32_t>(t.f[k]) : INT32_MIN;
    else if (type == DType::kInt32)
      out.i[k] = static_cast<int32_t>(t.asInt(k));
    else if (type == DType::kUInt64 && isFloat(t.type))  // as x86's conversion to unsigned
      out.i[k] = t.f[k] >= 0.0f && t.f[k] < 18446744073709551616.0f ? static_cast<int64_t>(static_cast<uint64_t>(t.f[k]))
                                                                     : INT64_MIN;
    else  // wraps, as NumPy's astype
      out.i[k] = wrapInteger(t.asInt(k), type);
  }
  return out;
}

HostTensor transpose(const HostTensor &t, const std::vector<int64_t> &perm) {
  std::vector<int64_t> inStrides = stridesOf(t.shape), shape(perm.size()), strides(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) {
    shape[d] = t.shape[perm[d]];
    strides[d] = inStrides[perm[d]];
  }
  return stridedCopy(t, shape, 0, strides);
}

HostTensor reshape(const HostTensor &t, std::vector<int64_t> shape) {
  HostTensor out = t;
  out.shape = std::move(shape);
  assert(out.numElements() == t.numElements());
  return out;
}

std::vector<int64_t> gatheredShape(const std::vector<int64_t> &shape, const std::vector<int64_t> &indices,
                                   int64_t axis) {
  std::vector<int64_t> out(shape.begin(), shape.begin() + axis);
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), shape.begin() + axis + 1, shape.end());
  return out;
}

HostTensor gather(const HostTensor &t, const HostTensor &indices, int64_t axis) {
  HostTensor out = HostTensor::zeros(t.type, gatheredShape(t.shape, indices.shape, axis));
  if (out.numElements() == 0)  // (its other dimensions may count 2^38 rows of nothing)
    return out;
  int64_t outer = 1, inner = 1, dim = t.shape[axis];
  for (int64_t d = 0; d < axis; ++d)
    outer *= t.shape[d];
  for (size_t d = axis + 1; d < t.shape.size(); ++d)
    inner *= t.shape[d];
  int64_t n = indices.numElements(), k = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < n; ++j) {
      int64_t idx = indices.asInt(j);
      if (idx < 0)
        idx += dim;
      for (int64_t in = 0; in < inner; ++in, ++k) {
        int64_t src = (o * dim + idx) * inner + in;
        copyElement(out, k, t, src);
      }
    }
  return out;
}

HostTensor concat(const std::vector<const HostTensor *> &inputs, int64_t axis) {
  std::vector<int64_t> shape = inputs[0]->shape;
  shape[axis] = 0;
  for (const HostTensor *t : inputs)
    shape[axis] += t->shape[axis];
  HostTensor out = HostTensor::zeros(inputs[0]->type, shape);
  if (out.numElements() == 0)  // (its other dimensions may count 2^38 rows of nothing)
    return out;
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  int64_t k = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (const HostTensor *t : inputs) {
      int64_t chunk = t->numElements() / std::max<int64_t>(outer, 1);
      for (int64_t j = 0; j < chunk; ++j, ++k) {
        copyElement(out, k, *t, o * chunk + j);
      }
    }
  return out;
}

HostTensor slice(const HostTensor &t, const std::vector<int64_t> &starts,
                 const std::vector<int64_t> &counts, const std::vector<int64_t> &steps) {
  std::vector<int64_t> inStrides = stridesOf(t.shape), strides(counts.size());
  int64_t base = 0;
  for (size_t d = 0; d < counts.size(); ++d) {
    base += starts[d] * inStrides[d];
    strides[d] = steps[d] * inStrides[d];
  }
  return stridedCopy(t, counts, base, strides);
}

HostTensor expand(const HostTensor &t, const std::vector<int64_t> &shape) {
  // Right-aligned; a size-1 input dim repeats (stride 0).
  std::vector<int64_t> inStrides = stridesOf(t.shape), strides(shape.size(), 0);
  size_t lead = shape.size() - t.shape.size();
  for (size_t d = 0; d < t.shape.size(); ++d)
    strides[d + lead] = t.shape[d] == 1 ? 0 : inStrides[d];
  return stridedCopy(t, shape, 0, strides);
}

} // namespace hexir::onnx_import
