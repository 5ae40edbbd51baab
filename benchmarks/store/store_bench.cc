// store_bench: put, get and exists throughput and latency of the store (issue 4), and with
// --ops raw the plain one-sided read of the same sizes and footprint for comparison. Run under
// mpirun: rank 0 is the metadata master, ranks 1..--stores are store ranks, the rest clients.
// Every case (size x batch) starts from an empty store; each client puts its share of objects
// (spread over the store, up to --fill of it), then gets them in passes for --min-time, then asks
// exists in batches. Rank 0 prints one row per op and case and writes --csv.
// With --ssd-dir the store ranks keep an SSD tier: before the first ssd / ssd_local op of a
// case every client puts filler objects worth the store's whole DRAM, so each of the case's
// objects is evicted and spilled (the master never promotes them back); `ssd` then gets them
// remotely (the store ranks stage them and the client reads them one-sided) and `ssd_local`
// has each store rank read the same blocks from its own tier, for the ratio of the two, on as
// many threads as the stager has readers (--ssd-local-threads).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>
#include <utility>

#include "cluster/mpi/mpi_session.h"
#include "common/block_content.h"
#include "common/log.h"
#include "common/streaming_copy.h"
#include "common/units.h"
#include "common/wire.h"
#include "store_bench_meta.h"
#include "store_bench_options.h"

namespace mooncake::bench {
namespace {

struct Sample {
  uint64_t calls = 0, keys = 0, bytes = 0, errors = 0;
  double seconds = 0;
  std::vector<float> lat_us;
  std::string first_error;

  void Fail(const Status& s) {
    ++errors;
    if (first_error.empty()) first_error = s.ToString();
  }
  std::vector<std::byte> Encode() const {
    WireWriter w;
    for (uint64_t v : {calls, keys, bytes, errors}) w.Put(v);
    w.Put(seconds);
    w.PutString(first_error);
    w.Put<uint32_t>(static_cast<uint32_t>(lat_us.size()));
    for (float f : lat_us) w.Put(f);
    return w.Take();
  }
  static Sample Decode(std::span<const std::byte> b) {
    Sample s;
    WireReader r(b);
    for (uint64_t* v : {&s.calls, &s.keys, &s.bytes, &s.errors}) r.Get(v);
    r.Get(&s.seconds);
    r.GetString(&s.first_error);
    uint32_t n = 0;
    r.Get(&n);
    for (uint32_t i = 0; i < n && r.ok(); ++i) {
      float f = 0;
      r.Get(&f);
      s.lat_us.push_back(f);
    }
    return s;
  }
};

struct Case {
  std::string op;
  size_t size = 0;
  int batch = 1;
  size_t objects = 0;  // per client
};

class Bench {
 public:
  Bench(const cluster::Bootstrap& mpi, StoreCluster& c, const StoreBenchOptions& o, SsdBench* ssd)
      : mpi_(mpi), c_(c), o_(o), ssd_(ssd) {}

  int Run() {
    if (mpi_.rank() == 0) OpenOutput();
    if (c_.client) Warmup();
    bool ok = true;
    for (size_t size : o_.sizes) {
      for (int batch : o_.batches) ok = RunCase(size, batch) && ok;
    }
    return ok ? 0 : 1;
  }

 private:
  // Reads every store segment once: a client maps a same-host store rank's shared segment on
  // first touch, and those page faults (a one-time cost per client and page) are not the
  // store's steady-state speed. Reads leave the store's bytes alone.
  void Warmup() {
    const size_t chunk = std::min<size_t>(c_.buffer().size(), 16 << 20);
    for (const auto& seg : c_.topology.segments) {
      for (uint64_t off = 0; off < seg.length; off += chunk) {
        size_t len = std::min<uint64_t>(chunk, seg.length - off);
        transport::TransferRequest r{transport::OpKind::kRead, c_.buffer().data(), seg.rank,
                                     seg.base + off, len};
        auto b = c_.transport->Submit(std::span(&r, 1));
        Status s = b.ok() ? (*b)->Wait(o_.cluster.client.timeout) : b.status();
        if (!s.ok()) log::Warn("warm-up read of store rank {}: {}", seg.rank.value, s.ToString());
      }
    }
  }

