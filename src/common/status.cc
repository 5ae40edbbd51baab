#include "common/status.h"

namespace mooncake {

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk:
      return "OK";
    case ErrorCode::kInvalidArgument:
      return "InvalidArgument";
    case ErrorCode::kOutOfRange:
      return "OutOfRange";
    case ErrorCode::kNotFound:
      return "NotFound";
    case ErrorCode::kAlreadyExists:
      return "AlreadyExists";
    case ErrorCode::kNotSupported:
      return "NotSupported";
    case ErrorCode::kNoSpace:
      return "NoSpace";
    case ErrorCode::kTimeout:
      return "Timeout";
    case ErrorCode::kBusy:
      return "Busy";
    case ErrorCode::kLeaseExpired:
      return "LeaseExpired";
    case ErrorCode::kPeerFailure:
      return "PeerFailure";
    case ErrorCode::kCorrupt:
      return "Corrupt";
    case ErrorCode::kIoError:
      return "IoError";
    case ErrorCode::kProtocolError:
      return "ProtocolError";
    case ErrorCode::kInternal:
      return "Internal";
  }
  return "Unknown";
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
