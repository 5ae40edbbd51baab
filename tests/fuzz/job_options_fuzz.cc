// Fuzzes the option layer of the `mooncake` job (app/options.h ParseJobOptions) through its INI
// config file: the input is written to a temp file given as --config. Options that parse must lie
// in the ranges the option table documents; options that do not must yield exit status 2.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>

#include "app/options.h"
#include "fuzz_check.h"

using namespace mooncake;

namespace {

std::string* config_path = nullptr;

void RemoveConfig() {
  if (config_path != nullptr) std::remove(config_path->c_str());
}

// One file per process under $TMPDIR (run_fuzz.sh points it at the run's own folder).
const std::string& ConfigPath() {
  if (config_path == nullptr) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr ? tmp : "/tmp") + "/fuzz-options-XXXXXX";
    int fd = mkstemp(pattern.data());
    if (fd < 0) std::abort();
    close(fd);
    config_path = new std::string(pattern);
    std::atexit(RemoveConfig);
  }
  return *config_path;
}

void CheckRanges(const app::JobOptions& o) {
  MC_FUZZ_CHECK(o.store.dram >= (1ull << 20) && o.store.dram <= (1ull << 40), "store.dram");
  MC_FUZZ_CHECK(o.block_size >= 1 && o.block_size <= o.store.dram, "job.block_size");
  MC_FUZZ_CHECK(o.rpc_timeout >= Nanos(1'000'000), "job.rpc_timeout");
  MC_FUZZ_CHECK(o.serve.job_deadline >= Nanos(1'000'000'000) &&
                    o.serve.job_deadline <= Nanos(604'800'000'000'000),
                "job.deadline");
  MC_FUZZ_CHECK(o.serve.progress_interval >= Nanos(100'000'000) &&
                    o.serve.progress_interval <= Nanos(3'600'000'000'000),
                "job.progress_interval");
  MC_FUZZ_CHECK(o.cluster.heartbeat_interval > Nanos(0) && o.cluster.failure_timeout > Nanos(0),
                "cluster intervals");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::ostringstream sink;  // the usage errors are expected: keep the fuzzer's log short
  std::cerr.rdbuf(sink.rdbuf());
  sink.str("");
  const std::string& path = ConfigPath();
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  std::string arg0 = "mooncake", arg1 = "--config", arg2 = path;
  char* argv[] = {arg0.data(), arg1.data(), arg2.data(), nullptr};
  app::ParseOutcome outcome = app::ParseJobOptions(3, argv);
  if (outcome.options) {
    CheckRanges(*outcome.options);
  } else {
    MC_FUZZ_CHECK(outcome.exit_code == 2, "a bad config must exit 2");
  }
  return 0;
}
