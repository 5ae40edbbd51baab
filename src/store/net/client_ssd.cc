// StoreClient: gets of SSD-resident objects. The store rank holding the SSD replica reads the
// block from its HDF5 tier (checksum verified there) and answers the bytes in the RPC reply; the
// client copies them into the caller's buffer and verifies them against the master's checksum.
// Chosen over staging into the store rank's segment + a one-sided read because KV blocks are
// small (tens of KiB in the live job) and it needs no staging allocation or second round trip.
// Requests are grouped per store rank and cut at kMaxSsdReadBytes of answer.
#include <map>

#include "common/checksum.h"
#include "store/net/client.h"
#include "store/net/ssd_messages.h"

namespace mooncake::store {

void StoreClient::ReadFromSsd(std::span<const std::string> keys,
                              std::span<const std::span<std::byte>> outs, const GetResponse& resp,
                              const std::vector<size_t>& which, const Deadline& d,
                              std::vector<Status>* status) {
  std::map<Rank, std::vector<std::vector<size_t>>> calls;  // rank -> batches of key indices
  std::map<Rank, uint64_t> bytes;
  for (size_t i : which) {
    const ObjectView& v = resp.entries[i].view;
    const ReplicaLocation* ssd = nullptr;
    for (const auto& r : v.replicas) {
      if (r.tier == Tier::kSsd) {
        ssd = &r;
        break;
      }
    }
    if (ssd == nullptr) continue;  // keeps NotFound
    if (v.size > kMaxSsdReadBytes) {
      (*status)[i] = InvalidArgument("SSD-resident '" + keys[i] + "' is larger than an SSD read");
      continue;
    }
    auto& batches = calls[ssd->rank];
    if (batches.empty() || batches.back().size() >= kMaxBatchKeys ||
        bytes[ssd->rank] + v.size > kMaxSsdReadBytes) {
      batches.emplace_back();
      bytes[ssd->rank] = 0;
    }
    batches.back().push_back(i);
    bytes[ssd->rank] += v.size;
  }
  for (const auto& [rank, batches] : calls) {
    for (const auto& batch : batches) {
      KeysRequest req;
      for (size_t i : batch) req.keys.push_back(keys[i]);
      Nanos left = d.Remaining(clock_);
      Result<std::vector<std::byte>> reply =
          left > Nanos(0)
              ? rpc_.Call(rank, static_cast<uint16_t>(SsdMsg::kSsdRead), Encode(req), left)
              : Result<std::vector<std::byte>>(Timeout("deadline passed"));
      SsdReadResponse r;
      Status s = reply.ok() ? Decode(*reply, &r) : reply.status();
      if (s.ok() && r.entries.size() != batch.size()) s = ProtocolError("SSD read answer length");
      const std::string from = "SSD of store rank " + std::to_string(rank.value);
      for (size_t j = 0; j < batch.size(); ++j) {
        const size_t i = batch[j];
        const ObjectView& v = resp.entries[i].view;
        if (!s.ok()) {
          (*status)[i] = s.WithContext("reading '" + keys[i] + "' from " + from);
          continue;
        }
        Status e = FromEntry(r.entries[j].status);
        const auto& b = r.entries[j].bytes;
        if (e.ok() && b.size() != v.size) {
          e = Corrupt("'" + keys[i] + "' from " + from + " has " + std::to_string(b.size()) + " B");
        }
        if (e.ok() && cfg_.verify_checksum && Checksum64(b.data(), b.size()) != v.checksum) {
          e = Corrupt("'" + keys[i] + "' from " + from + " fails its checksum");
        }
        if (e.ok()) std::copy(b.begin(), b.end(), outs[i].begin());
        (*status)[i] = e;
      }
    }
  }
}

}  // namespace mooncake::store