  size_t ObjectsPerClient(size_t size, int batch) const {
    double store = o_.fill * static_cast<double>(o_.cluster.store_dram) * o_.cluster.stores;
    size_t n = static_cast<size_t>(store / (static_cast<double>(size) * o_.replicas * c_.clients));
    n = std::min(n, o_.max_objects);
    return std::max<size_t>(n / batch * batch, batch);
  }
  // Buffer slots of one thread (each thread owns a contiguous part of the client buffer).
  size_t Slots(size_t size) const { return o_.cluster.client_buffer / size / o_.threads; }
  // Keys name the case too: the SSD tier outlives the master's Reset between cases, and a block
  // of another size under the same key would be taken for this one.
  std::string Key(size_t i, int client = -1) const {
    return std::string("c")
        .append(std::to_string(client < 0 ? c_.client_index : client))
        .append("/")
        .append(case_tag_)
        .append(std::to_string(i));
  }
  // Every client's keys of the case (the master and the store ranks need them for SSD ops).
  std::vector<std::string> CaseKeys(const Case& k) const {
    std::vector<std::string> keys;
    for (int c = 0; c < c_.clients; ++c) {
      for (size_t i = 0; i < k.objects; ++i) keys.push_back(Key(i, c));
    }
    return keys;
  }
  std::span<std::byte> Slot(size_t i, size_t size, int t) const {
    return c_.buffer().subspan((t * Slots(size) + i % Slots(size)) * size, size);
  }

  bool RunCase(size_t size, int batch) {
    if (Slots(size) < static_cast<size_t>(batch)) {
      if (mpi_.rank() == 0) {
        log::Warn("skipping size {} batch {}: --client-buffer holds fewer objects than a batch",
                  FormatBytes(size), batch);
      }
      return true;
    }
    Case k{"", size, batch, ObjectsPerClient(size, batch)};
    case_tag_ = std::to_string(size) + "x" + std::to_string(batch) + "/";
    if (c_.service) c_.service->Reset();
    if (c_.client) FillBlockContent({size, 0, 7}, c_.buffer());
    bool ok = true;
    const bool want_objects = std::any_of(
        o_.ops.begin(), o_.ops.end(), [](const auto& op) { return op != "raw" && op != "meta"; });
    if (want_objects) ok = Phase(Case{"put", size, batch, k.objects}, /*report=*/Has("put")) && ok;
    bool evicted = false;
    for (const auto& op : o_.ops) {
      if (op == "put") continue;
      if ((op == "ssd" || op == "ssd_local") && !std::exchange(evicted, true)) {
        ok = EvictToSsd(k) && ok;
      }
      ok = Phase(Case{op, size, batch, k.objects}, true) && ok;
    }
    return ok;
  }
  bool Has(const std::string& op) const {
    return std::find(o_.ops.begin(), o_.ops.end(), op) != o_.ops.end();
  }

  // Clients put filler objects worth the whole store's DRAM, so every object of the case is
  // evicted to SSD (LRU: they are the oldest); the master waits for the spills and checks.
  bool EvictToSsd(const Case& k) {
    Barrier();
    bool ok = true;
    if (c_.client) {
      const uint64_t store = o_.cluster.store_dram * static_cast<uint64_t>(o_.cluster.stores);
      const size_t n = store / k.size / static_cast<size_t>(c_.clients) + 1;
      std::span<const std::byte> value = Slot(0, k.size, 0);
      for (size_t i = 0; i < n && ok; ++i) {
        const std::string key =
            "fill/" + case_tag_ + std::to_string(c_.client_index) + "/" + std::to_string(i);
        Status st = c_.client->Put(key, value);
        for (int t = 0; st.code() == ErrorCode::kNoSpace && t < 30000; ++t) {  // being spilled
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
          st = c_.client->Put(key, value);
        }
        if (!st.ok()) log::Error("filler put {}: {}", key, st.ToString());
        ok = st.ok();
      }
    }
    Barrier(std::chrono::seconds(120));
    if (c_.service) {
      ok = ssd_->WaitSpills(std::chrono::seconds(300)) && ok;
      const size_t left = ssd_->InDram(CaseKeys(k));
      if (left > 0) log::Error("{} objects of the case are still in DRAM", left);
      ok = left == 0 && ok;
    }
    return ok;
  }

