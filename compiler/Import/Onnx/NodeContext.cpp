//===- NodeContext.cpp - what an ONNX op converter sees -------------------===//
#include "Import/Onnx/NodeContext.h"

#include "Import/Onnx/FloatBits.h"

#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace hexir::onnx_import {

int64_t OnnxValue::numElements() const { return elementCount(shape); }

bool OnnxValue::isSplat() const {
  if (!constant || constant->numElements() == 0)
    return false;
  for (int64_t k = 1; k < constant->numElements(); ++k)
    if (isFloat(constant->type) ? constant->f[k] != constant->f[0] : constant->i[k] != constant->i[0])
      return false;
  return true;
}

OnnxValue OnnxValue::ofConstant(HostTensor t) {
  OnnxValue v;
  v.type = t.type;
  v.shape = t.shape;
  v.constant = std::move(t);
  return v;
}

OnnxValue OnnxValue::ofValue(mlir::Value value, DType type) {
  OnnxValue v;
  v.type = type;
  auto t = mlir::cast<mlir::RankedTensorType>(value.getType());
  v.shape.assign(t.getShape().begin(), t.getShape().end());
  v.value = value;
  return v;
}

void NodeContext::setOutput(size_t i, OnnxValue v) {
  if (outputs_.size() <= i)
    outputs_.resize(i + 1);
  outputs_[i] = std::move(v);
}

