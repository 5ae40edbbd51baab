// The master's object index against a reference model built on std::map: a million keys (fewer
// under sanitizers, MOONCAKE_MODEL_KEYS) put, ended, read, leased, evicted, revoked, timed out
// and removed in a seeded random order, with every result and error code compared.
//
// The model is the master's documented semantics for one store rank, one replica, objects of one
// allocation granule (any free region fits one, so whether a put fits depends only on how many
// objects hold room) and no second tier: LRU eviction skips leased objects, a put that finds the
// rank full evicts the least recently used unleased object, usage over the high watermark evicts
// until evict_fraction is freed, puts past their timeout are revoked lazily or by Tick, and a
// revoked put's region is held until the put's deadline (its writer may still be writing).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "store/master.h"

#ifndef MOONCAKE_MODEL_KEYS
#define MOONCAKE_MODEL_KEYS 1000000
#endif

namespace mooncake::store {
namespace {

using std::chrono::milliseconds;
constexpr uint64_t kObjectBytes = SegmentAllocator::kAlignment;

class ReferenceMaster {
 public:
  ReferenceMaster(const MasterConfig& cfg, const ManualClock& clock, uint64_t capacity_objects)
      : cfg_(cfg), clock_(clock), capacity_(capacity_objects), next_version_(cfg.first_version) {}

  ErrorCode PutStart(const std::string& key) {
    if (auto it = objects_.find(key); it != objects_.end()) {
      if (it->second.visible) return ErrorCode::kAlreadyExists;
      if (it->second.deadline > Now()) return ErrorCode::kBusy;
      ++stats.timed_out_puts;
      ++stats.revoked_puts;
      Erase(it);
    }
    ReleaseHeld();
    while (Used() >= capacity_) {  // the rank is full: evict one at a time
      if (!EvictOne()) {
        ++stats.puts_refused_no_space;
        return ErrorCode::kNoSpace;
      }
    }
    Obj& o = objects_[key];
    o.version = next_version_++;
    o.deadline = Now() + cfg_.put_timeout;
    in_flight_[{o.deadline, o.version}] = key;
    const uint64_t cap_bytes = capacity_ * kObjectBytes;
    if (static_cast<double>(Used() * kObjectBytes) > cfg_.high_watermark * cap_bytes) {
      const auto target = static_cast<uint64_t>(cfg_.evict_fraction * cap_bytes);
      for (uint64_t freed = 0; freed < target && EvictOne();) freed += kObjectBytes;
    }
    return ErrorCode::kOk;
  }

  ErrorCode PutEnd(const std::string& key, uint64_t checksum) {
    auto it = objects_.find(key);
    if (it == objects_.end()) return ErrorCode::kNotFound;
    Obj& o = it->second;
    if (o.visible) return ErrorCode::kAlreadyExists;
    if (o.deadline <= Now()) {
      ++stats.timed_out_puts;
      ++stats.revoked_puts;
      Erase(it);
      return ErrorCode::kTimeout;
    }
    in_flight_.erase({o.deadline, o.version});
    o.visible = true;
    o.checksum = checksum;
    o.lru_seq = ++lru_clock_;
    lru_[o.lru_seq] = key;
    return ErrorCode::kOk;
  }

  ErrorCode PutRevoke(const std::string& key) {
    auto it = FindLive(key);
    if (it == objects_.end() || it->second.visible) return ErrorCode::kNotFound;
    ++stats.revoked_puts;
    // Its writer may still be writing: the region goes to no new put before the put's deadline
    // (which is later than now: FindLive revoked it otherwise).
    held_.insert(it->second.deadline);
    Erase(it);
    return ErrorCode::kOk;
  }

  // Get and Exists: the version read (0 when the status is not OK).
  ErrorCode Get(const std::string& key, uint64_t* version, uint64_t* checksum) {
    auto it = FindLive(key);
    if (it == objects_.end() || !it->second.visible) return ErrorCode::kNotFound;
    Obj& o = it->second;
    o.lease_until = std::max(o.lease_until, Now() + cfg_.lease);
    lru_.erase(o.lru_seq);
    o.lru_seq = ++lru_clock_;
    lru_[o.lru_seq] = key;
    *version = o.version;
    *checksum = o.checksum;
    return ErrorCode::kOk;
  }

  ErrorCode Remove(const std::string& key) {
    auto it = FindLive(key);
    if (it == objects_.end()) return ErrorCode::kNotFound;
    if (!it->second.visible) return ErrorCode::kBusy;
    if (it->second.lease_until > Now()) return ErrorCode::kBusy;
    Erase(it);
    return ErrorCode::kOk;
  }

  std::optional<uint64_t> Version(const std::string& key) const {
    auto it = objects_.find(key);
    if (it == objects_.end() || !it->second.visible) return std::nullopt;
    return it->second.version;
  }

