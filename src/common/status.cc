#include "common/status.h"

#include "common/enum_names.h"

namespace mooncake {

std::string_view ErrorCodeName(ErrorCode code) {
  static constexpr EnumName<ErrorCode> kCodes[] = {
      {ErrorCode::kOk, "OK"},
      {ErrorCode::kInvalidArgument, "InvalidArgument"},
      {ErrorCode::kOutOfRange, "OutOfRange"},
      {ErrorCode::kNotFound, "NotFound"},
      {ErrorCode::kAlreadyExists, "AlreadyExists"},
      {ErrorCode::kNotSupported, "NotSupported"},
      {ErrorCode::kPermissionDenied, "PermissionDenied"},
      {ErrorCode::kNoSpace, "NoSpace"},
      {ErrorCode::kTimeout, "Timeout"},
      {ErrorCode::kBusy, "Busy"},
      {ErrorCode::kLeaseExpired, "LeaseExpired"},
      {ErrorCode::kPeerFailure, "PeerFailure"},
      {ErrorCode::kCorrupt, "Corrupt"},
      {ErrorCode::kIoError, "IoError"},
      {ErrorCode::kProtocolError, "ProtocolError"},
      {ErrorCode::kInternal, "Internal"}};
  return NameIn(kCodes, code, "Unknown");
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(ErrorCodeName(code_));
  out += ": ";
  out += message_;
  return out;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  std::string m(context);
  m += ": ";
  m += message_;
  return Status(code_, std::move(m));
}

}  // namespace mooncake
