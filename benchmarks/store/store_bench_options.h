// Command line of store_bench (Boost.PO).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/status.h"
#include "store_bench_setup.h"
#include "store_bench_ssd.h"

namespace mooncake::bench {

struct StoreBenchOptions {
  StoreClusterOptions cluster;
  std::vector<size_t> sizes;
  std::vector<int> batches;
  std::vector<std::string> ops;  // put, get, exists, raw, meta, ssd, ssd_local (run order)
  uint32_t replicas = 1;
  int threads = 1;            // calling threads per client
  size_t max_objects = 4096;  // per client and case
  double fill = 0.8;          // fraction of the store the objects of a case occupy at most
  Nanos min_time = std::chrono::seconds(1);
  std::string csv;
  std::string tls_label;
  SsdBenchOptions ssd;  // --ssd-dir etc.; needed by the ssd and ssd_local ops
};

// kNotFound means --help was printed; other errors are bad options.
Result<StoreBenchOptions> ParseStoreBenchOptions(int argc, char** argv, bool print_help);

}  // namespace mooncake::bench
