#include "store/ssd/ssd_store_service.h"

#include <memory>
#include <mutex>

#include "common/log.h"

namespace mooncake::store {
namespace {

// A StatusResponse with `each`'s status per entry, in order.
template <typename Entry, typename Each>
StatusResponse StatusPerEntry(const std::vector<Entry>& entries, Each each) {
  StatusResponse resp;
  for (const auto& e : entries) resp.entries.push_back(ToEntry(each(e)));
  return resp;
}

}  // namespace

SsdStoreService::SsdStoreService(transport::Rpc& rpc, SsdTier& tier, std::span<std::byte> segment,
                                 Rank master, SsdStoreServiceConfig cfg)
    : rpc_(rpc), tier_(tier), segment_(segment), master_(master), cfg_(cfg) {}

SsdStoreService::~SsdStoreService() { Stop(); }

void SsdStoreService::Stop() {
  if (stager_) stager_->Stop();
}

void SsdStoreService::Start() {
  if (cfg_.transport != nullptr) {
    auto stager = SsdStager::Create(*cfg_.transport, tier_, cfg_.staging);
    if (stager.ok()) {
      stager_ = std::move(*stager);
    } else {
      log::Warn("SSD reads go through RPC replies: {}", stager.status().ToString());
    }
  }
  // Inline: both only queue or free under a short lock (Rpc::RegisterInline's contract).
  transport::CheckRegistered(rpc_.RegisterInline(
      SsdMsg::kSsdStage,
      [this](Rank, std::span<const std::byte> req, transport::Responder r) { Stage(req, r); }));
  transport::CheckRegistered(rpc_.RegisterInline(
      SsdMsg::kSsdRelease, [this](Rank, std::span<const std::byte> req, transport::Responder) {
        SsdReleaseNotice n;
        if (stager_ && Decode(req, &n).ok()) stager_->Release(n.ticket);
      }));
  transport::CheckRegistered(rpc_.Register(
      SsdMsg::kSpill,
      [this](Rank, std::span<const std::byte> req, transport::Responder r) { Spill(req, r); }));
  transport::CheckRegistered(rpc_.Register<PromoteRequest, StatusResponse>(
      SsdMsg::kPromote, [this](Rank, const PromoteRequest& q) { return Promote(q); }));
  transport::CheckRegistered(rpc_.Register<SsdStageRequest, SsdReadResponse>(
      SsdMsg::kSsdRead, [this](Rank, const SsdStageRequest& q) { return Read(q); }));
  // On the dispatcher: it waits for the tier's writer (one flush), never for another rank.
  transport::CheckRegistered(rpc_.Register<SsdTombstoneRequest, StatusResponse>(
      SsdMsg::kSsdTombstone, [this](Rank, const SsdTombstoneRequest& q) { return Tombstone(q); }));
}

void SsdStoreService::Stage(std::span<const std::byte> request, transport::Responder responder) {
  if (!stager_) {
    responder.Fail(NotSupported("store rank has no SSD staging region"));
    return;
  }
  SsdStageRequest req;
  Status s = Decode(request, &req);
  if (!s.ok()) {
    responder.Fail(s);
    return;
  }
  stager_->Submit(std::move(req.keys), std::move(req.versions), req.client_verifies != 0,
                  responder);
}

Status SsdStoreService::CheckRange(uint64_t offset, uint64_t length) const {
  if (length == 0 || offset > segment_.size() || length > segment_.size() - offset) {
    return InvalidArgument("range [" + std::to_string(offset) + ", +" + std::to_string(length) +
                           ") is outside the segment of " + std::to_string(segment_.size()) + " B");
  }
  return Status::Ok();
}

void SsdStoreService::Spill(std::span<const std::byte> request, transport::Responder responder) {
  SpillRequest req;
  Status s = Decode(request, &req);
  if (!s.ok()) {
    responder.Fail(s);
    return;
  }
  // Answered when the last block is written (or refused); `remaining` starts at n + 1 so the
  // answer cannot leave before every block was offered to the tier.
  struct Pending {
    std::mutex mu;
    size_t remaining;
    SpillResponse resp;
    transport::Responder responder;
  };
  auto p = std::make_shared<Pending>();
  p->remaining = req.entries.size() + 1;
  p->resp.entries.resize(req.entries.size());
  p->responder = responder;
  auto finish = [p] {
    bool last = false;
    {
      std::lock_guard<std::mutex> lock(p->mu);
      last = --p->remaining == 0;
    }
    if (last) p->responder.Reply(Encode(p->resp));
  };
  for (size_t i = 0; i < req.entries.size(); ++i) {
    const SpillEntry& e = req.entries[i];
    Status st = CheckRange(e.offset, e.length);
    if (st.ok()) {
      auto done = [this, p, i, finish, key = e.key](Result<SsdBlock> r) {
        {
          std::lock_guard<std::mutex> lock(p->mu);
          if (r.ok()) {
            p->resp.entries[i].location = r->location;
          } else {
            p->resp.entries[i].status = ToEntry(r.status());
          }
        }
        if (r.ok()) {
          ++spilled_;
          if (on_spilled) on_spilled(key);
        } else {
          ++spill_errors_;
          log::Warn("spill of '{}': {}", key, r.status().ToString());
        }
        finish();
      };
      st = tier_.TrySpillBorrowed(e.key, e.version, segment_.subspan(e.offset, e.length),
                                  e.checksum, done);
      if (st.ok()) continue;
      if (st.code() == ErrorCode::kBusy) ++refused_;
    }
    {
      std::lock_guard<std::mutex> lock(p->mu);
      p->resp.entries[i].status = ToEntry(st);
    }
    finish();
  }
  finish();
}

StatusResponse SsdStoreService::Promote(const PromoteRequest& request) {
  return StatusPerEntry(request.entries, [this](const PromoteEntry& e) {
    Status s = CheckRange(e.offset, e.length);
    if (s.ok()) {
      auto n = tier_.Read(e.key, e.version, segment_.subspan(e.offset, e.length));
      if (!n.ok()) {
        s = n.status();
      } else if (*n != e.length) {
        s = Corrupt("block '" + e.key + "' has " + std::to_string(*n) + " B on SSD, not " +
                    std::to_string(e.length));
      }
    }
    if (s.ok()) ++promoted_;
    return s;
  });
}

StatusResponse SsdStoreService::Tombstone(const SsdTombstoneRequest& request) {
  return StatusPerEntry(request.entries, [this](const SsdTombstone& t) {
    Status s = tier_.Tombstone(t.key, t.version);
    if (s.ok()) {
      ++tombstones_;
    } else {
      log::Warn("tombstone of '{}' version {}: {}", t.key, t.version, s.ToString());
    }
    return s;
  });
}

SsdReadResponse SsdStoreService::Read(const SsdStageRequest& req) {
  SsdReadResponse resp;
  uint64_t total = 0;
  for (size_t i = 0; i < req.keys.size(); ++i) {
    const std::string& key = req.keys[i];
    SsdReadEntry e;
    auto block = tier_.Lookup(key, req.versions[i]);
    Status s = block.status();
    if (s.ok() && total + block->size > kMaxSsdReadBytes) {
      s = InvalidArgument("SSD read answer would exceed " + std::to_string(kMaxSsdReadBytes) +
                          " B");
    }
    if (s.ok()) {
      e.bytes.resize(block->size);
      auto n = tier_.Read(key, req.versions[i],
                          e.bytes);  // verifies the checksum: a torn block is never served
      s = n.status();
      if (s.ok()) e.bytes.resize(*n);
    }
    ++reads_;
    if (!s.ok()) {
      ++read_failures_;
      e.bytes.clear();
      e.status = ToEntry(s);
    }
    total += e.bytes.size();
    resp.entries.push_back(std::move(e));
  }
  return resp;
}

void SsdStoreService::OnTierDrop(const SsdBlock& block) {
  ++dropped_;
  SsdDropNotice n;
  n.blocks.push_back(block);
  Status s = rpc_.Notify(master_, SsdMsg::kSsdDrop, Encode(n));
  if (!s.ok())
    log::Warn("telling the master about dropped SSD block '{}': {}", block.key, s.ToString());
}

SsdStoreStats SsdStoreService::Stats() const {
  // Blocks answered either way count as reads; staged blocks not served (read failed, or no
  // room in time) as read failures.
  const SsdStagerStats st = stager_ ? stager_->Stats() : SsdStagerStats{};
  const uint64_t staged_failures = st.read_failures + st.busy;
  return SsdStoreStats{spilled_.load(),
                       refused_.load(),
                       spill_errors_.load(),
                       promoted_.load(),
                       reads_.load() + st.blocks_staged + staged_failures,
                       read_failures_.load() + staged_failures,
                       dropped_.load(),
                       tombstones_.load(),
                       st};
}

RecoveredBlocks ToRecoveredBlocks(const RecoveryReport& report) {
  RecoveredBlocks out;
  static_cast<RecoveryCounts&>(out) = report;
  out.blocks = report.blocks;
  return out;
}

}  // namespace mooncake::store