  bool Phase(const Case& k, bool report) {
    const bool ssd_op = k.op == "ssd" || k.op == "ssd_local";
    if (ssd_op && o_.ssd.cold && c_.role == StoreRole::kStore) {
      const std::string what = ssd_->DropCaches();
      if (mpi_.rank() == 1) log::Info("{} before {}: {}", k.op, FormatBytes(k.size), what);
    }
    const uint64_t hits_before = SsdHits();  // before the barrier releases the clients
    Barrier();
    store::StatsResponse before;
    if (c_.service) before = c_.service->Stats();
    Sample s;
    if (c_.client && k.op != "ssd_local") s = RunClient(k);
    if (k.op == "ssd_local" && c_.role == StoreRole::kStore) s = RunLocal(k);
    // The master and store ranks wait here, in a barrier that sleeps between polls: in the
    // blocking Gather they busy-polled, taking the cores the client's copy threads need.
    Barrier(o_.min_time);
    auto all = mpi_.Gather(s.Encode(), 0);
    if (mpi_.rank() != 0) return s.errors == 0;
    if (k.op == "ssd") {  // every get must have been served from SSD, none from DRAM
      uint64_t keys = 0;
      for (size_t r = 1 + o_.cluster.stores; r < all.size(); ++r)
        keys += Sample::Decode(all[r]).keys;
      if (SsdHits() - hits_before != keys) {
        log::Error("ssd: {} of {} gets were SSD hits", SsdHits() - hits_before, keys);
        return false;
      }
    }
    store::StatsResponse after = c_.service->Stats();
    double master_rate = 0;
    if (after.exists_ns > before.exists_ns) {
      master_rate = 1e9 * static_cast<double>(after.exists_keys - before.exists_keys) /
                    static_cast<double>(after.exists_ns - before.exists_ns);
    }
    MasterMetaRate meta;
    if (k.op == "meta") meta = MeasureMasterMeta(k);
    return !report || Report(k, all, master_rate, meta);
  }

  // Rank 0, after the clients' meta phase: the same rounds straight into the master on this
  // one thread. Errors are logged and reported as 0 ops.
  MasterMetaRate MeasureMasterMeta(const Case& k) {
    MasterMetaRate r =
        bench::MeasureMasterMeta(*c_.service, "M/" + case_tag_, k.batch, k.size, o_.min_time);
    if (r.errors > 0) {
      log::Error("meta inside the master: {} errors, first: {}", r.errors, r.first_error);
      r.ops = 0;
    }
    return r;
  }

  uint64_t SsdHits() const {
    if (!c_.service) return 0;
    return c_.service->WithMaster([](store::MetadataMaster& m) { return m.Stats().ssd_hits; });
  }

  // A store rank reads the case's blocks it holds from its own tier (--ssd-local-threads).
  Sample RunLocal(const Case& k) {
    LocalReads r =
        ssd_->ReadLocally(CaseKeys(k), k.size, o_.min_time, o_.ssd.cold, o_.ssd.local_threads);
    Sample s;
    s.calls = r.calls;
    s.keys = r.calls;
    s.bytes = r.bytes;
    s.errors = r.errors;
    s.seconds = r.seconds;
    s.lat_us = std::move(r.lat_us);
    s.first_error = r.first_error;
    return s;
  }

  // --threads threads per client, each on every T-th batch and its own part of the buffer.
  Sample RunClient(const Case& k) {
    std::vector<std::string> keys;
    for (size_t i = 0; i < (k.op == "raw" ? 0 : k.objects); ++i) keys.push_back(Key(i));
    const int threads = o_.threads;
    std::vector<Sample> parts(threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] { parts[t] = RunThread(k, keys, t); });
    }
    for (auto& th : pool) th.join();
    Sample s;
    for (auto& p : parts) {
      s.calls += p.calls;
      s.keys += p.keys;
      s.bytes += p.bytes;
      s.errors += p.errors;
      s.seconds = std::max(s.seconds, p.seconds);
      s.lat_us.insert(s.lat_us.end(), p.lat_us.begin(), p.lat_us.end());
      if (s.first_error.empty()) s.first_error = p.first_error;
    }
    return s;
  }

