//===- ConstantPool.cpp - the constants of an executable ------------------===//
#include "Planning/ConstantPool.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include "base/alignment.h"
#include "base/half.h"

#include <cstring>
#include <string_view>

using namespace mlir;
namespace ser = ::hexir::serializer;

namespace {
constexpr uint64_t kAlignment = 64;
// Smaller constants stay f32: the 64-byte alignment of each range would eat what they save.
constexpr uint64_t kMinNarrowBytes = 256;

size_t hashBytes(const std::vector<uint8_t> &bytes) {
  return std::hash<std::string_view>()(std::string_view(reinterpret_cast<const char *>(bytes.data()), bytes.size()));
}
} // namespace

std::optional<ser::Slot> mlir::hexir::ConstantPool::addNarrow(const std::vector<uint8_t> &bytes) {
  if (bytes.size() < kMinNarrowBytes || bytes.size() % 4 != 0)
    return std::nullopt;
  uint64_t count = bytes.size() / 4;
  std::vector<uint8_t> narrow(count * 2);
  ::hexir::NarrowFloat format = ::hexir::NarrowFloat::kF16;
  for (int attempt = 0; attempt < 2; ++attempt) {
    format = attempt == 0 ? ::hexir::NarrowFloat::kF16 : ::hexir::NarrowFloat::kBf16;
    bool exact = true;
    for (uint64_t i = 0; i < count && exact; ++i) {
      float v;
      std::memcpy(&v, bytes.data() + 4 * i, 4);
      uint16_t h = 0;
      exact = format == ::hexir::NarrowFloat::kF16 ? ::hexir::ExactHalf(v, &h) : ::hexir::ExactBf16(v, &h);
      narrow[2 * i] = static_cast<uint8_t>(h);
      narrow[2 * i + 1] = static_cast<uint8_t>(h >> 8);
    }
    if (exact)
      break;
    if (attempt == 1)
      return std::nullopt;
  }
  ser::Slot slot;
  slot.kind = ser::SlotKind::FilledConstant;
  slot.length = bytes.size();
  // An identical constant already widened: the same range.
  auto key = std::make_pair(bytes.size(), hashBytes(bytes));
  for (size_t w : widened_[key]) {
    const ser::ConstantWideningSpec &known = spec_.constant_widenings[w];
    if (known.format == static_cast<uint8_t>(format) &&
        std::memcmp(spec_.narrow_constants.data() + known.source, narrow.data(), narrow.size()) == 0) {
      slot.offset = known.target;
      return slot;
    }
  }
  uint64_t source = ::hexir::AlignUp(spec_.narrow_constants.size(), kAlignment);
  spec_.narrow_constants.resize(source + narrow.size());
  std::memcpy(spec_.narrow_constants.data() + source, narrow.data(), narrow.size());
  slot.offset = ::hexir::AlignUp(spec_.filled_constants_bytes, kAlignment);
  spec_.filled_constants_bytes = slot.offset + bytes.size();
  widened_[key].push_back(spec_.constant_widenings.size());
  spec_.constant_widenings.push_back({source, slot.offset, count, static_cast<uint8_t>(format)});
  return slot;
}

FailureOr<ser::Slot> mlir::hexir::ConstantPool::add(arith::ConstantOp op) {
  auto type = cast<RankedTensorType>(op.getType());
  uint64_t elemBytes = type.getElementTypeBitWidth() / 8;
  uint64_t size = static_cast<uint64_t>(type.getNumElements()) * elemBytes;
  ser::Slot slot;
  slot.length = size;
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  // A splat larger than its descriptor becomes a fill.
  if (dense && dense.isSplat() && size > 32 &&
      (elemBytes == 1 || elemBytes == 2 || elemBytes == 4 || elemBytes == 8)) {
    uint64_t pattern = 0;
    std::memcpy(&pattern, dense.getRawData().data(), elemBytes);
    auto key = std::make_tuple(size, pattern, static_cast<uint8_t>(elemBytes));
    auto it = filled_.find(key);
    uint64_t offset;
    if (it != filled_.end()) {
      offset = it->second;
    } else {
      offset = ::hexir::AlignUp(spec_.filled_constants_bytes, kAlignment);
      spec_.filled_constants_bytes = offset + size;
      spec_.constant_fills.push_back({offset, size, pattern, static_cast<uint8_t>(elemBytes)});
      filled_[key] = offset;
    }
    slot.kind = ser::SlotKind::FilledConstant;
    slot.offset = offset;
    return slot;
  }

  std::vector<uint8_t> bytes(size);
  if (dense) {
    ArrayRef<char> raw = dense.getRawData();
    if (dense.isSplat()) {
      for (uint64_t i = 0; i < size; i += elemBytes)
        std::memcpy(bytes.data() + i, raw.data(), elemBytes);
    } else {
      if (raw.size() != size)
        return op.emitError() << "constant holds " << raw.size() << " bytes, expected " << size;
      std::memcpy(bytes.data(), raw.data(), size);
    }
  } else if (auto resource = dyn_cast<DenseResourceElementsAttr>(op.getValue())) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return op.emitError() << "constant refers to a resource without data";
    ArrayRef<char> raw = blob->getData();
    if (raw.size() != size)
      return op.emitError() << "constant resource holds " << raw.size() << " bytes, expected " << size;
    std::memcpy(bytes.data(), raw.data(), size);
  } else {
    return op.emitError() << "unsupported constant attribute kind; use dense<...> or dense_resource";
  }

  if (type.getElementType().isF32())
    if (std::optional<ser::Slot> narrow = addNarrow(bytes))
      return *narrow;
  std::vector<uint8_t> &pool = spec_.constants;
  auto key = std::make_pair(bytes.size(), hashBytes(bytes));
  slot.kind = ser::SlotKind::Constant;
  for (uint64_t offset : stored_[key]) {
    if (std::memcmp(pool.data() + offset, bytes.data(), bytes.size()) == 0) {
      slot.offset = offset;
      return slot;
    }
  }
  uint64_t offset = ::hexir::AlignUp(pool.size(), kAlignment);
  pool.resize(offset + bytes.size());
  std::memcpy(pool.data() + offset, bytes.data(), bytes.size());
  stored_[key].push_back(offset);
  slot.offset = offset;
  return slot;
}
