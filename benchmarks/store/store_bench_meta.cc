#include "store_bench_meta.h"

#include <time.h>

#include <vector>

#include "store/net/messages.h"

namespace mooncake::bench {
namespace {

// The first failed entry of a reply of `n` entries, a malformed reply, or OK.
template <typename Response, typename StatusOf>
Status CheckReply(const Result<std::vector<std::byte>>& reply, size_t n, StatusOf status_of) {
  if (!reply.ok()) return reply.status();
  Response resp;
  MC_RETURN_IF_ERROR(Decode(*reply, &resp));
  if (resp.entries.size() != n) return ProtocolError("master answered a batch of another size");
  for (const auto& e : resp.entries) {
    Status s = store::FromEntry(status_of(e));
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

// This thread's CPU time, seconds.
double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}  // namespace

Status MetaRpcRound(transport::Rpc& rpc, Rank master, std::span<const std::string> keys,
                    uint64_t size, Nanos timeout) {
  using store::StoreMsg;
  const auto call = [&](StoreMsg type, const std::vector<std::byte>& request) {
    return rpc.Call(master, static_cast<uint16_t>(type), request, timeout);
  };
  std::vector<std::string> names(keys.begin(), keys.end());
  store::PutStartRequest start{{}, names, std::vector<uint64_t>(keys.size(), size)};
  MC_RETURN_IF_ERROR(CheckReply<store::PutStartResponse>(
      call(StoreMsg::kPutStart, store::Encode(start)), keys.size(),
      [](const store::PutStartEntry& e) { return e.status; }));
  // The checksum is not checked by the master: any value makes the object visible.
  store::PutEndRequest end{names, std::vector<uint64_t>(keys.size(), 1)};
  MC_RETURN_IF_ERROR(
      CheckReply<store::StatusResponse>(call(StoreMsg::kPutEnd, store::Encode(end)), keys.size(),
                                        [](const store::StatusEntry& e) { return e; }));
  store::KeysRequest get{std::move(names)};
  return CheckReply<store::GetResponse>(call(StoreMsg::kGet, store::Encode(get)), keys.size(),
                                        [](const store::GetEntry& e) { return e.status; });
}

MasterMetaRate MeasureMasterMeta(store::MasterService& service, const std::string& tag, int batch,
                                 uint64_t size, Nanos min_time) {
  MasterMetaRate rate;
  SteadyClock clock;
  Nanos busy{0};
  std::vector<std::string> keys(static_cast<size_t>(batch));
  const std::vector<uint64_t> sizes(keys.size(), size), checksums(keys.size(), 1);
  const auto fail = [&rate](const Status& s) {
    ++rate.errors;
    if (rate.first_error.empty()) rate.first_error = s.ToString();
  };
  for (uint64_t next = 0; busy < min_time;) {
    for (auto& k : keys) k = tag + std::to_string(next++);
    service.WithMaster([&](store::MetadataMaster& m) {
      const Nanos t0 = clock.Now();
      const double cpu0 = ThreadCpuSeconds();
      for (const auto& r : m.BatchPutStart(keys, sizes, store::ReplicateConfig{})) {
        if (!r.ok()) fail(r.status());
      }
      for (const auto& s : m.BatchPutEnd(keys, checksums)) {
        if (!s.ok()) fail(s);
      }
      for (const auto& r : m.BatchGet(keys)) {
        if (!r.ok()) fail(r.status());
      }
      busy += clock.Now() - t0;
      rate.cpu_seconds += ThreadCpuSeconds() - cpu0;
    });
    rate.ops += 3 * keys.size();
  }
  rate.seconds = std::chrono::duration<double>(busy).count();
  return rate;
}

}  // namespace mooncake::bench