  // Runs calls for at least --min-time. Puts cannot repeat a key (objects are immutable): after
  // each pass over the thread's objects, if time is left, it removes them (untimed) and puts
  // them again; the last pass leaves every object in place for the phases that follow.
  Sample RunThread(const Case& k, const std::vector<std::string>& keys, int t) {
    Sample s;
    SteadyClock clock;
    Nanos busy{0};  // time in the loop before the last restart of t0 (removals excluded)
    Nanos t0 = clock.Now();
    const bool is_put = k.op == "put";
    const bool one_pass = k.op == "ssd" && o_.ssd.cold;  // a second pass would read cached pages
    const size_t step = static_cast<size_t>(k.batch) * o_.threads;
    size_t next = static_cast<size_t>(k.batch) * t;
    while (true) {
      if (next >= k.objects && one_pass) break;  // the whole pass, however long it takes
      if (!one_pass && busy + (clock.Now() - t0) >= o_.min_time && s.calls > 0 &&
          (!is_put || next >= k.objects)) {
        break;
      }
      if (next >= k.objects) {
        next = static_cast<size_t>(k.batch) * t;
        if (next >= k.objects) break;  // fewer batches than threads
        if (is_put) {                  // the removal is not counted: stop the clock around it
          busy += clock.Now() - t0;
          if (!RemoveThreadObjects(k, keys, t, &s)) break;
          t0 = clock.Now();
        }
      }
      const Nanos c0 = clock.Now();
      Status st = Call(k, keys, next, t, &s);
      if (!st.ok()) s.Fail(st);
      s.lat_us.push_back(std::chrono::duration<float, std::micro>(clock.Now() - c0).count());
      ++s.calls;
      next += step;
    }
    s.seconds = std::chrono::duration<double>(busy + (clock.Now() - t0)).count();
    return s;
  }

  // Removes the objects this thread put (untimed; see RunThread). False after an error.
  bool RemoveThreadObjects(const Case& k, const std::vector<std::string>& keys, int t, Sample* s) {
    std::vector<std::string> mine;
    const size_t step = static_cast<size_t>(k.batch) * o_.threads;
    for (size_t first = static_cast<size_t>(k.batch) * t; first < k.objects; first += step) {
      for (size_t i = first; i < first + static_cast<size_t>(k.batch); ++i) {
        mine.push_back(keys[i]);
      }
    }
    // In batches the master accepts (at most store::kMaxBatchKeys keys per call).
    for (size_t at = 0; at < mine.size(); at += store::kMaxBatchKeys) {
      const size_t n = std::min<size_t>(store::kMaxBatchKeys, mine.size() - at);
      for (const auto& st : c_.client->BatchRemove(std::span(mine).subspan(at, n))) {
        if (!st.ok()) {
          s->Fail(st);
          return false;
        }
      }
    }
    return true;
  }

  // One call of `k.batch` keys starting at object `first`.
  Status Call(const Case& k, const std::vector<std::string>& keys, size_t first, int t, Sample* s) {
    const size_t b = static_cast<size_t>(k.batch);
    s->keys += b;
    if (k.op == "exists") {
      auto r = c_.client->BatchExists(std::span(keys).subspan(first, b));
      if (!r.ok()) return r.status();
      size_t found = std::count(r->begin(), r->end(), 1);
      return found == b ? Status::Ok() : NotFound(std::to_string(b - found) + " keys missing");
    }
    if (k.op == "raw") return RawRead(k, first, t);
    if (k.op == "meta") return MetaCall(k, t, s->keys - b);
    s->bytes += b * k.size;
    std::vector<Status> st;
    if (k.op == "put") {
      std::vector<std::span<const std::byte>> vals;
      for (size_t i = first; i < first + b; ++i) vals.push_back(Slot(i, k.size, t));
      st = c_.client->BatchPut(std::span(keys).subspan(first, b), vals,
                               store::ReplicateConfig{.replicas = o_.replicas});
    } else {
      std::vector<std::span<std::byte>> outs;
      for (size_t i = first; i < first + b; ++i) outs.push_back(Slot(i, k.size, t));
      for (auto& r : c_.client->BatchGet(std::span(keys).subspan(first, b), outs)) {
        st.push_back(r.status());
      }
    }
    for (const auto& x : st) {
      if (!x.ok()) return x;
    }
    return Status::Ok();
  }

