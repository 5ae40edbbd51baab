#include "transport/loopback/loopback_transport.h"

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "common/streaming_copy.h"
#include "common/wire.h"
#include "transport/batch_tracker.h"
#include "transport/region_table.h"

namespace mooncake::transport {

class LoopbackTransport;

// Shared state of an in-process cluster. Each rank has a worker thread that executes what is
// delivered to it (copies and messages), so a paused rank really stalls its peers.
class LoopbackHub {
 public:
  explicit LoopbackHub(int world_size) : ranks_(world_size) {}
  ~LoopbackHub() {
    for (auto& r : ranks_) {
      if (r) Stop(*r);
    }
  }

  struct RankState {
    std::mutex mutex;
    std::condition_variable cv;
    std::deque<std::function<void()>> work;
    bool paused = false;
    bool stopping = false;
    std::thread worker;
    RegionTable<uint64_t> local_regions;  // base -> region id
  };

  void Start(int rank) {
    ranks_[rank] = std::make_unique<RankState>();
    RankState* s = ranks_[rank].get();
    s->worker = std::thread([s] {
      for (;;) {
        std::function<void()> job;
        {
          std::unique_lock<std::mutex> lock(s->mutex);
          s->cv.wait(lock, [s] { return s->stopping || (!s->paused && !s->work.empty()); });
          if (s->stopping) return;
          job = std::move(s->work.front());
          s->work.pop_front();
        }
        job();
      }
    });
  }

  void Post(int rank, std::function<void()> job) {
    RankState& s = *ranks_[rank];
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      s.work.push_back(std::move(job));
    }
    s.cv.notify_one();
  }

  // Whether MappedAddress hands out peers' memory (as ucx does over shared memory). Tests turn
  // it off to make a client take the path it takes over a network.
  std::atomic<bool> mapping{true};

  void SetPaused(int rank, bool paused) {
    RankState& s = *ranks_[rank];
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      s.paused = paused;
    }
    s.cv.notify_all();
  }

  void Stop(RankState& s) {
    {
      std::lock_guard<std::mutex> lock(s.mutex);
      s.stopping = true;
    }
    s.cv.notify_all();
    if (s.worker.joinable()) s.worker.join();
  }

  RankState& rank(int r) { return *ranks_[r]; }
  int size() const { return static_cast<int>(ranks_.size()); }
  std::vector<LoopbackTransport*>& transports() { return transports_; }

 private:
  std::vector<std::unique_ptr<RankState>> ranks_;
  std::vector<LoopbackTransport*> transports_;
};

class LoopbackTransport final : public Transport {
 public:
  LoopbackTransport(std::shared_ptr<LoopbackHub> hub, Rank self)
      : hub_(std::move(hub)), self_(self), dead_(new std::atomic<bool>[hub_->size()]) {
    for (int r = 0; r < hub_->size(); ++r) dead_[r] = false;
  }
  // Stops this rank's worker first, so no queued job can reach a destroyed transport.
  ~LoopbackTransport() override { hub_->Stop(hub_->rank(self_.value)); }

  Rank self() const override { return self_; }
  int world_size() const override { return hub_->size(); }
  std::string backend_name() const override { return "loopback"; }

  std::vector<std::byte> LocalAddress() const override {
    WireWriter w;
    w.Put<int32_t>(self_.value);
    return w.Take();
  }
  Status ConnectAll(const std::vector<std::vector<std::byte>>& addresses) override {
    if (static_cast<int>(addresses.size()) != hub_->size()) {
      return InvalidArgument("loopback: expected " + std::to_string(hub_->size()) + " addresses");
    }
    return Status::Ok();
  }

  Result<MemoryRegion> RegisterMemory(void* addr, size_t length, MemoryType type) override {
    if (addr == nullptr || length == 0) return InvalidArgument("cannot register an empty region");
    if (type != MemoryType::kHost) return NotSupported("loopback registers host memory only");
    MemoryRegion r{next_region_id_++, addr, length, type};
    hub_->rank(self_.value).local_regions.Insert(reinterpret_cast<uint64_t>(addr), length, r.id);
    return r;
  }
  Status UnregisterMemory(const MemoryRegion& region) override {
    if (!hub_->rank(self_.value).local_regions.Erase(reinterpret_cast<uint64_t>(region.addr))) {
      return NotFound("region " + std::to_string(region.id) + " is not registered");
    }
    return Status::Ok();
  }
  Result<RemoteDescriptor> Export(const MemoryRegion& region) override {
    RemoteDescriptor d;
    d.addr = reinterpret_cast<uint64_t>(region.addr);
    d.length = region.length;
    d.type = region.type;
    WireWriter w;
    w.Put<uint64_t>(region.id);
    d.packed_key = w.Take();
    return d;
  }
  Status Import(Rank owner, const RemoteDescriptor& d) override {
    if (owner.value < 0 || owner.value >= hub_->size()) {
      return InvalidArgument("no rank " + std::to_string(owner.value));
    }
    imported_.Insert(d.addr, d.length, owner.value);
    return Status::Ok();
  }

  // Every rank lives in this process: a registered, imported range is mapped by definition.
  // (Unregistering it at the target, which tests use to stand for a failed rank, unmaps it.)
  std::byte* MappedAddress(Rank peer, uint64_t remote_addr, size_t length) override {
    if (!hub_->mapping || peer.value < 0 || peer.value >= hub_->size()) return nullptr;
    auto owner = imported_.Find(remote_addr, length);
    if (!owner || *owner != peer.value) return nullptr;
    if (!hub_->rank(peer.value).local_regions.Find(remote_addr, length)) return nullptr;
    return reinterpret_cast<std::byte*>(remote_addr);
  }

