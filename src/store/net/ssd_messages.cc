#include "store/net/ssd_messages.h"

#include "common/wire.h"

namespace mooncake::store {

namespace {

void PutStatus(WireWriter& w, const StatusEntry& e) {
  w.Put<uint16_t>(static_cast<uint16_t>(e.code));
  w.PutString(e.message.size() <= kMaxMessageBytes ? e.message
                                                   : e.message.substr(0, kMaxMessageBytes));
}
bool GetStatus(WireReader& r, StatusEntry* e) {
  uint16_t code = 0;
  if (!r.Get(&code) || ErrorCodeName(static_cast<ErrorCode>(code)) == "Unknown") return false;
  e->code = static_cast<ErrorCode>(code);
  return r.GetString(&e->message, kMaxMessageBytes);
}
bool GetCount(WireReader& r, uint32_t max, uint32_t* n) { return r.Get(n) && *n <= max; }
void PutBlock(WireWriter& w, const SsdBlockRef& b) {
  w.PutString(b.key);
  w.Put<uint64_t>(b.size);
  w.Put<uint64_t>(b.checksum);
  w.Put<uint64_t>(b.location);
}
bool GetBlock(WireReader& r, SsdBlockRef* b) {
  return r.GetString(&b->key, kMaxKeyBytes) && r.Get(&b->size) && r.Get(&b->checksum) &&
         r.Get(&b->location);
}
Status Check(bool parsed, const WireReader& r, const char* what) {
  if (parsed && r.done()) return Status::Ok();
  return ProtocolError(std::string("malformed ") + what +
                       (parsed && r.ok() ? ": trailing bytes" : ": truncated or out of range"));
}
// Reads a count, then checks that at least `min_each` bytes per element remain, so a forged count
// cannot make us allocate more than the message could describe.
bool GetSized(WireReader& r, uint32_t max, size_t min_each, uint32_t* n) {
  return GetCount(r, max, n) && r.remaining() >= size_t{*n} * min_each;
}

}  // namespace

std::vector<std::byte> Encode(const SpillRequest& m) {
  WireWriter w;
  w.Put<uint32_t>(static_cast<uint32_t>(m.entries.size()));
  for (const auto& e : m.entries) {
    w.Put<uint64_t>(e.ticket);
    w.PutString(e.key);
    w.Put<uint64_t>(e.offset);
    w.Put<uint64_t>(e.length);
    w.Put<uint64_t>(e.checksum);
  }
  return w.Take();
}
Status Decode(std::span<const std::byte> in, SpillRequest* out) {
  WireReader r(in);
  uint32_t n = 0;
  bool ok = GetSized(r, kMaxBatchKeys, 36, &n);
  if (ok) out->entries.resize(n);
  for (uint32_t i = 0; ok && i < n; ++i) {
    SpillEntry& e = out->entries[i];
    ok = r.Get(&e.ticket) && r.GetString(&e.key, kMaxKeyBytes) && r.Get(&e.offset) &&
         r.Get(&e.length) && r.Get(&e.checksum);
  }
  return Check(ok, r, "SpillRequest");
}

std::vector<std::byte> Encode(const SpillResponse& m) {
  WireWriter w;
  w.Put<uint32_t>(static_cast<uint32_t>(m.entries.size()));
  for (const auto& e : m.entries) {
    PutStatus(w, e.status);
    w.Put<uint64_t>(e.location);
  }
  return w.Take();
}
Status Decode(std::span<const std::byte> in, SpillResponse* out) {
  WireReader r(in);
  uint32_t n = 0;
  bool ok = GetSized(r, kMaxBatchKeys, 14, &n);
  if (ok) out->entries.resize(n);
  for (uint32_t i = 0; ok && i < n; ++i) {
    ok = GetStatus(r, &out->entries[i].status) && r.Get(&out->entries[i].location);
  }
  return Check(ok, r, "SpillResponse");
}

std::vector<std::byte> Encode(const PromoteRequest& m) {
  WireWriter w;
  w.Put<uint32_t>(static_cast<uint32_t>(m.entries.size()));
  for (const auto& e : m.entries) {
    w.PutString(e.key);
    w.Put<uint64_t>(e.offset);
    w.Put<uint64_t>(e.length);
  }
  return w.Take();
}
Status Decode(std::span<const std::byte> in, PromoteRequest* out) {
  WireReader r(in);
  uint32_t n = 0;
  bool ok = GetSized(r, kMaxBatchKeys, 20, &n);
  if (ok) out->entries.resize(n);
  for (uint32_t i = 0; ok && i < n; ++i) {
    PromoteEntry& e = out->entries[i];
    ok = r.GetString(&e.key, kMaxKeyBytes) && r.Get(&e.offset) && r.Get(&e.length);
  }
  return Check(ok, r, "PromoteRequest");
}

std::vector<std::byte> Encode(const SsdReadResponse& m) {
  WireWriter w;
  w.Put<uint32_t>(static_cast<uint32_t>(m.entries.size()));
  for (const auto& e : m.entries) {
    PutStatus(w, e.status);
    w.PutBytes(e.bytes);
  }
  return w.Take();
}
Status Decode(std::span<const std::byte> in, SsdReadResponse* out) {
  WireReader r(in);
  uint32_t n = 0;
  bool ok = GetSized(r, kMaxBatchKeys, 10, &n);
  if (ok) out->entries.resize(n);
  uint64_t total = 0;
  for (uint32_t i = 0; ok && i < n; ++i) {
    std::span<const std::byte> bytes;
    ok = GetStatus(r, &out->entries[i].status) && r.GetBytes(&bytes, kMaxSsdReadBytes);
    total += bytes.size();
    ok = ok && total <= kMaxSsdReadBytes;
    if (ok) out->entries[i].bytes.assign(bytes.begin(), bytes.end());
  }
  return Check(ok, r, "SsdReadResponse");
}

std::vector<std::byte> Encode(const SsdDropNotice& m) {
  WireWriter w;
  w.Put<uint32_t>(static_cast<uint32_t>(m.blocks.size()));
  for (const auto& b : m.blocks) PutBlock(w, b);
  return w.Take();
}
Status Decode(std::span<const std::byte> in, SsdDropNotice* out) {
  WireReader r(in);
  uint32_t n = 0;
  bool ok = GetSized(r, kMaxRecoveredBlocks, 28, &n);
  if (ok) out->blocks.resize(n);
  for (uint32_t i = 0; ok && i < n; ++i) ok = GetBlock(r, &out->blocks[i]);
  return Check(ok, r, "SsdDropNotice");
}

std::vector<std::byte> Encode(const RecoveredBlocks& m) {
  WireWriter w;
  w.Put<uint64_t>(m.dropped);
  w.Put<uint32_t>(m.files);
  w.Put<uint32_t>(m.unreadable_files);
  w.Put<uint32_t>(static_cast<uint32_t>(m.blocks.size()));
  for (const auto& b : m.blocks) PutBlock(w, b);
  return w.Take();
}
Status Decode(std::span<const std::byte> in, RecoveredBlocks* out) {
  WireReader r(in);
  uint32_t n = 0;
  bool ok = r.Get(&out->dropped) && r.Get(&out->files) && r.Get(&out->unreadable_files) &&
            GetSized(r, kMaxRecoveredBlocks, 28, &n);
  if (ok) out->blocks.resize(n);
  for (uint32_t i = 0; ok && i < n; ++i) ok = GetBlock(r, &out->blocks[i]);
  return Check(ok, r, "RecoveredBlocks");
}

}  // namespace mooncake::store
