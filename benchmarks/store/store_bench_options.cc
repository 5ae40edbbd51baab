#include "store_bench_options.h"

#include <boost/program_options.hpp>
#include <sstream>

#include "common/cli/command_line.h"
#include "common/units.h"

namespace mooncake::bench {

namespace po = boost::program_options;

namespace {
std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}
}  // namespace

Result<StoreBenchOptions> ParseStoreBenchOptions(int argc, char** argv, bool print_help) {
  StoreBenchOptions o;
  std::string sizes, batches, ops, dram, buffer, min_time, timeout, data_path, progress;
  std::string idle_spin, master_spin, ssd_capacity, lease;
  po::options_description d(
      "store_bench (mpirun; rank 0 master, ranks 1..M stores, the rest clients)");
  d.add_options()("help,h", "this text")("stores", po::value(&o.cluster.stores)->default_value(1),
                                         "store ranks M")(
      "store-dram", po::value(&dram)->default_value("1GiB"), "DRAM segment per store rank")(
      "client-buffer", po::value(&buffer)->default_value("256MiB"),
      "registered buffer per client that puts read from and gets land in (the footprint)")(
      "sizes", po::value(&sizes)->default_value("4KiB,64KiB,1MiB,16MiB"), "object sizes")(
      "batches", po::value(&batches)->default_value("1,8,32,128"), "keys per call")(
      "ops", po::value(&ops)->default_value("put,get,exists"),
      "put,get,exists,raw,meta,ssd,ssd_local (raw: one-sided reads of the same sizes and "
      "footprint, no store; meta: PutStart + PutEnd + Get of fresh keys as three batched RPCs, "
      "no bytes moved, then the same inside the master on one thread of rank 0; ssd: gets of the "
      "case's objects once all were evicted to the SSD tier, read "
      "remotely through the store ranks' staging; ssd_local: each store rank reads the same "
      "blocks from its own tier, on --ssd-local-threads threads; both need --ssd-dir)")(
      "threads", po::value(&o.threads)->default_value(1),
      "calling threads per client (each on its own batches and part of the buffer)")(
      "copy-threads", po::value(&o.cluster.client.copy_threads)->default_value(1),
      "threads that copy and hash one call of >= 4 MiB (StoreClientConfig::copy_threads)")(
      "replicas", po::value(&o.replicas)->default_value(1), "replicas per object")(
      "max-objects", po::value(&o.max_objects)->default_value(4096),
      "objects per client and case, at most")("fill", po::value(&o.fill)->default_value(0.8),
                                              "fraction of the store a case fills")(
      "min-time", po::value(&min_time)->default_value("1s"), "timed run of get/exists/raw")(
      "verify", po::value(&o.cluster.client.verify_checksum)->default_value(true),
      "gets verify the XXH3 checksum")("tls", po::value(&o.tls_label)->default_value("auto"),
                                       "auto | shm | tcp | UCX_TLS list")(
      "data-path", po::value(&data_path)->default_value("auto"), "auto | rma | am")(
      "progress", po::value(&progress)->default_value("thread"), "busy | thread")(
      "idle-spin", po::value(&idle_spin)->default_value("200us"),
      "progress thread spins this long after its last event before sleeping")(
      "master-idle-spin", po::value(&master_spin)->default_value("2ms"),
      "the same for rank 0 (the master answers faster while clients are active)")(
      "timeout", po::value(&timeout)->default_value("30s"), "deadline of every store call")(
      "standby", po::bool_switch(&o.cluster.standby),
      "rank 1 (a store rank) also runs a standby conductor: the master journals every committed "
      "change to it and acknowledges a put-end only once it has it (docs/FAULTS.md)")(
      "lease", po::value(&lease)->default_value("10s"),
      "the master's get lease (a full store evicts only objects whose lease ended: --ops meta "
      "fills it with fresh keys)")("csv", po::value(&o.csv), "CSV output file (rank 0)")(
      "ssd-dir", po::value(&o.ssd.dir),
      "store ranks keep an HDF5 SSD tier under DIR/rank<r> (emptied at start and end)")(
      "ssd-capacity", po::value(&ssd_capacity)->default_value("16GiB"),
      "bucket files per store rank (each case spills about twice --store-dram)")(
      "ssd-readers", po::value(&o.ssd.reader_threads)->default_value(4),
      "SSD reads in flight per store rank for remote gets")(
      "ssd-local-threads", po::value(&o.ssd.local_threads)->default_value(0),
      "threads of ssd_local's read per store rank (0: as many as --ssd-readers, so both sides "
      "read with the same number of threads)")(
      "ssd-cold", po::bool_switch(&o.ssd.cold),
      "drop the tier files' page cache before each ssd / ssd_local pass, and make one pass");
  po::variables_map vm;
  MC_RETURN_IF_ERROR(cli::ParseBenchCommandLine(argc, argv, d, print_help, &vm));
  for (const auto& s : Split(sizes)) {
    auto b = ParseBytes(s);
    if (!b.ok() || *b == 0) return InvalidArgument("bad --sizes entry: " + s);
    o.sizes.push_back(*b);
  }
  for (const auto& s : Split(batches)) {
    int b = std::atoi(s.c_str());
    if (b < 1 || b > 4096) return InvalidArgument("bad --batches entry: " + s);
    o.batches.push_back(b);
  }
  o.ops = Split(ops);
  for (const auto& op : o.ops) {
    if (op != "put" && op != "get" && op != "exists" && op != "raw" && op != "meta" &&
        op != "ssd" && op != "ssd_local") {
      return InvalidArgument("bad --ops entry: " + op +
                             " (put, get, exists, raw, meta, ssd, ssd_local)");
    }
    if ((op == "ssd" || op == "ssd_local") && o.ssd.dir.empty()) {
      return InvalidArgument("--ops " + op + " needs --ssd-dir");
    }
  }
  auto sc = ParseBytes(ssd_capacity);
  if (!sc.ok() || *sc < (64ull << 20)) return InvalidArgument("bad --ssd-capacity (>= 64MiB)");
  o.ssd.capacity = *sc;
  if (o.ssd.reader_threads < 1 || o.ssd.reader_threads > 64) {
    return InvalidArgument("--ssd-readers must be 1..64");
  }
  if (o.ssd.local_threads < 0 || o.ssd.local_threads > 64) {
    return InvalidArgument("--ssd-local-threads must be 0..64");
  }
  if (o.ssd.local_threads == 0) o.ssd.local_threads = o.ssd.reader_threads;
  // SSD-only objects: the master never promotes them back into DRAM.
  if (!o.ssd.dir.empty()) o.cluster.service.master.promote_after = 0;
  auto dr = ParseBytes(dram), bu = ParseBytes(buffer);
  auto mt = ParseDuration(min_time), to = ParseDuration(timeout);
  if (!dr.ok() || !bu.ok() || !mt.ok() || !to.ok()) {
    return InvalidArgument("bad --store-dram, --client-buffer, --min-time or --timeout");
  }
  o.cluster.store_dram = *dr;
  o.cluster.client_buffer = *bu;
  o.min_time = Nanos(mt->count());
  o.cluster.client.timeout = Nanos(to->count());
  auto le = ParseDuration(lease);
  if (!le.ok() || le->count() <= 0) return InvalidArgument("bad --lease: " + lease);
  o.cluster.service.master.lease = Nanos(le->count());
  auto is = ParseDuration(idle_spin), ms = ParseDuration(master_spin);
  if (!is.ok() || !ms.ok()) return InvalidArgument("bad --idle-spin or --master-idle-spin");
  o.cluster.ucx.idle_spin = Nanos(is->count());
  o.cluster.master_idle_spin = Nanos(ms->count());
  o.cluster.ucx.tls = transport::ResolveTls(o.tls_label);
  o.cluster.ucx.busy_poll = progress == "busy";
  if (data_path == "rma") {
    o.cluster.ucx.data_path = transport::DataPath::kRma;
  } else if (data_path == "am") {
    o.cluster.ucx.data_path = transport::DataPath::kActiveMessage;
  } else if (data_path != "auto") {
    return InvalidArgument("bad --data-path: " + data_path);
  }
  if (o.replicas < 1 || static_cast<int>(o.replicas) > o.cluster.stores) {
    return InvalidArgument("--replicas must be between 1 and --stores");
  }
  if (o.threads < 1 || o.threads > 64) return InvalidArgument("--threads must be 1..64");
  if (o.cluster.client.copy_threads < 1 || o.cluster.client.copy_threads > 64)
    return InvalidArgument("--copy-threads must be 1..64");
  if (o.fill <= 0 || o.fill > 0.9) return InvalidArgument("--fill must be in (0, 0.9]");
  return o;
}

}  // namespace mooncake::bench
