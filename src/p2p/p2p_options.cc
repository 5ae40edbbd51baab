#include "p2p/p2p_options.h"

#include <fmt/format.h>

#include <boost/program_options.hpp>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "common/cli/command_line.h"
#include "common/cli/config_file.h"
#include "common/cli/option_table.h"
#include "common/cli/option_values.h"
#include "transport/factory/transport_options.h"

namespace po = boost::program_options;

namespace mooncake::p2p {
namespace {

struct Raw {
  std::string config, source, dest, name, copies, source_ranks, csv, status_file, log_level;
  std::string piece_size, update_interval, piece_timeout, heartbeat_interval, peer_timeout,
      rpc_timeout, deadline, progress_interval, kill, corrupt;
  transport::RawTransportOptions transport;
  bool in_memory = false;
  int inflight = 4;
};

po::options_description Describe(Raw* r) {
  po::options_description all(
      "Usage: mpirun -np N mooncake p2p --source PATH --dest DIR [options]\n"
      "Distributes a file or a folder from the source rank(s) to every other rank: receivers\n"
      "read verified pieces one-sided from the source and from each other (docs/P2P.md).\n"
      "Exit status: 0 every receiving rank holds every byte (verified); 1 a rank failed or a\n"
      "byte differs; 2 usage; 3 a rank died and every survivor holds every byte; 4 the tracker\n"
      "(rank 0) was lost.\n\nOptions");
  po::options_description d("Distribution");
  cli::AddOptionRows(
      d,
      {cli::HelpRow(),
       cli::ConfigRow(&r->config,
                      "INI file with any of these options; the command line overrides it"),
       {"source", cli::Named(&r->source, "PATH"),
        "file or folder to distribute (read where the source ranks run)"},
       {"dest", cli::Named(&r->dest, "DIR"),
        "folder the receiving ranks write into (node-local disk or /dev/shm); not with "
        "--in-memory"},
       {"in-memory", po::bool_switch(&r->in_memory),
        "receivers keep the object in registered memory, one copy per rank"},
       {"copies", cli::Text(&r->copies, "node"),
        "node: one copy per host in DIR, shared by the host's ranks; rank: DIR/rank<r> per rank"},
       {"source-ranks", cli::Text(&r->source_ranks, "0"),
        "ranks that hold PATH: a list (0,3) or 'readable' (every rank that can read PATH)"},
       {"name", cli::Text(&r->name, ""), "object name (default: the last component of PATH)"},
       {"csv", cli::Named(&r->csv, "FILE"), "rank 0 writes the per-rank table here (CSV)"},
       {"status-file", cli::Named(&r->status_file, "FILE"),
        "rank 0 writes the exit status here (mpirun with orte_enable_recovery exits 0 whatever "
        "its ranks return)"},
       cli::LogLevelRow(&r->log_level)});
  po::options_description p("P2P");
  cli::AddOptionRows(
      p,
      {{"p2p.piece_size", cli::Text(&r->piece_size, "4MiB"),
        "piece size: the unit of reads, checks and sharing (64KiB..1GiB)"},
       {"p2p.inflight_per_peer", cli::Number(&r->inflight, 4),
        "reads in flight from one holder (1..64)"},
       {"p2p.update_interval", cli::Text(&r->update_interval, "2ms"),
        "how often a receiver tells the tracker its new pieces and hears of others' (100us..1s)"},
       {"p2p.piece_timeout", cli::Text(&r->piece_timeout, "10s"),
        "deadline of one read; a holder that misses it is not read from again (10ms..10min)"},
       {"p2p.heartbeat_interval", cli::Text(&r->heartbeat_interval, "100ms"),
        "wall time between a rank's heartbeats to the tracker (10ms..10s)"},
       {"p2p.peer_timeout", cli::Text(&r->peer_timeout, "3s"),
        "a rank not heard from for this long is declared dead (100ms..10min)"},
       {"p2p.rpc_timeout", cli::Text(&r->rpc_timeout, "5s"),
        "deadline of every call to the tracker (1ms..10min)"},
       {"p2p.deadline", cli::Text(&r->deadline, "1h"), "a fetch not done by then fails (1s..7d)"},
       {"p2p.progress_interval", cli::Text(&r->progress_interval, "5s"),
        "rank 0 prints a progress line this often while ranks fetch (100ms..1h)"}});
  po::options_description f("Fault injection (tests)");
  cli::AddOptionRows(
      f, {{"fault.kill", cli::Named(&r->kill, "RANK@PIECES"),
           "rank RANK kills itself (SIGKILL) once it verified PIECES pieces"},
          {"fault.corrupt", cli::Named(&r->corrupt, "RANK"),
           "source rank RANK serves every piece with one byte flipped (its files stay intact)"}});
  all.add(d)
      .add(p)
      .add(transport::TransportOptionsDescription(&r->transport,
                                                  transport::TransportOptionSet::kPath))
      .add(f);
  return all;
}

Status RankNumber(const char* name, const std::string& text, int32_t* out) {
  try {
    size_t used = 0;
    const int v = std::stoi(text, &used);
    if (used != text.size() || v < 0) throw std::invalid_argument(text);
    *out = v;
    return Status::Ok();
  } catch (const std::exception&) {
    return InvalidArgument(fmt::format("{} = '{}': not a rank number", name, text));
  }
}

Status Timings(const Raw& r, P2pOptions* o) {
  auto& c = o->command;
  constexpr Nanos kMs(1'000'000), kS(1'000'000'000);
  MC_RETURN_IF_ERROR(cli::DurationOption("p2p.update_interval", r.update_interval, kMs / 10, kS,
                                         &c.p2p.fetch.update_interval));
  MC_RETURN_IF_ERROR(cli::DurationOption("p2p.piece_timeout", r.piece_timeout, kMs * 10, kS * 600,
                                         &c.p2p.fetch.piece_timeout));
  MC_RETURN_IF_ERROR(cli::DurationOption("p2p.heartbeat_interval", r.heartbeat_interval, kMs * 10,
                                         kS * 10, &c.heartbeat_interval));
  MC_RETURN_IF_ERROR(cli::DurationOption("p2p.peer_timeout", r.peer_timeout, kMs * 100, kS * 600,
                                         &c.peer_timeout));
  if (c.peer_timeout < c.heartbeat_interval * 2) {
    return InvalidArgument(
        fmt::format("p2p.peer_timeout = '{}' must be at least twice p2p.heartbeat_interval ('{}')",
                    r.peer_timeout, r.heartbeat_interval));
  }
  MC_RETURN_IF_ERROR(
      cli::DurationOption("p2p.rpc_timeout", r.rpc_timeout, kMs, kS * 600, &c.rpc_timeout));
  MC_RETURN_IF_ERROR(
      cli::DurationOption("p2p.deadline", r.deadline, kS, kS * 604'800, &c.p2p.fetch.deadline));
  MC_RETURN_IF_ERROR(cli::DurationOption("p2p.progress_interval", r.progress_interval, kMs * 100,
                                         kS * 3600, &c.progress_interval));
  c.p2p.fetch.orphan_delay = c.p2p.fetch.update_interval * 5;
  c.p2p.fetch.stall_timeout = std::max(c.peer_timeout * 5, Nanos(10 * kS));
  c.p2p.lookup_timeout = std::max(c.peer_timeout * 10, Nanos(60 * kS));
  return Status::Ok();
}

Status Faults(const Raw& r, P2pOptions* o) {
  auto& c = o->command;
  if (!r.kill.empty()) {
    const size_t at = r.kill.find('@');
    if (at == std::string::npos) {
      return InvalidArgument(fmt::format("fault.kill = '{}': expected RANK@PIECES", r.kill));
    }
    MC_RETURN_IF_ERROR(RankNumber("fault.kill", r.kill.substr(0, at), &c.kill_rank));
    int32_t pieces = 0;
    MC_RETURN_IF_ERROR(RankNumber("fault.kill (pieces)", r.kill.substr(at + 1), &pieces));
    c.kill_after = static_cast<uint64_t>(pieces);
  }
  if (!r.corrupt.empty())
    MC_RETURN_IF_ERROR(RankNumber("fault.corrupt", r.corrupt, &c.corrupt_rank));
  return Status::Ok();
}

Status Convert(const Raw& r, P2pOptions* o) {
  auto& c = o->command;
  if (r.source.empty()) return InvalidArgument("source: missing (--source PATH)");
  c.source = r.source;
  c.in_memory = r.in_memory;
  if (!r.in_memory && r.dest.empty()) {
    return InvalidArgument("dest: missing (--dest DIR, or --in-memory)");
  }
  if (r.in_memory && !r.dest.empty()) {
    return InvalidArgument("dest: not with --in-memory (the object stays in memory)");
  }
  c.dest = r.dest;
  c.name = r.name;
  if (!c.name.empty() && (c.name.find('/') != std::string::npos || c.name == "." ||
                          c.name == ".." || c.name.size() > 255)) {
    return InvalidArgument(
        fmt::format("name = '{}': one path component of 1 to 255 bytes", r.name));
  }
  MC_RETURN_IF_ERROR(cli::ChoiceOption(
      "copies", r.copies, {{"node", Copies::kNode}, {"rank", Copies::kRank}}, &c.copies));
  o->source_ranks = r.source_ranks;
  o->sources_readable = r.source_ranks == "readable";
  if (!o->sources_readable) {
    auto ranks = ParseRankList(r.source_ranks, 0);
    if (!ranks.ok()) return ranks.status();
    c.source_ranks = *ranks;
  }
  MC_RETURN_IF_ERROR(
      cli::SizeOption("p2p.piece_size", r.piece_size, 64 * 1024, 1ull << 30, &c.p2p.piece_size));
  MC_RETURN_IF_ERROR(
      cli::IntOption("p2p.inflight_per_peer", r.inflight, 1, 64, &c.p2p.fetch.limits.per_peer));
  c.p2p.fetch.limits.per_source = c.p2p.fetch.limits.per_peer;
  MC_RETURN_IF_ERROR(Timings(r, o));
  MC_RETURN_IF_ERROR(Faults(r, o));
  c.csv = r.csv;
  o->status_file = r.status_file;
  MC_RETURN_IF_ERROR(cli::ParseLogLevel(r.log_level, &o->log_level));
  return transport::ConvertTransportOptions(r.transport, &o->transport,
                                            transport::TransportOptionSet::kPath);
}

int Usage(const std::string& message) {
  std::cerr << "mooncake p2p: " << message << "\n";
  return 2;
}

}  // namespace

Result<std::vector<int32_t>> ParseRankList(const std::string& text, int world) {
  std::vector<int32_t> out;
  std::set<int32_t> seen;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    int32_t rank = 0;
    MC_RETURN_IF_ERROR(RankNumber("source-ranks", item, &rank));
    if (world > 0 && rank >= world) {
      return OutOfRange(fmt::format("source-ranks = '{}': rank {} is not below the job's {} ranks",
                                    text, rank, world));
    }
    if (!seen.insert(rank).second) {
      return InvalidArgument(fmt::format("source-ranks = '{}': rank {} twice", text, rank));
    }
    out.push_back(rank);
  }
  if (out.empty()) return InvalidArgument(fmt::format("source-ranks = '{}': no rank", text));
  return out;
}

P2pParse ParseP2pOptions(int argc, char** argv) {
  P2pParse result;
  Raw raw;
  const po::options_description all = Describe(&raw);
  po::variables_map vm;
  try {
    po::store(cli::ParseCommandLine(std::vector<std::string>(argv + 1, argv + argc), all), vm);
    if (vm.count("help")) {
      std::cout << all
                << "\nUnits: sizes take B, KiB, MiB, GiB (or KB, MB, GB); durations take ns, us, "
                   "ms, s, min, h.\nExample: mpirun -np 8 build/mooncake p2p --source "
                   "/scratch/ckpt --dest /dev/shm\n";
      return result;
    }
    if (vm.count("config")) cli::StoreConfigFile(vm["config"].as<std::string>(), all, vm);
    po::notify(vm);
  } catch (const po::error& e) {
    result.exit_code = Usage(e.what());
    return result;
  }
  P2pOptions options;
  Status s = Convert(raw, &options);
  if (!s.ok()) {
    result.exit_code = Usage(s.message());
    return result;
  }
  result.options = std::move(options);
  return result;
}

}  // namespace mooncake::p2p
