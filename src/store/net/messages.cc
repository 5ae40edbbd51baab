#include "store/net/messages.h"

#include "common/wire.h"

namespace mooncake::store {

namespace {

// ---- writers ----
void PutKeys(WireWriter& w, const std::vector<std::string>& keys) {
  w.Put<uint32_t>(static_cast<uint32_t>(keys.size()));
  for (const auto& k : keys) w.PutString(k);
}
void PutU64s(WireWriter& w, const std::vector<uint64_t>& v) {
  w.Put<uint32_t>(static_cast<uint32_t>(v.size()));
  for (uint64_t x : v) w.Put<uint64_t>(x);
}
void PutEntry(WireWriter& w, const StatusEntry& e) {
  w.Put<uint16_t>(static_cast<uint16_t>(e.code));
  w.PutString(e.message.size() <= kMaxMessageBytes ? e.message
                                                   : e.message.substr(0, kMaxMessageBytes));
}
void PutLocations(WireWriter& w, const std::vector<ReplicaLocation>& v) {
  w.Put<uint32_t>(static_cast<uint32_t>(v.size()));
  for (const auto& r : v) {
    w.Put<int32_t>(r.rank.value);
    w.Put<uint8_t>(static_cast<uint8_t>(r.tier));
    w.Put<uint64_t>(r.offset);
    w.Put<uint64_t>(r.length);
  }
}

// ---- readers: each returns false (and leaves the reader failed or the caller failing) ----
bool ReadCount(WireReader& r, uint32_t max, uint32_t* n) { return r.Get(n) && *n <= max; }
bool ReadKeys(WireReader& r, std::vector<std::string>* keys) {
  uint32_t n = 0;
  if (!ReadCount(r, kMaxBatchKeys, &n)) return false;
  keys->resize(n);
  for (auto& k : *keys) {
    if (!r.GetString(&k, kMaxKeyBytes)) return false;
  }
  return true;
}
bool ReadU64s(WireReader& r, std::vector<uint64_t>* v) {
  uint32_t n = 0;
  if (!ReadCount(r, kMaxBatchKeys, &n) || r.remaining() < n * sizeof(uint64_t)) return false;
  v->resize(n);
  for (auto& x : *v) r.Get(&x);
  return r.ok();
}
bool ValidCode(uint16_t c) { return ErrorCodeName(static_cast<ErrorCode>(c)) != "Unknown"; }
bool ReadEntry(WireReader& r, StatusEntry* e) {
  uint16_t code = 0;
  if (!r.Get(&code) || !ValidCode(code)) return false;
  e->code = static_cast<ErrorCode>(code);
  return r.GetString(&e->message, kMaxMessageBytes);
}
bool ReadLocations(WireReader& r, std::vector<ReplicaLocation>* v) {
  uint32_t n = 0;
  if (!ReadCount(r, kMaxReplicas, &n)) return false;
  v->resize(n);
  for (auto& loc : *v) {
    uint8_t tier = 0;
    if (!r.Get(&loc.rank.value) || !r.Get(&tier) || tier > 1 || !r.Get(&loc.offset) ||
        !r.Get(&loc.length)) {
      return false;
    }
    loc.tier = static_cast<Tier>(tier);
  }
  return true;
}
Status Check(bool parsed, const WireReader& r, const char* what) {
  if (parsed && r.done()) return Status::Ok();
  return ProtocolError(std::string("malformed ") + what +
                       (parsed && r.ok() ? ": trailing bytes" : ": truncated or out of range"));
}

}  // namespace

StatusEntry ToEntry(const Status& s) { return StatusEntry{s.code(), s.message()}; }
Status FromEntry(const StatusEntry& e) {
  return e.code == ErrorCode::kOk ? Status::Ok() : Status(e.code, e.message);
}

std::vector<std::byte> Encode(const PutStartRequest& m) {
  WireWriter w;
  w.Put<uint32_t>(m.config.replicas);
  w.Put<uint8_t>((m.config.soft_pin ? 1 : 0) | (m.config.hard_pin ? 2 : 0));
  w.Put<uint32_t>(static_cast<uint32_t>(m.config.preferred_ranks.size()));
  for (Rank r : m.config.preferred_ranks) w.Put<int32_t>(r.value);
  PutKeys(w, m.keys);
  PutU64s(w, m.sizes);
  return w.Take();
}
Status Decode(std::span<const std::byte> in, PutStartRequest* out) {
  WireReader r(in);
  uint8_t pins = 0;
  uint32_t npref = 0;
  bool ok = r.Get(&out->config.replicas) && out->config.replicas <= kMaxReplicas && r.Get(&pins) &&
            pins <= 3 && ReadCount(r, kMaxReplicas, &npref);
  if (ok) {
    out->config.soft_pin = pins & 1;
    out->config.hard_pin = pins & 2;
    out->config.preferred_ranks.resize(npref);
    for (auto& rank : out->config.preferred_ranks) ok = ok && r.Get(&rank.value);
  }
  ok = ok && ReadKeys(r, &out->keys) && ReadU64s(r, &out->sizes) &&
       out->sizes.size() == out->keys.size();
  return Check(ok, r, "PutStartRequest");
}

std::vector<std::byte> Encode(const PutEndRequest& m) {
  WireWriter w;
  PutKeys(w, m.keys);
  PutU64s(w, m.checksums);
  return w.Take();
}
Status Decode(std::span<const std::byte> in, PutEndRequest* out) {
  WireReader r(in);
  bool ok = ReadKeys(r, &out->keys) && ReadU64s(r, &out->checksums) &&
            out->checksums.size() == out->keys.size();
  return Check(ok, r, "PutEndRequest");
}

std::vector<std::byte> Encode(const KeysRequest& m) {
  WireWriter w;
  PutKeys(w, m.keys);
  return w.Take();
}
Status Decode(std::span<const std::byte> in, KeysRequest* out) {
  WireReader r(in);
  return Check(ReadKeys(r, &out->keys), r, "KeysRequest");
}

std::vector<std::byte> Encode(const StatusResponse& m) {
  WireWriter w;
  w.Put<uint32_t>(static_cast<uint32_t>(m.entries.size()));
  for (const auto& e : m.entries) PutEntry(w, e);
  return w.Take();
}
Status Decode(std::span<const std::byte> in, StatusResponse* out) {
  WireReader r(in);
  uint32_t n = 0;
  bool ok = ReadCount(r, kMaxBatchKeys, &n);
  if (ok) out->entries.resize(n);
  for (uint32_t i = 0; ok && i < n; ++i) ok = ReadEntry(r, &out->entries[i]);
  return Check(ok, r, "StatusResponse");
}

std::vector<std::byte> Encode(const PutStartResponse& m) {
  WireWriter w;
  w.Put<uint32_t>(static_cast<uint32_t>(m.entries.size()));
  for (const auto& e : m.entries) {
    PutEntry(w, e.status);
    PutLocations(w, e.replicas);
  }
  return w.Take();
}
Status Decode(std::span<const std::byte> in, PutStartResponse* out) {
  WireReader r(in);
  uint32_t n = 0;
  bool ok = ReadCount(r, kMaxBatchKeys, &n);
  if (ok) out->entries.resize(n);
  for (uint32_t i = 0; ok && i < n; ++i) {
    ok = ReadEntry(r, &out->entries[i].status) && ReadLocations(r, &out->entries[i].replicas);
  }
  return Check(ok, r, "PutStartResponse");
}

std::vector<std::byte> Encode(const GetResponse& m) {
  WireWriter w;
  w.Put<uint32_t>(static_cast<uint32_t>(m.entries.size()));
  for (const auto& e : m.entries) {
    PutEntry(w, e.status);
    w.Put<uint64_t>(e.view.size);
    w.Put<uint64_t>(e.view.checksum);
    w.Put<int64_t>(e.view.lease.count());
    PutLocations(w, e.view.replicas);
  }
  return w.Take();
}
Status Decode(std::span<const std::byte> in, GetResponse* out) {
  WireReader r(in);
  uint32_t n = 0;
  bool ok = ReadCount(r, kMaxBatchKeys, &n);
  if (ok) out->entries.resize(n);
  for (uint32_t i = 0; ok && i < n; ++i) {
    GetEntry& e = out->entries[i];
    int64_t lease = 0;
    ok = ReadEntry(r, &e.status) && r.Get(&e.view.size) && r.Get(&e.view.checksum) &&
         r.Get(&lease) && lease >= 0 && ReadLocations(r, &e.view.replicas);
    e.view.lease = Nanos(lease);
  }
  return Check(ok, r, "GetResponse");
}

std::vector<std::byte> Encode(const ExistsResponse& m) {
  WireWriter w;
  w.PutBytes(std::as_bytes(std::span<const uint8_t>(m.exists)));
  return w.Take();
}
Status Decode(std::span<const std::byte> in, ExistsResponse* out) {
  WireReader r(in);
  std::span<const std::byte> bytes;
  bool ok = r.GetBytes(&bytes, kMaxBatchKeys);
  if (ok) {
    out->exists.resize(bytes.size());
    for (size_t i = 0; i < bytes.size(); ++i) {
      out->exists[i] = static_cast<uint8_t>(bytes[i]);
      ok = ok && out->exists[i] <= 1;
    }
  }
  return Check(ok, r, "ExistsResponse");
}

namespace {
template <typename M, typename F>
void ForEachStat(M& m, F f) {
  for (auto* v :
       {&m.objects, &m.in_flight_puts, &m.evicted_replicas, &m.revoked_puts, &m.timed_out_puts,
        &m.requests, &m.exists_keys, &m.exists_ns, &m.get_keys, &m.get_ns}) {
    f(v);
  }
}
}  // namespace

std::vector<std::byte> Encode(const StatsResponse& m) {
  WireWriter w;
  ForEachStat(m, [&](const uint64_t* v) { w.Put<uint64_t>(*v); });
  return w.Take();
}
Status Decode(std::span<const std::byte> in, StatsResponse* out) {
  WireReader r(in);
  bool ok = true;
  ForEachStat(*out, [&](uint64_t* v) { ok = ok && r.Get(v); });
  return Check(ok, r, "StatsResponse");
}

}  // namespace mooncake::store
