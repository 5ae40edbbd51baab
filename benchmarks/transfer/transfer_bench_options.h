// Command line of transfer_bench (Boost.PO), turned into a list of cases and a UCX config.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "transfer_bench_run.h"
#include "transport/ucx/ucx_config.h"

namespace mooncake::bench {

// One KV block of a model preset: 2 x layers pieces (K and V of each layer), each
// tokens x (hidden / gqa) x bytes_per_element bytes.
struct KvShape {
  std::string model;
  int layers = 0;
  size_t piece_bytes = 0;
};
// Reads DIR/MODEL.ini (keys layers, hidden, gqa, bytes_per_element) or, when absent, a built-in
// table (llama3-70b, llama3-8b).
Result<KvShape> LoadKvShape(const std::string& model, const std::string& models_dir, int tokens);

struct BenchOptions {
  std::vector<CaseSpec> cases;
  transport::UcxConfig ucx;
  std::string tls_label;  // as given (shm, tcp, raw list) or "default"
  std::string csv;
  size_t buffer_size = 0;       // 0: each case uses one block-sized slot (like ucx_perftest)
  size_t registered_bytes = 0;  // what each rank registers: enough for every case
  Nanos timeout{0};
  bool transport_memory = true;  // Transport::AllocateMemory, else heap + RegisterMemory

  // The footprint a case cycles through: the buffer size, or the batch's own bytes when 0.
  size_t FootprintFor(const CaseSpec& spec) const;
};

// kNotFound means --help was printed; other errors are bad options.
Result<BenchOptions> ParseBenchOptions(int argc, char** argv, bool print_help);

}  // namespace mooncake::bench
