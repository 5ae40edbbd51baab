// The rendezvous bootstrap's wire (rendezvous_bootstrap.h): framed messages over TCP sockets,
// every read and write bounded by a deadline, every frame bounds-checked before use.
//
// A frame is a fixed header (magic, kind, step number, sender rank, payload length) and the
// payload. A peer that sends a wrong magic or a length over the limit is cut off: nothing it
// sent is used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace mooncake::cluster::rendezvous {

enum class FrameKind : uint8_t {
  kHello = 1,       // a rank presents itself: version, job size, host, credential
  kRefused = 2,     // the root refused a hello: the reason
  kContribute = 3,  // a rank's contribution to a step
  kRecords = 4,     // the step's records (an all-gather, or a gather at its root)
  kStepDone = 5,    // a barrier completed
  kStepFailed = 6,  // the step timed out at the root: the ranks it found missing
  kAbort = 7,       // end the job with this exit code
};

struct Frame {
  FrameKind kind = FrameKind::kContribute;
  uint32_t step = 0;
  int32_t rank = -1;
  std::vector<std::byte> payload;
};

constexpr uint32_t kMagic = 0x4d435256;  // "MCRV"
constexpr size_t kHeaderBytes = 4 + 1 + 4 + 4 + 8;
// A record set gathered at the root (every rank's peer record, recovered SSD blocks) stays far
// below this; a larger announced length is a forged or corrupt frame.
constexpr uint64_t kMaxPayload = uint64_t{1} << 30;

std::vector<std::byte> EncodeFrame(const Frame& frame);

// Takes one complete frame off the front of `buffer` (bytes read so far from one socket).
// nullopt with *error OK: the frame is not complete yet; *error set: the bytes are not a frame
// (wrong magic, unknown kind, a length over kMaxPayload) and the connection must be dropped.
std::optional<Frame> TakeFrame(std::vector<std::byte>* buffer, Status* error);

// Records as one payload (count, then each record's length and bytes), and back.
std::vector<std::byte> EncodeRecords(const std::vector<std::vector<std::byte>>& records);
Result<std::vector<std::vector<std::byte>>> DecodeRecords(std::span<const std::byte> payload);

// Sockets. The descriptors are non-blocking; every call waits at most until `deadline` (a
// steady_clock time point).
using Deadline = std::chrono::steady_clock::time_point;

// Binds and listens on address:port (IPv4; port 0 lets the kernel choose); *bound gets the port.
Result<int> ListenTcp(const std::string& address, uint16_t port, uint16_t* bound);
// Connects to host:port, retrying a refused connection until `deadline` (the root may not be
// listening yet).
Result<int> ConnectTcp(const std::string& host, uint16_t port, Deadline deadline);
// Writes every byte of `bytes`.
Status SendAll(int fd, std::span<const std::byte> bytes, Deadline deadline);
// Reads whatever is available into `buffer` without waiting; PeerFailure when the peer closed
// the connection or it failed.
Status ReadAvailable(int fd, std::vector<std::byte>* buffer);
// Reads until one complete frame is in `buffer`, and takes it.
Result<Frame> ReadFrame(int fd, std::vector<std::byte>* buffer, Deadline deadline);

}  // namespace mooncake::cluster::rendezvous