  // PutStart + PutEnd + Get of `k.batch` keys never used before (`seq`: this thread's count of
  // keys so far), as three RPCs to the master; no bytes move.
  Status MetaCall(const Case& k, int t, uint64_t seq) {
    std::vector<std::string> keys(static_cast<size_t>(k.batch));
    const std::string prefix =
        "m" + std::to_string(c_.client_index) + "/" + case_tag_ + std::to_string(t) + "/";
    for (auto& key : keys) key = prefix + std::to_string(seq++);
    return MetaRpcRound(*c_.rpc, Rank{0}, keys, k.size, o_.cluster.client.timeout);
  }

  // The same footprint as the objects of the case, read without the store: object g of this
  // client sits on store rank 1 + g % stores at slot g / stores. Over a segment mapped here
  // (shared memory) the copy is the one a get makes (streamed into the buffer from 256 KiB up,
  // StoreClient::MoveAndHash), without the hash and the metadata: the ratio then shows what the
  // store adds, not a difference between two ways of copying.
  Status RawRead(const Case& k, size_t first, int t) {
    std::vector<transport::TransferRequest> reqs;
    for (size_t i = first; i < first + k.batch; ++i) {
      size_t g = c_.client_index * k.objects + i;
      const auto& seg = c_.topology.segments[g % c_.topology.segments.size()];
      uint64_t off = (g / c_.topology.segments.size()) * k.size;
      if (off + k.size > seg.length) off = 0;
      std::span<std::byte> slot = Slot(i, k.size, t);
      if (const std::byte* mapped = c_.transport->MappedAddress(seg.rank, seg.base + off, k.size)) {
        if (k.size >= 256 * 1024) {
          StreamingCopy(slot.data(), mapped, k.size);
        } else {
          std::memcpy(slot.data(), mapped, k.size);
        }
        continue;
      }
      reqs.push_back({transport::OpKind::kRead, slot.data(), seg.rank, seg.base + off, k.size});
    }
    if (reqs.empty()) return Status::Ok();
    auto batch = c_.transport->Submit(reqs);
    if (!batch.ok()) return batch.status();
    return (*batch)->Wait(o_.cluster.client.timeout);
  }

  // `master_rate`: exists keys/s inside the master; `meta`: the metadata operations inside it
  // (--ops meta), per wall-clock and per CPU second of its thread.
  bool Report(const Case& k, const std::vector<std::vector<std::byte>>& all, double master_rate,
              const MasterMetaRate& meta) {
    Sample t;
    std::string error;
    // ssd_local ran on the store ranks, everything else on the clients.
    const size_t first = k.op == "ssd_local" ? 1 : 1 + o_.cluster.stores;
    const size_t last = k.op == "ssd_local" ? 1 + o_.cluster.stores : all.size();
    for (size_t r = first; r < last; ++r) {
      Sample s = Sample::Decode(all[r]);
      t.calls += s.calls;
      t.keys += s.keys;
      t.bytes += s.bytes;
      t.errors += s.errors;
      t.seconds = std::max(t.seconds, s.seconds);
      t.lat_us.insert(t.lat_us.end(), s.lat_us.begin(), s.lat_us.end());
      if (error.empty()) error = s.first_error;
    }
    if (k.op == "raw") t.bytes = t.keys * k.size;
    std::sort(t.lat_us.begin(), t.lat_us.end());
    auto pct = [&](double p) {
      return t.lat_us.empty() ? 0.0 : t.lat_us[static_cast<size_t>(p * (t.lat_us.size() - 1))];
    };
    const double secs = std::max(t.seconds, 1e-9);
    char row[512];
    std::snprintf(row, sizeof row,
                  "%s,%zu,%d,%d,%d,%d,%u,%llu,%zu,%llu,%.4f,%.3f,%.0f,%.0f,%.1f,%.1f,%.1f,%.1f,%"
                  "llu,%.0f,%.0f,%.0f",
                  k.op.c_str(), k.size, k.batch, c_.clients, o_.threads, o_.cluster.stores,
                  o_.replicas, static_cast<unsigned long long>(t.calls), k.objects * c_.clients,
                  static_cast<unsigned long long>(t.bytes), secs, t.bytes / secs / 1e9,
                  t.calls / secs, t.keys / secs, pct(0.5), pct(0.9), pct(0.99),
                  t.lat_us.empty() ? 0.0 : t.lat_us.back(),
                  static_cast<unsigned long long>(t.errors), master_rate,
                  static_cast<double>(meta.ops) / std::max(meta.seconds, 1e-9),
                  static_cast<double>(meta.ops) / std::max(meta.cpu_seconds, 1e-9));
    std::printf("%s\n", row);
    std::fflush(stdout);
    if (csv_) csv_ << row << "\n" << std::flush;
    if (t.errors)
      log::Error("{} size {} batch {}: {} errors, first: {}", k.op, k.size, k.batch, t.errors,
                 error);
    return t.errors == 0;
  }

