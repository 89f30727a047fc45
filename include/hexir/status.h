// Status and StatusOr<T>: the runtime's only error mechanism (no exceptions cross the API).
//
// A Status is a code and a message. The message names the values involved and, where possible,
// what to do next ("expected 1x3 f32, got 1x4 f32"). OK statuses carry no message and do not
// allocate. Both types are [[nodiscard]]: ignoring an error must be written out with
// `status.IgnoreError()`.
//
// Thread safety: values; thread-compatible.
#pragma once

#include "hexir/export.h"
#include <cassert>
#include <sstream>
#include <string>
#include <utility>
#include <variant>

namespace hexir {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,    // the caller passed something wrong (shape, dtype, name, flag)
  kNotFound,           // a named thing does not exist (file, input, kernel symbol, device)
  kDataLoss,           // a file is corrupt: bad magic, checksum, truncated, out-of-range field
  kOutOfRange,         // an index or slot outside its bounds
  kFailedPrecondition, // the system is not in a state to do this (no CUDA device, ...)
  kUnimplemented,      // valid but not supported (format version, element type)
  kResourceExhausted,  // out of memory or over a capacity
  kInternal,           // a bug in Hexir
  kCancelled,          // the caller stopped the operation (RunOptions::cancel)
  kDeadlineExceeded,   // the operation passed its deadline (RunOptions::deadline)
};

HEXIR_API const char* StatusCodeName(StatusCode code);

class [[nodiscard]] HEXIR_API Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "DATA_LOSS: constant section checksum mismatch ..." ("OK" when ok).
  std::string ToString() const;
  // Explicitly drops an error the caller decided not to handle.
  void IgnoreError() const {}

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status status) : value_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(value_).ok() && "StatusOr built from an OK status");
  }
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(value_); }
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(value_); }

  T& value() & { return std::get<T>(value_); }
  const T& value() const& { return std::get<T>(value_); }
  T&& value() && { return std::get<T>(std::move(value_)); }
  T& operator*() & { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<Status, T> value_;
};

// Builds a message from streamable pieces: StrCat("expected ", n, " bytes").
template <typename... Args>
std::string StrCat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

#define HEXIR_STATUS_HELPER_(name, code)             \
  template <typename... Args>                        \
  Status name(const Args&... args) {                 \
    return Status(StatusCode::code, StrCat(args...)); \
  }
HEXIR_STATUS_HELPER_(InvalidArgumentError, kInvalidArgument)
HEXIR_STATUS_HELPER_(NotFoundError, kNotFound)
HEXIR_STATUS_HELPER_(DataLossError, kDataLoss)
HEXIR_STATUS_HELPER_(OutOfRangeError, kOutOfRange)
HEXIR_STATUS_HELPER_(FailedPreconditionError, kFailedPrecondition)
HEXIR_STATUS_HELPER_(UnimplementedError, kUnimplemented)
HEXIR_STATUS_HELPER_(ResourceExhaustedError, kResourceExhausted)
HEXIR_STATUS_HELPER_(InternalError, kInternal)
HEXIR_STATUS_HELPER_(CancelledError, kCancelled)
HEXIR_STATUS_HELPER_(DeadlineExceededError, kDeadlineExceeded)
#undef HEXIR_STATUS_HELPER_

}  // namespace hexir

#define HEXIR_CONCAT_INNER_(a, b) a##b
#define HEXIR_CONCAT_(a, b) HEXIR_CONCAT_INNER_(a, b)

#define HEXIR_RETURN_IF_ERROR(expr)             \
  do {                                          \
    ::hexir::Status hexir_status_ = (expr);     \
    if (!hexir_status_.ok()) return hexir_status_; \
  } while (0)

#define HEXIR_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()

#define HEXIR_ASSIGN_OR_RETURN(lhs, expr) \
  HEXIR_ASSIGN_OR_RETURN_IMPL_(HEXIR_CONCAT_(hexir_statusor_, __LINE__), lhs, expr)