const onnx::AttributeProto *NodeContext::attr(const std::string &name) const {
  for (const auto &a : node_.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t NodeContext::attrInt(const std::string &name, int64_t fallback) const {
  const auto *a = attr(name);
  return a ? a->i() : fallback;
}

float NodeContext::attrFloat(const std::string &name, float fallback) const {
  const auto *a = attr(name);
  return a ? a->f() : fallback;
}

std::string NodeContext::attrString(const std::string &name, const std::string &fallback) const {
  const auto *a = attr(name);
  return a ? a->s() : fallback;
}

std::vector<int64_t> NodeContext::attrInts(const std::string &name) const {
  const auto *a = attr(name);
  if (!a)
    return {};
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

mlir::FailureOr<int64_t> NodeContext::axisAttr(const std::string &name, int64_t fallback,
                                               int64_t rank) const {
  int64_t axis = attrInt(name, fallback);
  int64_t normalized = axis < 0 ? axis + rank : axis;
  if (normalized < 0 || normalized >= rank) {
    error() << name << " " << axis << " is out of range for rank " << rank;
    return mlir::failure();
  }
  return normalized;
}

mlir::InFlightDiagnostic NodeContext::error() const {
  std::string domain = node_.domain().empty() ? "ai.onnx" : node_.domain();
  return mlir::emitError(loc) << "node '" << node_.name() << "' (" << node_.op_type()
                              << ", domain " << domain << ", opset " << opset_ << "): ";
}

mlir::LogicalResult NodeContext::requireFloatInputs(std::initializer_list<size_t> indices) const {
  for (size_t i : indices)
    if (hasInput(i) && !isFloat(input(i).type))
      return error() << "input " << i << " has element type " << dtypeName(input(i).type) << "; "
                     << node_.op_type() << " takes float tensors here";
  return mlir::success();
}

mlir::FailureOr<HostTensor> NodeContext::requireConstant(size_t i, const char *what) const {
  if (!hasInput(i) || !input(i).isConstant()) {
    mlir::InFlightDiagnostic diag = error() << what << " (input " << i << ") must be known at compile time (an "
                                            << "initializer, a Constant or computed from them); Hexir compiles "
                                            << "static graphs";
    // The one remedy a user has: fix the value of the model inputs it is computed from.
    const std::vector<std::string> *from = i < feeders_.size() ? &feeders_[i] : nullptr;
    if (from && !from->empty()) {
      const std::string &name = node_.input(static_cast<int>(i));
      if (from->size() == 1 && (*from)[0] == name) {
        diag << " ('" << name << "' is a model input: fix its value with --fix-input " << name
             << "=V1,V2,... or =FILE.npy)";
      } else {
        diag << " ('" << name << "' is computed from model input";
        for (size_t k = 0; k < from->size(); ++k)
          diag << (from->size() > 1 ? (k == 0 ? "s '" : ", '") : " '") << (*from)[k] << "'";
        diag << ": fix " << (from->size() > 1 ? "their values" : "its value") << " with --fix-input "
             << (*from)[0] << "=V1,V2,... or =FILE.npy" << (from->size() > 1 ? ", and the others alike)" : ")");
      }
    }
    return mlir::failure();
  }
  return *input(i).constant;
}

mlir::FailureOr<HostTensor> NodeContext::requireScalar(size_t i, const char *what) const {
  mlir::FailureOr<HostTensor> t = requireConstant(i, what);
  if (succeeded(t) && t->numElements() != 1) {
    error() << what << " (input " << i << ") must hold one value; it has shape " << shapeString(t->shape);
    return mlir::failure();
  }
  return t;
}

bool dtypeFromOnnx(int32_t onnxType, DType &out) {
  switch (onnxType) {
  case onnx::TensorProto::FLOAT:
  // Computed in f32: converted where they cross the graph's interface (OnnxImporter.cpp).
  case onnx::TensorProto::DOUBLE:
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
    out = DType::kFloat;
    return true;
  case onnx::TensorProto::INT64:
    out = DType::kInt64;
    return true;
  case onnx::TensorProto::INT32:
    out = DType::kInt32;
    return true;
  case onnx::TensorProto::INT16:
    out = DType::kInt16;
    return true;
  case onnx::TensorProto::UINT16:
    out = DType::kUInt16;
    return true;
  case onnx::TensorProto::UINT32:
    out = DType::kUInt32;
    return true;
  case onnx::TensorProto::UINT64:
    out = DType::kUInt64;
    return true;
  case onnx::TensorProto::INT8:
    out = DType::kInt8;
    return true;
  case onnx::TensorProto::UINT8:
    out = DType::kUInt8;
    return true;
  case onnx::TensorProto::BOOL:
    out = DType::kBool;
    return true;
  default:
    return false;
  }
}

std::string onnxTypeName(int32_t onnxType) {
  if (!onnx::TensorProto::DataType_IsValid(onnxType))
    return "unknown";
  return onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(onnxType));
}

namespace {

// A byte count of external data ("offset", "length"): decimal digits only, within 64 bits.
bool parseByteCount(const std::string &text, uint64_t &value) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size();
}

// Whether `location` is a relative path with no ".." component (a name may contain "..").
bool isRelativeInside(const std::string &location) {
  if (location.empty() || location.front() == '/' || location.find('\0') != std::string::npos)
    return false;
  for (size_t start = 0;;) {
    size_t slash = location.find('/', start);
    if (location.compare(start, slash == std::string::npos ? std::string::npos : slash - start, "..") == 0)
      return false;
    if (slash == std::string::npos)
      return true;
    start = slash + 1;
  }
}

// The `expected` bytes of the external data of `proto`, read from the file its "location" names.
// As ONNX Runtime, the file must lie in the model's directory: the path is resolved (symbolic
// links included) and compared with the directory's, and only a regular file is read (a FIFO
// would block, a directory is no data).
bool readExternal(const onnx::TensorProto &proto, const std::string &baseDir, uint64_t expected,
                  std::string &bytes, std::string &error) {
  std::string location;
  uint64_t offset = 0, length = 0;
  bool hasLength = false;
  const std::string tensor = "external data of tensor '" + proto.name() + "'";
  for (const auto &kv : proto.external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset" || kv.key() == "length") {
      uint64_t &target = kv.key() == "offset" ? offset : length;
      if (!parseByteCount(kv.value(), target)) {
        error = tensor + " has " + kv.key() + " '" + kv.value() + "', which is not a byte count (0 to 2^64 - 1)";
        return false;
      }
      hasLength |= kv.key() == "length";
    }
  }
  if (location.empty()) {
    error = tensor + " has no location";
    return false;
  }
  std::string shown = location.substr(0, location.find('\0'));
  if (!isRelativeInside(location)) {
    error = "external data location '" + shown + "' of tensor '" + proto.name() +
            "' must be a relative path inside the model's directory";
    return false;
  }
  std::string dir = baseDir.empty() ? "." : baseDir;
  std::string path = dir + "/" + location;
  char resolvedDir[PATH_MAX], resolvedPath[PATH_MAX];
  if (!realpath(dir.c_str(), resolvedDir) || !realpath(path.c_str(), resolvedPath)) {
    error = "cannot open external data file '" + path + "' of tensor '" + proto.name() + "': " + std::strerror(errno);
    return false;
  }
  std::string root = resolvedDir;
  if (root.back() != '/')
    root += '/';
  if (std::string(resolvedPath).compare(0, root.size(), root) != 0) {
    error = "external data file '" + path + "' of tensor '" + proto.name() + "' resolves to '" + resolvedPath +
            "', outside the model's directory '" + resolvedDir + "'";
    return false;
  }
  int fd = open(resolvedPath, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    error = "cannot open external data file '" + path + "' of tensor '" + proto.name() + "': " + std::strerror(errno);
    return false;
  }
  // A folder on the path may have been swapped for a link between the check and the open: what
  // was opened is checked again, by the descriptor's own path.
  char opened[PATH_MAX];
  std::string fdLink = "/proc/self/fd/" + std::to_string(fd);
  ssize_t openedLength = readlink(fdLink.c_str(), opened, sizeof(opened) - 1);
  if (openedLength <= 0 || std::string(opened, openedLength).compare(0, root.size(), root) != 0) {
    close(fd);
    error = "external data file '" + path + "' of tensor '" + proto.name() +
            "' changed while it was opened and now lies outside the model's directory";
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    error = "external data file '" + path + "' of tensor '" + proto.name() + "' is not a regular file";
    return false;
  }
  uint64_t fileSize = static_cast<uint64_t>(st.st_size);
  if (hasLength && length != expected) {
    close(fd);
    error = tensor + " has length " + std::to_string(length) + ", but its shape and type take " +
            std::to_string(expected) + " bytes";
    return false;
  }
  if (offset > fileSize || expected > fileSize - offset) {
    close(fd);
    error = tensor + " (offset " + std::to_string(offset) + ", length " + std::to_string(expected) +
            ") lies outside '" + path + "' (" + std::to_string(fileSize) + " bytes)";
    return false;
  }
  bytes.resize(expected);
  for (uint64_t done = 0; done < expected;) {
    ssize_t got = pread(fd, bytes.data() + done, expected - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0) {
      close(fd);
      error = "cannot read " + tensor + " from '" + path + "'";
      return false;
    }
    done += static_cast<uint64_t>(got);
  }
  close(fd);
  return true;
}

template <typename T> T load(const char *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

} // namespace

mlir::FailureOr<HostTensor> readTensor(const onnx::TensorProto &proto, const std::string &baseDir,
                                       std::string &error) {
  HostTensor t;
  if (!dtypeFromOnnx(proto.data_type(), t.type)) {
    error = "tensor '" + proto.name() + "' has element type " + onnxTypeName(proto.data_type()) +
            ", which Hexir does not support (float, float16, bfloat16, double, int64, int32, int16, int8, uint64, "
            "uint32, uint16, uint8, bool)";
    return mlir::failure();
  }
  t.shape.assign(proto.dims().begin(), proto.dims().end());
  int64_t count = 1;
  for (int64_t d : t.shape) {
    // Bounded by the 2 GiB a protobuf (or an external data file read here) can hold.
    if (d < 0 || (d > 0 && count > (int64_t{1} << 31) / d)) {
      error = "tensor '" + proto.name() + "' has a negative or too large dimension";
      return mlir::failure();
    }
    count *= d;
  }
  // An empty tensor's other dimensions too: folds multiply and add them.
  if (std::string size = sizeProblem(t.shape, t.type); !size.empty()) {
    error = "tensor '" + proto.name() + "' of shape " + shapeString(t.shape) + " " + size;
    return mlir::failure();
  }
  int64_t n = t.numElements();
  int32_t dt = proto.data_type();
  using TP = onnx::TensorProto;
  size_t width = dt == TP::DOUBLE || dt == TP::INT64 || dt == TP::UINT64                               ? 8
                 : dt == TP::FLOAT || dt == TP::INT32 || dt == TP::UINT32                              ? 4
                 : dt == TP::INT16 || dt == TP::UINT16 || dt == TP::FLOAT16 || dt == TP::BFLOAT16 ? 2
                                                                                                     : 1;
  std::string external;
  const std::string *raw = nullptr;
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    if (!readExternal(proto, baseDir, static_cast<uint64_t>(n) * width, external, error))
      return mlir::failure();
    raw = &external;
  } else if (proto.has_raw_data()) {
    raw = &proto.raw_data();
  }
  size_t have = raw ? raw->size() / width
                : dt == onnx::TensorProto::FLOAT ? proto.float_data_size()
                : dt == onnx::TensorProto::DOUBLE ? proto.double_data_size()
                : dt == onnx::TensorProto::INT64 ? proto.int64_data_size()
                : dt == TP::UINT32 || dt == TP::UINT64 ? proto.uint64_data_size()
                                                 : proto.int32_data_size();
  if (static_cast<int64_t>(have) != n || (raw && raw->size() != n * width)) {
    error = "tensor '" + proto.name() + "' of shape " + shapeString(t.shape) + " holds " +
            std::to_string(raw ? raw->size() : have) + (raw ? " bytes" : " values") +
            ", expected " + std::to_string(raw ? n * width : n);
    return mlir::failure();
  }
  if (isFloat(t.type))
    t.f.resize(n);
  else
    t.i.resize(n);
  for (int64_t k = 0; k < n; ++k) {
    const char *p = raw ? raw->data() + k * width : nullptr;
    switch (dt) {
    case onnx::TensorProto::FLOAT: t.f[k] = p ? load<float>(p) : proto.float_data(k); break;
    case onnx::TensorProto::DOUBLE:
      t.f[k] = static_cast<float>(p ? load<double>(p) : proto.double_data(k));
      break;
    case onnx::TensorProto::INT64: t.i[k] = p ? load<int64_t>(p) : proto.int64_data(k); break;
    case onnx::TensorProto::INT32: t.i[k] = p ? load<int32_t>(p) : proto.int32_data(k); break;
    // int32_data holds narrower types one per int32: truncated to the type, as raw bytes are.
    case onnx::TensorProto::INT16: t.i[k] = p ? load<int16_t>(p) : static_cast<int16_t>(proto.int32_data(k)); break;
    case onnx::TensorProto::INT8: t.i[k] = p ? load<int8_t>(p) : static_cast<int8_t>(proto.int32_data(k)); break;
    case onnx::TensorProto::UINT8: t.i[k] = p ? load<uint8_t>(p) : static_cast<uint8_t>(proto.int32_data(k)); break;
    case onnx::TensorProto::BOOL: t.i[k] = (p ? load<uint8_t>(p) : proto.int32_data(k)) != 0; break;
    case TP::UINT16: t.i[k] = p ? load<uint16_t>(p) : static_cast<uint16_t>(proto.int32_data(k)); break;
    case TP::UINT32: t.i[k] = p ? load<uint32_t>(p) : static_cast<uint32_t>(proto.uint64_data(k)); break;
    case TP::UINT64: t.i[k] = static_cast<int64_t>(p ? load<uint64_t>(p) : proto.uint64_data(k)); break;
    // 16-bit floats: int32_data holds their bits one per int32.
    case TP::FLOAT16:
    case TP::BFLOAT16:
      t.f[k] = halfToFloat(p ? load<uint16_t>(p) : static_cast<uint16_t>(proto.int32_data(k)), dt == TP::BFLOAT16);
      break;
    default: break;
    }
  }
  return t;
}

} // namespace hexir::onnx_import
