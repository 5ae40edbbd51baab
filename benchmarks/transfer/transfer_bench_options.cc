#include "transfer_bench_options.h"

#include <boost/program_options.hpp>
#include <fstream>
#include <map>

#include "common/cli/command_line.h"
#include "common/units.h"

namespace po = boost::program_options;

namespace mooncake::bench {
namespace {

struct Preset {
  int layers, hidden, gqa, bytes;
};
const std::map<std::string, Preset> kBuiltIn = {{"llama3-70b", {80, 8192, 8, 2}},
                                                {"llama3-8b", {32, 4096, 4, 2}}};

std::string Trim(std::string s) {
  size_t hash = s.find('#');
  if (hash != std::string::npos) s.resize(hash);
  size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

const char* kSweep[] = {"4KiB", "16KiB", "64KiB", "256KiB", "1MiB", "4MiB", "16MiB", "64MiB"};

}  // namespace

Result<KvShape> LoadKvShape(const std::string& model, const std::string& dir, int tokens) {
  Preset p{0, 0, 0, 0};
  std::ifstream in(dir + "/" + model + ".ini");
  if (in) {
    std::map<std::string, std::string> kv;
    for (std::string line; std::getline(in, line);) {
      line = Trim(line);
      size_t eq = line.find('=');
      if (eq != std::string::npos) kv[Trim(line.substr(0, eq))] = Trim(line.substr(eq + 1));
    }
    try {
      p = Preset{std::stoi(kv.at("layers")), std::stoi(kv.at("hidden")), std::stoi(kv.at("gqa")),
                 std::stoi(kv.at("bytes_per_element"))};
    } catch (const std::exception&) {
      return InvalidArgument(dir + "/" + model + ".ini lacks layers/hidden/gqa/bytes_per_element");
    }
  } else if (auto it = kBuiltIn.find(model); it != kBuiltIn.end()) {
    p = it->second;
  } else {
    // Not NotFound: that code means "help was printed" to the caller (exit 0).
    return InvalidArgument("--kv-block: unknown model '" + model + "' (no " + dir + "/" + model +
                           ".ini)");
  }
  if (p.layers <= 0 || p.hidden <= 0 || p.gqa <= 0 || p.bytes <= 0 || tokens <= 0) {
    return InvalidArgument("model '" + model + "' has a non-positive shape");
  }
  return KvShape{model, p.layers, static_cast<size_t>(tokens) * (p.hidden / p.gqa) * p.bytes};
}

size_t BenchOptions::FootprintFor(const CaseSpec& spec) const {
  return buffer_size != 0 ? buffer_size
                          : spec.block_size * (spec.label.find("kv") == 0 ? spec.batch_size : 1);
}

Result<BenchOptions> ParseBenchOptions(int argc, char** argv, bool print_help) {
  std::string operation, block, duration, warmup, buffer, data_path, slice, am_slice, timeout,
      kv_model, models_dir, progress, memory, tcp_error_mode;
  int batch = 0, threads = 0, depth = 0, tokens = 0;
  bool sweep = false;
  BenchOptions o;
  po::options_description d("transfer_bench (run under mpirun with an even number of ranks)");
  d.add_options()("help,h", "print this help")(
      "operation", po::value(&operation)->default_value("read"), "read | write | both")(
      "block-size", po::value(&block)->default_value("64KiB"),
      "bytes per request; a comma list runs each")(
      "batch-size", po::value(&batch)->default_value(128), "requests per batch")(
      "depth", po::value(&depth)->default_value(1), "batches in flight per thread")(
      "threads", po::value(&threads)->default_value(1), "submitting threads per initiator")(
      "duration", po::value(&duration)->default_value("2s"), "timed run per case")(
      "warmup", po::value(&warmup)->default_value("200ms"), "untimed run before each case")(
      "buffer-size", po::value(&buffer)->default_value("block"),
      "registered footprint requests cycle through: 'block' (one block, as ucx_perftest) or "
      "bytes, e.g. 1GiB (as Mooncake's bench)")("sweep", po::bool_switch(&sweep),
                                                "block sizes 4KiB..64MiB (x4 steps)")(
      "kv-block", po::value(&kv_model), "move one KV block of MODEL as its per-layer K/V pieces")(
      "kv-tokens", po::value(&tokens)->default_value(512), "tokens per KV block")(
      "models-dir", po::value(&models_dir)->default_value("configs/models"), "model presets")(
      "tls", po::value(&o.tls_label)->default_value("auto"),
      "auto | shm | tcp | rdma | UCX_TLS list")(
      "data-path", po::value(&data_path)->default_value("auto"), "auto | rma | am")(
      "slice", po::value(&slice)->default_value("1MiB"), "RMA slice size")(
      "am-slice", po::value(&am_slice)->default_value("4MiB"), "active-message slice size")(
      "tcp-error-mode", po::value(&tcp_error_mode)->default_value("default"),
      "tcp-only jobs: default (UCX's, zero-copy rendezvous) | peer (UCX's peer mode; the "
      "rendezvous is copied out of the receive segment)")(
      "tcp-rndv-thresh", po::value(&o.ucx.tcp_rndv_thresh)->default_value("256K"),
      "tcp-only jobs: UCX_RNDV_THRESH (auto: UCX's own choice)")(
      "progress", po::value(&progress)->default_value("thread"),
      "busy (progress thread never sleeps) | thread (sleeps with back-off when idle)")(
      "timeout", po::value(&timeout)->default_value("30s"), "deadline of every batch")(
      "memory", po::value(&memory)->default_value("transport"),
      "transport (Transport::AllocateMemory: shared memory a local peer maps) | heap "
      "(aligned_alloc + RegisterMemory)")("csv", po::value(&o.csv), "CSV output file (rank 0)");
  po::variables_map vm;
  MC_RETURN_IF_ERROR(cli::ParseBenchCommandLine(argc, argv, d, print_help, &vm));
  auto bytes = [](const std::string& s, const char* what) -> Result<size_t> {
    auto b = ParseBytes(s);
    if (!b.ok() || *b == 0) return InvalidArgument(std::string("bad --") + what + ": " + s);
    return static_cast<size_t>(*b);
  };
  auto dur = [](const std::string& s, const char* what) -> Result<Nanos> {
    auto v = ParseDuration(s);
    if (!v.ok()) return InvalidArgument(std::string("bad --") + what + ": " + s);
    return Nanos(v->count());
  };
  if (batch < 1 || threads < 1 || depth < 1) return InvalidArgument("batch, threads, depth >= 1");
  CaseSpec base;
  base.batch_size = batch;
  base.threads = threads;
  base.depth = depth;
  auto du = dur(duration, "duration"), wu = dur(warmup, "warmup"), to = dur(timeout, "timeout");
  if (!du.ok()) return du.status();
  if (!wu.ok()) return wu.status();
  if (!to.ok()) return to.status();
  base.duration = *du;
  base.warmup = *wu;
  base.timeout = o.timeout = *to;
  auto sl = bytes(slice, "slice"), asl = bytes(am_slice, "am-slice");
  if (!sl.ok()) return sl.status();
  if (!asl.ok()) return asl.status();
  o.ucx.rma_slice = *sl;
  o.ucx.am_slice = *asl;
  o.ucx.tls = o.tls_label == "auto" ? "" : o.tls_label;
  o.ucx.busy_poll = progress == "busy";
  if (progress != "busy" && progress != "thread") return InvalidArgument("bad --progress");
  if (tcp_error_mode != "default" && tcp_error_mode != "peer") {
    return InvalidArgument("bad --tcp-error-mode: " + tcp_error_mode + " (default | peer)");
  }
  o.ucx.tcp_peer_error_mode = tcp_error_mode == "peer";
  if (data_path == "auto")
    o.ucx.data_path = transport::DataPath::kAuto;
  else if (data_path == "rma")
    o.ucx.data_path = transport::DataPath::kRma;
  else if (data_path == "am")
    o.ucx.data_path = transport::DataPath::kActiveMessage;
  else
    return InvalidArgument("bad --data-path: " + data_path);
  if (memory != "transport" && memory != "heap") return InvalidArgument("bad --memory");
  o.transport_memory = memory == "transport";
  if (buffer != "block") {
    auto b = bytes(buffer, "buffer-size");
    if (!b.ok()) return b.status();
    o.buffer_size = *b;
  }
  std::vector<transport::OpKind> ops;
  if (operation == "read" || operation == "both") ops.push_back(transport::OpKind::kRead);
  if (operation == "write" || operation == "both") ops.push_back(transport::OpKind::kWrite);
  if (ops.empty()) return InvalidArgument("bad --operation: " + operation);

  std::vector<CaseSpec> sizes;
  if (!kv_model.empty()) {
    auto kv = LoadKvShape(kv_model, models_dir, tokens);
    if (!kv.ok()) return kv.status();
    CaseSpec c = base;
    c.block_size = kv->piece_bytes;
    c.batch_size = 2 * kv->layers;
    c.label =
        "kv " + kv->model + " " + std::to_string(c.batch_size) + "x" + FormatBytes(kv->piece_bytes);
    sizes.push_back(c);
  } else if (sweep) {
    for (const char* s : kSweep) {
      CaseSpec c = base;
      c.block_size = *ParseBytes(s);
      // Keep one batch at most 256 MiB so that a sweep finishes in reasonable time.
      c.batch_size = std::min<size_t>(batch, std::max<size_t>(1, (256 * kMiB) / c.block_size));
      c.label = s;
      sizes.push_back(c);
    }
  } else {
    for (size_t start = 0; start <= block.size();) {  // "64KiB,1MiB,16MiB"
      size_t comma = std::min(block.find(',', start), block.size());
      std::string one = block.substr(start, comma - start);
      start = comma + 1;
      auto b = bytes(one, "block-size");
      if (!b.ok()) return b.status();
      CaseSpec c = base;
      c.block_size = *b;
      c.label = one;
      sizes.push_back(c);
    }
  }
  for (const CaseSpec& c : sizes) {
    for (auto op : ops) {
      CaseSpec x = c;
      x.op = op;
      if (o.FootprintFor(x) < x.block_size)
        return InvalidArgument("--buffer-size below the block size");
      o.registered_bytes = std::max(o.registered_bytes, o.FootprintFor(x));
      o.cases.push_back(x);
    }
  }
  return o;
}

}  // namespace mooncake::bench
