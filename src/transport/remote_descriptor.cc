#include "common/wire.h"
#include "transport/transport.h"

namespace mooncake::transport {

namespace {
constexpr uint32_t kDescriptorMagic = 0x4d435244;  // "MCRD"
constexpr uint32_t kMaxPackedKey = 64 * 1024;
}  // namespace

std::vector<std::byte> RemoteDescriptor::Encode() const {
  WireWriter w;
  w.Put<uint32_t>(kDescriptorMagic);
  w.Put<uint64_t>(addr);
  w.Put<uint64_t>(length);
  w.Put<uint8_t>(static_cast<uint8_t>(type));
  w.PutBytes(packed_key);
  return w.Take();
}

Result<RemoteDescriptor> RemoteDescriptor::Decode(std::span<const std::byte> bytes) {
  WireReader r(bytes);
  uint32_t magic = 0;
  uint8_t type = 0;
  RemoteDescriptor d;
  std::span<const std::byte> key;
  r.Get(&magic);
  r.Get(&d.addr);
  r.Get(&d.length);
  r.Get(&type);
  r.GetBytes(&key, kMaxPackedKey);
  if (!r.done() || magic != kDescriptorMagic || type > 1) {
    return ProtocolError("malformed remote descriptor (" + std::to_string(bytes.size()) +
                         " bytes)");
  }
  d.type = static_cast<MemoryType>(type);
  d.packed_key.assign(key.begin(), key.end());
  return d;
}

}  // namespace mooncake::transport