  size_t Tick() {
    size_t n = 0;
    while (!in_flight_.empty() && in_flight_.begin()->first.first <= Now()) {
      auto it = objects_.find(in_flight_.begin()->second);
      ++stats.timed_out_puts;
      ++stats.revoked_puts;
      Erase(it);
      ++n;
    }
    ReleaseHeld();
    return n;
  }

  uint64_t visible() const { return objects_.size() - in_flight_.size(); }
  uint64_t in_flight() const { return in_flight_.size(); }
  uint64_t holding_room() const { return Used(); }
  MasterStats stats;

 private:
  struct Obj {
    bool visible = false;
    uint64_t version = 0;
    uint64_t checksum = 0;
    Nanos deadline{0};
    Nanos lease_until{0};
    uint64_t lru_seq = 0;  // key in lru_ while visible
  };
  using Map = std::map<std::string, Obj>;

  Nanos Now() const { return clock_.Now(); }
  uint64_t Used() const { return objects_.size() + held_.size(); }  // objects of room taken
  void ReleaseHeld() {
    while (!held_.empty() && *held_.begin() <= Now()) held_.erase(held_.begin());
  }

  Map::iterator FindLive(const std::string& key) {
    auto it = objects_.find(key);
    if (it != objects_.end() && !it->second.visible && it->second.deadline <= Now()) {
      ++stats.timed_out_puts;
      ++stats.revoked_puts;
      Erase(it);
      return objects_.end();
    }
    return it;
  }

  void Erase(Map::iterator it) {
    if (it->second.visible) {
      lru_.erase(it->second.lru_seq);
    } else {
      in_flight_.erase({it->second.deadline, it->second.version});
    }
    objects_.erase(it);
  }

  // The least recently used unleased visible object leaves; false when there is none.
  bool EvictOne() {
    for (const auto& [seq, key] : lru_) {
      auto it = objects_.find(key);
      if (it->second.lease_until > Now()) continue;
      ++stats.evicted_replicas;
      ++stats.dropped_unspilled;
      Erase(it);
      return true;
    }
    return false;
  }

