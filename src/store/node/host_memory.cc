#include "store/node/host_memory.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "common/clock.h"
#include "common/units.h"
#include "common/wire_fields.h"

namespace mooncake::store {
namespace {

// A limit at or above this is "no limit" (cgroup v1 writes 2^63 rounded down to a page).
constexpr uint64_t kNoLimit = 1ull << 60;

// The first number after `key` in a "key value [kB]" file (/proc/meminfo, memory.stat); 0 when
// absent.
uint64_t FieldOf(const std::string& path, const std::string& key, uint64_t unit) {
  std::ifstream in(path);
  std::string name;
  uint64_t value = 0;
  std::string rest;
  while (in >> name >> value) {
    std::getline(in, rest);
    if (name == key) return value * unit;
  }
  return 0;
}

// The first line of a file as a number; kNoLimit when it is "max" or unreadable.
uint64_t NumberIn(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return kNoLimit;
  try {
    return std::stoull(text);
  } catch (...) {
    return kNoLimit;
  }
}

// What this process's memory cgroup still leaves it (limit - usage + inactive file cache,
// which the kernel reclaims first); kNoLimit without a limit.
uint64_t CgroupRoom() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    // "0::/path" (v2) or "4:memory:/path" (v1).
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    std::string dir, limit, usage, stat_key;
    if (controllers.empty() && line.rfind("0:", 0) == 0) {
      dir = "/sys/fs/cgroup" + path;
      limit = "memory.max", usage = "memory.current", stat_key = "inactive_file";
    } else if (controllers == "memory") {
      dir = "/sys/fs/cgroup/memory" + path;
      limit = "memory.limit_in_bytes", usage = "memory.usage_in_bytes",
      stat_key = "total_inactive_file";
    } else {
      continue;
    }
    const uint64_t max = NumberIn(dir + "/" + limit);
    if (max >= kNoLimit) continue;
    const uint64_t used = NumberIn(dir + "/" + usage);
    if (used >= kNoLimit) continue;
    const uint64_t reclaimable = FieldOf(dir + "/memory.stat", stat_key, 1);
    const uint64_t charged = used > reclaimable ? used - reclaimable : 0;
    return max > charged ? max - charged : 0;
  }
  return kNoLimit;
}

}  // namespace

uint64_t AvailableMemory(std::string* source) {
  const uint64_t meminfo = FieldOf("/proc/meminfo", "MemAvailable:", 1024);
  const uint64_t cgroup = CgroupRoom();
  if (cgroup < meminfo) {
    *source = "the limit of its memory cgroup, less what the cgroup uses";
    return cgroup;
  }
  *source = "MemAvailable in /proc/meminfo";
  return meminfo;
}

Status CheckStoreMemory(const std::vector<RankMemory>& ranks, uint64_t store_dram) {
  struct Host {
    int store_ranks = 0;
    const RankMemory* first = nullptr;
  };
  std::map<std::string, Host> hosts;
  std::vector<std::string> order;  // hosts in rank order, for a stable first report
  for (const RankMemory& r : ranks) {
    Host& h = hosts[r.host];
    if (h.first == nullptr) {
      h.first = &r;
      order.push_back(r.host);
    }
    if (r.store) ++h.store_ranks;
  }
  for (const std::string& name : order) {
    const Host& h = hosts[name];
    if (h.store_ranks == 0 || h.first->available == 0) continue;  // 0: could not be read
    const uint64_t need = store_dram * static_cast<uint64_t>(h.store_ranks);
    if (need <= h.first->available) continue;
    return InvalidArgument(
        "store.dram = " + FormatBytes(store_dram) + " x " + std::to_string(h.store_ranks) +
        " store rank(s) on host " + name + " = " + FormatBytes(need) + ", but " + name + " has " +
        FormatBytes(h.first->available) + " available (" + h.first->source +
        "): lower store.dram, or place fewer store ranks on each host (--hostfile)");
  }
  return Status::Ok();
}

int FirstStoreRankOnHost(const std::vector<RankMemory>& ranks, int rank) {
  if (rank < 0 || rank >= static_cast<int>(ranks.size()) || !ranks[rank].store) return -1;
  for (int r = 0; r < static_cast<int>(ranks.size()); ++r) {
    if (ranks[r].store && ranks[r].host == ranks[rank].host) return r;
  }
  return -1;
}

void TouchPages(std::byte* data, uint64_t size, std::chrono::nanoseconds interval,
                const std::function<void(uint64_t, std::chrono::nanoseconds)>& progress) {
  constexpr uint64_t kChunk = 64ull << 20;  // the clock is read once per 64 MiB
  SteadyClock clock;
  const Nanos start = clock.Now();
  Nanos next = start + interval;
  for (uint64_t done = 0; done < size;) {
    const uint64_t n = std::min(kChunk, size - done);
    std::fill(data + done, data + done + n, std::byte{0});
    done += n;
    const Nanos now = clock.Now();
    if (progress && now >= next && done < size) {
      progress(done, now - start);
      next = now + interval;
    }
  }
}

Result<std::vector<RankMemory>> GatherRankMemory(const cluster::Bootstrap& bootstrap, bool store,
                                                 Nanos timeout) {
  RankMemory mine{bootstrap.hostname(), store, 0, ""};
  mine.available = AvailableMemory(&mine.source);
  auto all = bootstrap.AllGather(WireEncode(mine), "memory check", timeout);
  if (!all.ok()) return all.status();
  std::vector<RankMemory> ranks;
  for (const auto& bytes : *all) {
    auto r = WireDecode<RankMemory>(bytes, "store::RankMemory");
    ranks.push_back(r.ok() ? *r : RankMemory{});
  }
  return ranks;
}

void TouchSegment(std::byte* data, uint64_t size, const std::vector<RankMemory>& ranks, int rank) {
  const bool reports = FirstStoreRankOnHost(ranks, rank) == rank;
  int on_host = 0;
  for (const RankMemory& r : ranks) on_host += r.store && r.host == ranks[rank].host ? 1 : 0;
  TouchPages(data, size, std::chrono::seconds(5), [&](uint64_t done, Nanos elapsed) {
    if (!reports) return;
    std::printf(
        "store: touching %s of DRAM on each of the %d store rank(s) on %s: %s (%.0f %%) "
        "after %s\n",
        FormatBytes(size).c_str(), on_host, ranks[rank].host.c_str(), FormatBytes(done).c_str(),
        100.0 * static_cast<double>(done) / size, FormatDuration(elapsed).c_str());
    std::fflush(stdout);
  });
}

}  // namespace mooncake::store
