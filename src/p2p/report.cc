#include "p2p/report.h"

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <set>

#include "common/enum_names.h"
#include "common/units.h"

namespace mooncake::p2p {
namespace {

constexpr EnumName<RankRole> kRoleNames[] = {
    {RankRole::kSource, "source"}, {RankRole::kFetch, "fetch"}, {RankRole::kShare, "share"}};
const char* RoleName(RankRole role) { return NameIn(kRoleNames, role, "?"); }

double Seconds(int64_t ns) { return static_cast<double>(ns) / 1e9; }

double GBps(uint64_t bytes, int64_t ns) {
  return ns > 0 ? static_cast<double>(bytes) / static_cast<double>(ns) : 0.0;
}

}  // namespace

Verdict Judge(const JobSummary& job) {
  Verdict v;
  std::set<int32_t> dead;
  for (const auto& [rank, why] : job.dead) dead.insert(rank);
  uint64_t from_source = 0, read = 0;
  std::set<int32_t> reported;
  bool source_failed = false;
  for (const RankReport& r : job.reports) {
    reported.insert(r.rank);
    from_source += r.from_source;
    read += r.from_source + r.from_peers;
    v.corrupt += r.corrupt;
    if (r.role == RankRole::kSource) {
      source_failed |= !r.ok;
      continue;
    }
    ++v.receivers;
    if (dead.count(r.rank)) continue;
    r.ok ? ++v.ok : ++v.failed;
  }
  v.dead = static_cast<uint32_t>(dead.size());
  for (int32_t r : dead) {
    if (!reported.count(r)) ++v.receivers;  // died before reporting: a receiver lost
  }
  v.source_share = read > 0 ? static_cast<double>(from_source) / static_cast<double>(read) : 0.0;
  if (v.failed > 0 || source_failed || (v.ok == 0 && v.receivers > 0)) {
    v.result = "FAILED";
    v.exit_code = 1;
  } else if (v.dead > 0) {
    v.result = "RANK_LOST";
    v.exit_code = 3;
  } else {
    v.result = "OK";
  }
  return v;
}

std::string FormatReport(const JobSummary& job, const Verdict& v) {
  std::string out =
      fmt::format("\n== mooncake p2p: '{}', {} in {} pieces of {}, {} ranks ==\n", job.object,
                  FormatBytes(job.bytes), job.pieces, FormatBytes(job.piece_size), job.world);
  out += fmt::format("{:<5} {:<14} {:<7} {:>11} {:>8} {:>8} {:>7} {:>7} {:>6} {:>7} {:>7}  {}\n",
                     "rank", "host", "role", "bytes", "fetch s", "check s", "GB/s", "source",
                     "peers", "present", "corrupt", "result");
  std::map<int32_t, const RankReport*> by_rank;
  for (const auto& r : job.reports) by_rank[r.rank] = &r;
  std::map<int32_t, std::string> dead(job.dead.begin(), job.dead.end());
  for (int32_t rank = 0; rank < job.world; ++rank) {
    const std::string host = rank < static_cast<int32_t>(job.hosts.size()) ? job.hosts[rank] : "?";
    auto it = by_rank.find(rank);
    if (it == by_rank.end()) {
      out += fmt::format(
          "{:<5} {:<14} {:<7} {:>11} {:>8} {:>8} {:>7} {:>7} {:>6} {:>7} {:>7}  "
          "DEAD ({})\n",
          rank, host, "?", "-", "-", "-", "-", "-", "-", "-", "-",
          dead.count(rank) ? dead[rank] : "no report");
      continue;
    }
    const RankReport& r = *it->second;
    std::string result = r.ok ? "OK" : "FAILED: " + r.error;
    if (dead.count(rank)) result += " (then declared dead: " + dead[rank] + ")";
    const bool fetched = r.role == RankRole::kFetch;
    out += fmt::format(
        "{:<5} {:<14} {:<7} {:>11} {:>8} {:>8} {:>7} {:>7} {:>6} {:>7} {:>7}  {}\n", rank,
        host.substr(0, 14), RoleName(r.role), FormatBytes(r.bytes),
        fetched ? fmt::format("{:.3f}", Seconds(r.fetch_ns)) : "-",
        r.role == RankRole::kSource ? "-" : fmt::format("{:.3f}", Seconds(r.verify_ns)),
        fetched ? fmt::format("{:.2f}", GBps(r.bytes, r.fetch_ns)) : "-",
        fetched ? std::to_string(r.from_source) : "-", fetched ? std::to_string(r.from_peers) : "-",
        fetched ? std::to_string(r.present) : "-", fetched ? std::to_string(r.corrupt) : "-",
        result);
  }
  const double seconds = Seconds(job.distribution.count());
  out += fmt::format(
      "distribution: {} to {} receiving ranks in {:.3f} s ({:.2f} GB/s per rank), {:.1f}% of "
      "pieces read from the source(s), {} damaged pieces read again\n",
      FormatBytes(job.bytes), v.receivers, seconds, GBps(job.bytes, job.distribution.count()),
      100.0 * v.source_share, v.corrupt);
  out += fmt::format(
      "p2p result={} receivers={} ok={} failed={} dead={} bytes={} seconds={:.4f} GBps={:.3f} "
      "source_share={:.4f} corrupt={}\n",
      v.result, v.receivers, v.ok, v.failed, v.dead, job.bytes, seconds,
      GBps(job.bytes, job.distribution.count()), v.source_share, v.corrupt);
  return out;
}

Status WriteCsv(const std::string& path, const JobSummary& job) {
  std::ofstream out(path);
  if (!out) return IoError("cannot write " + path);
  out << "rank,host,role,ok,bytes,fetch_s,verify_s,GBps,from_source,from_peers,present,corrupt,"
         "read_failures,error\n";
  for (const RankReport& r : job.reports) {
    std::string error = r.error;
    for (char& c : error) {
      if (c == ',' || c == '\n') c = ';';
    }
    const std::string host =
        r.rank < static_cast<int32_t>(job.hosts.size()) ? job.hosts[r.rank] : "";
    out << fmt::format("{},{},{},{},{},{:.6f},{:.6f},{:.4f},{},{},{},{},{},{}\n", r.rank, host,
                       RoleName(r.role), r.ok ? 1 : 0, r.bytes, Seconds(r.fetch_ns),
                       Seconds(r.verify_ns), GBps(r.bytes, r.fetch_ns), r.from_source, r.from_peers,
                       r.present, r.corrupt, r.read_failures, error);
  }
  for (const auto& [rank, why] : job.dead) {
    out << fmt::format("{},{},dead,0,0,0,0,0,0,0,0,0,0,{}\n", rank,
                       rank < static_cast<int32_t>(job.hosts.size()) ? job.hosts[rank] : "", why);
  }
  out.close();
  if (!out) return IoError("cannot write " + path);
  return Status::Ok();
}

}  // namespace mooncake::p2p