  void OpenOutput() {
    const char* header =
        "op,size,batch,clients,threads,stores,replicas,calls,objects,bytes,seconds,gb_per_s,calls_"
        "per_s,"
        "keys_per_s,p50_us,p90_us,p99_us,max_us,errors,master_exists_keys_per_s,master_meta_ops_"
        "per_s,master_meta_ops_per_cpu_s";
    std::printf("%s\n", header);
    if (!o_.csv.empty()) {
      csv_.open(o_.csv);
      csv_ << header << "\n";
    }
  }
  // `extra`: how long the slowest rank may legitimately be busy before it arrives (a timed
  // phase), on top of --phase-timeout.
  void Barrier(Nanos extra = Nanos(0)) {
    Status s = mpi_.Barrier(o_.cluster.phase_timeout + extra);
    if (!s.ok()) {
      log::Error("barrier: {}", s.ToString());
      mpi_.Abort(3);
    }
  }

  const cluster::Bootstrap& mpi_;
  StoreCluster& c_;
  const StoreBenchOptions& o_;
  SsdBench* ssd_;         // null without --ssd-dir
  std::string case_tag_;  // size and batch of the running case, part of every key
  std::ofstream csv_;
};

}  // namespace
}  // namespace mooncake::bench

int main(int argc, char** argv) {
  using namespace mooncake;
  auto mpi = cluster::MpiSession::Init(&argc, &argv);
  if (!mpi.ok()) {
    std::fprintf(stderr, "store_bench: %s\n", mpi.status().ToString().c_str());
    return 2;
  }
  auto opts = bench::ParseStoreBenchOptions(argc, argv, (*mpi)->rank() == 0);
  if (!opts.ok()) {
    if (opts.status().code() == ErrorCode::kNotFound) return 0;
    if ((*mpi)->rank() == 0)
      std::fprintf(stderr, "store_bench: %s\n", opts.status().ToString().c_str());
    return 2;
  }
  auto c = bench::StartStoreCluster(**mpi, opts->cluster);
  if (!c.ok()) {
    std::fprintf(stderr, "store_bench rank %d: %s\n", (*mpi)->rank(),
                 c.status().ToString().c_str());
    (*mpi)->Abort(2);
  }
  if ((*mpi)->rank() == 0) {
    log::Info("store_bench: {} store rank(s) of {}, {} client(s), tls {}", opts->cluster.stores,
              FormatBytes(opts->cluster.store_dram), (*c)->clients, opts->tls_label);
  }
  std::unique_ptr<bench::SsdBench> ssd;
  if (!opts->ssd.dir.empty()) {
    auto started = bench::SsdBench::Start(**mpi, **c, opts->ssd);
    if (!started.ok()) {
      std::fprintf(stderr, "store_bench rank %d: %s\n", (*mpi)->rank(),
                   started.status().ToString().c_str());
      (*mpi)->Abort(2);
    }
    ssd = std::move(*started);
  }
  int rc = bench::Bench(**mpi, **c, *opts, ssd.get()).Run();
  if (ssd) ssd->Stop();  // the staging region goes before the transport closes
  Status s = bench::StopStoreCluster(**mpi, **c, std::chrono::seconds(30));
  if (!s.ok()) log::Error("stop: {}", s.ToString());
  return rc;
}