  void MarkPeerDead(Rank peer, const std::string&) override {
    if (peer.value >= 0 && peer.value < hub_->size()) dead_[peer.value] = true;
  }
  bool PeerDead(Rank peer) const override {
    return peer.value >= 0 && peer.value < hub_->size() && dead_[peer.value];
  }

  Result<std::unique_ptr<TransferBatch>> Submit(
      std::span<const TransferRequest> requests) override {
    auto tracker = BatchTracker::Make(requests);
    for (size_t i = 0; i < requests.size(); ++i) {
      const TransferRequest& r = requests[i];
      tracker->SetSlices(i, r.length == 0 ? 0 : 1);
      if (r.length == 0) continue;
      Status check = Validate(r);
      if (!check.ok()) {
        tracker->CompleteSlice(i, check);
        continue;
      }
      // The copy runs on the target rank's worker, as a one-sided op served by its progress.
      hub_->Post(r.peer.value, [this, tracker, i, r] {
        auto& target = hub_->rank(r.peer.value);
        if (!target.local_regions.Find(r.remote_addr, r.length)) {
          tracker->CompleteSlice(i, InvalidArgument(RangeMessage(r) + " was unregistered"));
          return;
        }
        auto* remote = reinterpret_cast<std::byte*>(r.remote_addr);
        if (r.op == OpKind::kRead) {
          std::memcpy(r.local, remote, r.length);
        } else if (r.bypass_cache) {
          StreamingCopy(remote, r.local, r.length);
        } else {
          std::memcpy(remote, r.local, r.length);
        }
        tracker->CompleteSlice(i, Status::Ok());
      });
    }
    // `this` drives nothing (Progress is a no-op) but tells the wait which peers died.
    return std::unique_ptr<TransferBatch>(new SharedBatch(tracker, this));
  }

  void SetMessageHandler(MessageHandler handler) override {
    std::lock_guard<std::mutex> lock(handler_mutex_);
    handler_ = std::make_shared<MessageHandler>(std::move(handler));
  }
  Status SendMessage(Rank peer, std::span<const std::byte> payload) override {
    if (peer.value < 0 || peer.value >= hub_->size()) {
      return InvalidArgument("no rank " + std::to_string(peer.value));
    }
    LoopbackTransport* target = hub_->transports()[peer.value];
    std::vector<std::byte> copy(payload.begin(), payload.end());
    Rank from = self_;
    hub_->Post(peer.value, [target, from, copy = std::move(copy)] { target->Deliver(from, copy); });
    return Status::Ok();
  }
  bool Progress() override { return false; }
  std::string DescribePath(Rank) const override { return "loopback(memcpy)"; }
  void BeginShutdown() override {}
  // Stops this rank's delivery thread: once Close returns, no handler of this rank runs again,
  // so its owner may destroy what the handlers use.
  Status Close(Nanos) override {
    hub_->Stop(hub_->rank(self_.value));
    return Status::Ok();
  }

 private:
  static std::string RangeMessage(const TransferRequest& r) {
    return "rank " + std::to_string(r.peer.value) + ": remote range [0x" + ToHex(r.remote_addr) +
           ", +" + std::to_string(r.length) + ")";
  }
  static std::string ToHex(uint64_t v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(v));
    return buf;
  }
  Status Validate(const TransferRequest& r) const {
    if (r.peer.value < 0 || r.peer.value >= hub_->size()) {
      return InvalidArgument("request names rank " + std::to_string(r.peer.value) + " of " +
                             std::to_string(hub_->size()));
    }
    if (r.local == nullptr) return InvalidArgument("request has a null local buffer");
    if (dead_[r.peer.value])
      return PeerFailure("rank " + std::to_string(r.peer.value) + " is dead");
    auto owner = imported_.Find(r.remote_addr, r.length);
    if (!owner || *owner != r.peer.value) {
      return InvalidArgument(RangeMessage(r) + " is not inside a region imported from that rank");
    }
    return Status::Ok();
  }
  void Deliver(Rank from, std::span<const std::byte> payload) {
    std::shared_ptr<MessageHandler> h;
    {
      std::lock_guard<std::mutex> lock(handler_mutex_);
      h = handler_;
    }
    if (h && *h) (*h)(from, payload);
  }

  std::shared_ptr<LoopbackHub> hub_;
  Rank self_;
  uint64_t next_region_id_ = 1;
  RegionTable<int32_t> imported_;              // remote base -> owner rank
  std::unique_ptr<std::atomic<bool>[]> dead_;  // MarkPeerDead, by rank
  std::mutex handler_mutex_;
  std::shared_ptr<MessageHandler> handler_;
};

std::vector<std::unique_ptr<Transport>> CreateLoopbackCluster(
    int world_size, std::shared_ptr<LoopbackHub>* hub_out) {
  auto hub = std::make_shared<LoopbackHub>(world_size);
  for (int r = 0; r < world_size; ++r) hub->Start(r);
  std::vector<std::unique_ptr<Transport>> out;
  for (int r = 0; r < world_size; ++r) {
    auto t = std::make_unique<LoopbackTransport>(hub, Rank{r});
    hub->transports().push_back(t.get());
    out.push_back(std::move(t));
  }
  if (hub_out) *hub_out = hub;
  return out;
}

void SetLoopbackRankPaused(LoopbackHub& hub, Rank rank, bool paused) {
  hub.SetPaused(rank.value, paused);
}

void SetLoopbackMapping(LoopbackHub& hub, bool mapped) { hub.mapping = mapped; }

}  // namespace mooncake::transport
