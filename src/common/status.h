// Status and Result<T>: errors are values (STYLE.md habit 1).
//
// A Status is either OK or carries an ErrorCode and a human-readable message that names what
// failed (the option, the file and line, the peer rank). Status is cheap to copy when OK.
// Result<T> holds either a T or a non-OK Status; reading value() of an error aborts, so callers
// check ok() first.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace mooncake {

// Codes are grouped by what the caller must do about them, not by where they arose.
enum class ErrorCode : uint16_t {
  kOk = 0,
  // The request itself is wrong; retrying it unchanged fails again.
  kInvalidArgument = 1,
  kOutOfRange = 2,
  kNotFound = 3,
  kAlreadyExists = 4,
  kNotSupported = 5,
  kPermissionDenied = 6,  // a credential (the job token) was missing or wrong
  // A resource ran out or a deadline passed; retrying later may succeed.
  kNoSpace = 10,
  kTimeout = 11,
  kBusy = 12,
  kLeaseExpired = 13,
  // The data or a peer is broken.
  kPeerFailure = 20,
  kCorrupt = 21,
  kIoError = 22,
  kProtocolError = 23,
  kInternal = 30,
};

std::string_view ErrorCodeName(ErrorCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "NotFound: block 17 on rank 3" or "OK".
  std::string ToString() const;

  // Prefixes context to the message, keeping the code: "rank 2: " + "timeout after 100 ms".
  Status WithContext(std::string_view context) const;

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return {ErrorCode::kInvalidArgument, std::move(m)}; }
inline Status OutOfRange(std::string m) { return {ErrorCode::kOutOfRange, std::move(m)}; }
inline Status NotFound(std::string m) { return {ErrorCode::kNotFound, std::move(m)}; }
inline Status NotSupported(std::string m) { return {ErrorCode::kNotSupported, std::move(m)}; }
inline Status PermissionDenied(std::string m) {
  return {ErrorCode::kPermissionDenied, std::move(m)};
}
inline Status NoSpace(std::string m) { return {ErrorCode::kNoSpace, std::move(m)}; }
inline Status Timeout(std::string m) { return {ErrorCode::kTimeout, std::move(m)}; }
inline Status PeerFailure(std::string m) { return {ErrorCode::kPeerFailure, std::move(m)}; }
inline Status Corrupt(std::string m) { return {ErrorCode::kCorrupt, std::move(m)}; }
inline Status IoError(std::string m) { return {ErrorCode::kIoError, std::move(m)}; }
inline Status ProtocolError(std::string m) { return {ErrorCode::kProtocolError, std::move(m)}; }
inline Status Internal(std::string m) { return {ErrorCode::kInternal, std::move(m)}; }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    if (status_.ok()) status_ = Internal("Result constructed from an OK status without a value");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  T& value() & {
    Check();
    return *value_;
  }
  const T& value() const& {
    Check();
    return *value_;
  }
  T&& value() && {
    Check();
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  void Check() const {
    if (!value_) std::abort();  // reading the value of an error is a programming bug
  }
  std::optional<T> value_;
  Status status_;
};

}  // namespace mooncake

// Returns early from a function returning Status or Result<T> when `expr` is an error.
#define MC_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::mooncake::Status mc_status_ = (expr);  \
    if (!mc_status_.ok()) return mc_status_; \
  } while (0)