  MasterConfig cfg_;
  const ManualClock& clock_;
  uint64_t capacity_;
  uint64_t next_version_;
  Map objects_;
  std::map<uint64_t, std::string> lru_;  // oldest first
  uint64_t lru_clock_ = 0;
  std::map<std::pair<Nanos, uint64_t>, std::string> in_flight_;  // by deadline
  std::multiset<Nanos> held_;  // regions of revoked puts, by when they are free again
};

// Keys of varied length (short ones fit a string's inline buffer, long ones do not).
std::string KeyOf(uint32_t i) {
  std::string k = "model/" + std::to_string(i);
  k.append(i % 37, static_cast<char>('a' + i % 26));
  return k;
}

TEST(MasterModelTest, MillionKeysMatchTheReferenceModel) {
  constexpr uint32_t kKeys = MOONCAKE_MODEL_KEYS;
  constexpr uint64_t kCapacityObjects = kKeys / 4;  // most keys get evicted at some point
  MasterConfig cfg;
  cfg.lease = milliseconds(10);
  cfg.put_timeout = milliseconds(40);
  cfg.high_watermark = 0.97;
  cfg.evict_fraction = 0.002;
  ManualClock clock;
  MetadataMaster master(cfg, clock);
  ASSERT_TRUE(master.AddSegment(Rank{1}, kCapacityObjects * kObjectBytes).ok());
  ReferenceMaster model(cfg, clock, kCapacityObjects);

  std::mt19937_64 rng(20261126);
  std::vector<uint32_t> order(kKeys);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<uint32_t> pending;             // put started, not yet ended (as far as we know)
  std::vector<uint32_t> recent(1 << 16, 0);  // recently ended keys, a ring
  size_t recent_n = 0;
  size_t fresh = 0;  // keys of `order` put so far
  uint64_t steps = 0, ok_gets = 0, evictions_seen = 0;
  const auto pick = [&](uint32_t bound) { return static_cast<uint32_t>(rng() % bound); };
  const auto some_key = [&]() -> uint32_t {
    if (recent_n > 0 && pick(10) < 7)
      return recent[pick(static_cast<uint32_t>(std::min(recent_n, recent.size())))];
    return order[pick(static_cast<uint32_t>(std::max<size_t>(fresh, 1)))];
  };
  const auto check_stats = [&]() {
    const MasterStats s = master.Stats();
    ASSERT_EQ(s.objects, model.visible()) << "step " << steps;
    ASSERT_EQ(s.in_flight_puts, model.in_flight()) << "step " << steps;
    ASSERT_EQ(s.evicted_replicas, model.stats.evicted_replicas) << "step " << steps;
    ASSERT_EQ(s.dropped_unspilled, model.stats.dropped_unspilled) << "step " << steps;
    ASSERT_EQ(s.timed_out_puts, model.stats.timed_out_puts) << "step " << steps;
    ASSERT_EQ(s.revoked_puts, model.stats.revoked_puts) << "step " << steps;
    ASSERT_EQ(s.puts_refused_no_space, model.stats.puts_refused_no_space) << "step " << steps;
    ASSERT_EQ(master.SegmentStats(Rank{1})->used, model.holding_room() * kObjectBytes);
  };

  while (fresh < kKeys) {
    ++steps;
    const uint32_t op = pick(100);
    if (op < 28) {  // PutStart: mostly a fresh key, sometimes one seen before
      const uint32_t k = pick(5) > 0 ? order[fresh++] : some_key();
      const std::string key = KeyOf(k);
      auto got = master.PutStart(key, kObjectBytes, ReplicateConfig{});
      ASSERT_EQ(got.status().code(), model.PutStart(key)) << key << " step " << steps;
      if (got.ok()) {
        ASSERT_EQ(got->size(), 1u);
        ASSERT_EQ((*got)[0].length, kObjectBytes);
        if (pick(50) > 0) pending.push_back(k);  // else abandoned: it times out
      } else {
        ASSERT_NE(got.status().message().find(key), std::string::npos) << got.status().ToString();
      }
    } else if (op < 58) {  // PutEnd: mostly a pending put
      uint32_t k = some_key();
      if (!pending.empty() && pick(20) > 0) {
        const size_t i = pick(static_cast<uint32_t>(pending.size()));
        k = pending[i];
        pending[i] = pending.back();
        pending.pop_back();
      }
      const std::string key = KeyOf(k);
      const uint64_t checksum = k * 2654435761u;
      const ErrorCode want = model.PutEnd(key, checksum);
      ASSERT_EQ(master.PutEnd(key, checksum).code(), want) << key << " step " << steps;
      if (want == ErrorCode::kOk) recent[recent_n++ % recent.size()] = k;
    } else if (op < 76) {  // Get
      const std::string key = KeyOf(some_key());
      uint64_t version = 0, checksum = 0;
      const ErrorCode want = model.Get(key, &version, &checksum);
      auto got = master.Get(key);
      ASSERT_EQ(got.status().code(), want) << key << " step " << steps;
      if (got.ok()) {
        ++ok_gets;
        ASSERT_EQ(got->version, version) << key;
        ASSERT_EQ(got->checksum, checksum) << key;
        ASSERT_EQ(got->size, kObjectBytes);
        ASSERT_EQ(got->replicas.size(), 1u);
      }
    } else if (op < 79) {  // Exists (a lease too)
      const std::string key = KeyOf(some_key());
      uint64_t version = 0, checksum = 0;
      ASSERT_EQ(master.Exists(key).code(), model.Get(key, &version, &checksum)) << key;
    } else if (op < 84) {  // Remove
      const std::string key = KeyOf(some_key());
      ASSERT_EQ(master.Remove(key).code(), model.Remove(key)) << key << " step " << steps;
    } else if (op < 87) {  // PutRevoke
      const uint32_t k = !pending.empty() && pick(2)
                             ? pending[pick(static_cast<uint32_t>(pending.size()))]
                             : some_key();
      const std::string key = KeyOf(k);
      ASSERT_EQ(master.PutRevoke(key).code(), model.PutRevoke(key)) << key << " step " << steps;
    } else if (op < 90) {  // Version: no lease, no LRU touch
      const std::string key = KeyOf(some_key());
      auto got = master.Version(key);
      auto want = model.Version(key);
      ASSERT_EQ(got.ok(), want.has_value()) << key;
      if (want) {
        ASSERT_EQ(*got, *want) << key;
      }
    } else if (op < 92) {
      ASSERT_EQ(master.Tick(), model.Tick()) << "step " << steps;
    } else {  // time passes: leases run out, puts time out
      clock.Advance(std::chrono::microseconds(5 + pick(20)));
    }
    if (steps % (1 << 17) == 0) {
      check_stats();
      if (HasFatalFailure()) return;
    }
  }
  check_stats();
  evictions_seen = model.stats.evicted_replicas;
  // The run exercised what it claims to: evictions, timeouts, refusals of a full rank aside.
  EXPECT_GT(evictions_seen, kKeys / 4);
  EXPECT_GT(model.stats.timed_out_puts, 100u);
  EXPECT_GT(ok_gets, kKeys / 10);
  std::printf("steps %llu, evictions %llu, timed-out puts %llu, gets served %llu\n",
              static_cast<unsigned long long>(steps),
              static_cast<unsigned long long>(evictions_seen),
              static_cast<unsigned long long>(model.stats.timed_out_puts),
              static_cast<unsigned long long>(ok_gets));
}

}  // namespace
}  // namespace mooncake::store
