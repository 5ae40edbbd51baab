#include "store/node/store_options.h"

#include <arpa/inet.h>

#include <algorithm>
#include <filesystem>

#include "common/cli/option_table.h"
#include "common/cli/option_values.h"

namespace mooncake::store {
namespace {

namespace po = boost::program_options;
using cli::DurationOption;
using cli::SizeOption;

// store.recover names an SSD folder (rank<r>/ subfolders); store.ssd turns on over it.
Status RecoverOption(const RawStoreOptions& raw, StoreOptions* o) {
  std::error_code ec;
  if (!std::filesystem::is_directory(raw.recover, ec)) {
    return InvalidArgument("store.recover = '" + raw.recover + "': not an existing folder");
  }
  // The folder holds rank<r>/ subfolders (an SSD folder); a run folder holds them under ssd/.
  bool has_ranks = false;
  for (const auto& e : std::filesystem::directory_iterator(raw.recover, ec)) {
    has_ranks |= e.is_directory() && e.path().filename().string().rfind("rank", 0) == 0;
  }
  if (!has_ranks) {
    const bool run_folder = std::filesystem::is_directory(raw.recover + "/ssd", ec);
    return InvalidArgument(
        "store.recover = '" + raw.recover + "': no rank<r>/ folders of SSD buckets there" +
        (run_folder ? " (a run folder: its SSD folder is '" + raw.recover + "/ssd')" : ""));
  }
  if (!raw.ssd_dir.empty() && raw.ssd_dir != raw.recover) {
    return InvalidArgument("store.recover = '" + raw.recover + "' and store.ssd_dir = '" +
                           raw.ssd_dir + "' name different folders");
  }
  o->ssd = true;
  o->recover = true;
  o->ssd_dir = raw.recover;
  return Status::Ok();
}

Status SsdOptions(const RawStoreOptions& raw, bool service, StoreOptions* o) {
  bool ssd = false;
  MC_RETURN_IF_ERROR(cli::OnOffOption("store.ssd", raw.ssd, &ssd));
  o->ssd |= ssd;
  MC_RETURN_IF_ERROR(SizeOption("store.ssd_capacity", raw.ssd_capacity, 64ull << 20, 64ull << 40,
                                &o->ssd_capacity));
  MC_RETURN_IF_ERROR(
      cli::IntOption("store.promote_after", raw.promote_after, 0, 1000000, &o->promote_after));
  if (raw.when_full.empty()) {
    o->keep_when_full = service;
  } else if (raw.when_full == "keep" || raw.when_full == "evict") {
    o->keep_when_full = raw.when_full == "keep";
  } else {
    return InvalidArgument("store.when_full = '" + raw.when_full + "' (allowed: keep, evict)");
  }
  o->spill_queue = std::max<uint64_t>(o->dram / 4, 1ull << 20);
  if (!raw.spill_queue.empty()) {
    MC_RETURN_IF_ERROR(SizeOption("store.spill_queue", raw.spill_queue, 1ull << 20,
                                  std::max<uint64_t>(o->dram, 1ull << 20), &o->spill_queue));
  }
  o->ssd_dir = raw.ssd_dir;
  return raw.recover.empty() ? Status::Ok() : RecoverOption(raw, o);
}

Status ServiceOptions(const RawStoreOptions& raw, StoreOptions* o) {
  in_addr parsed{};
  if (inet_pton(AF_INET, raw.listen.c_str(), &parsed) != 1) {
    return InvalidArgument("store.listen = '" + raw.listen + "' (allowed: an IPv4 address)");
  }
  MC_RETURN_IF_ERROR(cli::IntOption("store.port", raw.port, 0, 65535, &o->port));
  o->listen = raw.listen;
  o->connect_file = raw.connect_file;
  MC_RETURN_IF_ERROR(cli::PortOption("store.metrics_port", raw.metrics_port, &o->metrics_port));
  MC_RETURN_IF_ERROR(DurationOption("store.lease", raw.lease, Nanos(10'000'000),
                                    Nanos(3'600'000'000'000), &o->lease));
  return DurationOption("store.put_timeout", raw.put_timeout, Nanos(100'000'000),
                        Nanos(3'600'000'000'000), &o->put_timeout);
}

}  // namespace

void AddStoreDramOption(po::options_description& d, RawStoreOptions* raw) {
  cli::AddOptionRows(d, {{"store.dram", cli::Text(&raw->dram, "64MiB"),
                          "DRAM registered by each store rank (1MiB..1TiB)"}});
}

void AddStoreSsdOptions(po::options_description& d, RawStoreOptions* raw) {
  cli::AddOptionRows(
      d, {{"store.ssd", cli::Text(&raw->ssd, "off"),
           "on | off: spill blocks evicted from DRAM to HDF5 files of their store rank"},
          {"store.ssd_dir", cli::Named(&raw->ssd_dir, "DIR"),
           "folder of the SSD tier; each store rank uses DIR/rank<r> (default: <run folder>/ssd; "
           "a persistent folder is reused by --store.recover)"},
          {"store.ssd_capacity", cli::Text(&raw->ssd_capacity, "4GiB"),
           "HDF5 bucket files per store rank (64MiB..64TiB)"},
          {"store.promote_after", cli::Number(&raw->promote_after, 2),
           "gets served from SSD before a block is promoted back to DRAM (0 never, up to 1000000)"},
          {"store.when_full", cli::Named(&raw->when_full, "keep|evict"),
           "keep: an object leaves DRAM only once spilled to SSD and the SSD tier deletes nothing; "
           "puts get NoSpace when both are full (default in job.mode = store). evict: a KV cache, "
           "LRU drops from DRAM and SSD (default in job.mode = serve)"},
          {"store.spill_queue", cli::Named(&raw->spill_queue, "SIZE"),
           "bytes of evicted blocks waiting for the SSD tier, per store rank (1MiB..store.dram; "
           "default store.dram / 4)"},
          {"store.recover", cli::Named(&raw->recover, "DIR"),
           "restart over an existing SSD folder: store.ssd = on, store.ssd_dir = DIR; store ranks "
           "verify their files and report their blocks before requests are admitted"}});
}

void AddStoreReplicasOption(po::options_description& d, RawStoreOptions* raw) {
  cli::AddOptionRows(d, {{"store.replicas", cli::Number(&raw->replicas, 1),
                          "replicas of each KV block, on distinct store ranks (1..store ranks)"}});
}

po::options_description StoreServiceOptionsDescription(RawStoreOptions* raw) {
  po::options_description d("Store service (job.mode = store, docs/CLIENT.md)");
  cli::AddOptionRows(
      d,
      {{"store.listen", cli::Text(&raw->listen, "0.0.0.0"),
        "IPv4 address the master and the store ranks accept clients on (0.0.0.0: "
        "every interface; the connection file lists them)"},
       {"store.port", cli::Number(&raw->port, 0),
        "TCP port of the master's listener (0: any free port; store ranks always take free ones)"},
       {"store.connect_file", cli::Named(&raw->connect_file, "FILE"),
        "where rank 0 writes the connection file, mode 0600 (default: <run folder>/connect.json)"},
       {"store.lease", cli::Text(&raw->lease, "10s"),
        "a get or exists keeps the object from eviction and removal this long (10ms..1h), as "
        "Mooncake Store's kv lease"},
       {"store.put_timeout", cli::Text(&raw->put_timeout, "30s"),
        "a put not ended within this (its writer died) is revoked and its space freed "
        "(100ms..1h)"},
       {"store.metrics_port", cli::Text(&raw->metrics_port, "off")->value_name("PORT"),
        "off, or a TCP port on store.listen where rank 0 serves /metrics in the Prometheus text "
        "format and /health (0: any free port; the address goes to <run folder>/metrics.json)"}});
  return d;
}

Status ConvertStoreOptions(const RawStoreOptions& raw, bool service, StoreOptions* out) {
  MC_RETURN_IF_ERROR(SizeOption("store.dram", raw.dram, 1ull << 20, 1ull << 40, &out->dram));
  MC_RETURN_IF_ERROR(ServiceOptions(raw, out));
  MC_RETURN_IF_ERROR(cli::IntOption("store.replicas", raw.replicas, 1, 64, &out->replicas));
  return SsdOptions(raw, service, out);
}

}  // namespace mooncake::store
