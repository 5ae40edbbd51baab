// client_bench: the store client of a process outside the job (libmooncake_client), timed the
// way benchmarks/client_bench.py times the Python module: per value size, batches of `batch`
// keys put from one registered buffer (BatchPut, new keys every batch) and read back into
// another (BatchGetInto), each for at least --min-time. Prints a line per size and, with --csv,
// writes op,size,batch,gb_per_s,keys_per_s,errors. benchmarks/client_vs_baselines.sh runs it.
//   client_bench CONNECT_FILE [--sizes 4KiB,64KiB,1MiB,16MiB] [--batch 32] [--min-time 1s]
#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "client/client.h"
#include "common/cli/command_line.h"
#include "common/units.h"

namespace po = boost::program_options;
using mooncake::client::Client;

namespace {

struct Measure {
  double seconds = 0;
  uint64_t bytes = 0, keys = 0, errors = 0;
};

// One size: put batches until min_time passed, then read the keys just put, batch by batch.
std::pair<Measure, Measure> RunSize(Client& c, size_t size, size_t batch, double min_time,
                                    const std::string& tag) {
  std::vector<std::byte> src(size * batch), dst(size * batch);
  std::mt19937_64 rng(size);
  for (auto& b : src) b = std::byte(rng());
  (void)c.RegisterBuffer(src.data(), src.size());
  (void)c.RegisterBuffer(dst.data(), dst.size());
  std::vector<std::span<const std::byte>> values;
  std::vector<std::span<std::byte>> outs;
  for (size_t i = 0; i < batch; ++i) {
    values.emplace_back(src.data() + i * size, size);
    outs.emplace_back(dst.data() + i * size, size);
  }
  using Clock = std::chrono::steady_clock;
  Measure put, get;
  std::vector<std::vector<std::string>> rounds;
  const auto start = Clock::now();
  while (std::chrono::duration<double>(Clock::now() - start).count() < min_time) {
    std::vector<std::string> keys;
    for (size_t i = 0; i < batch; ++i) {
      keys.push_back(tag + "/" + std::to_string(size) + "/" + std::to_string(rounds.size()) + "/" +
                     std::to_string(i));
    }
    const auto t0 = Clock::now();
    auto r = c.BatchPut(keys, values);
    put.seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    for (const auto& s : r) put.errors += !s.ok();
    put.bytes += size * batch;
    put.keys += batch;
    rounds.push_back(std::move(keys));
  }
  // Gets read the last rounds' keys, at most 256 MiB of them: those are still in DRAM (older
  // ones may have been evicted by the puts).
  const size_t keep = std::clamp<size_t>((256u << 20) / (size * batch), 1, 8);
  const size_t first = rounds.size() > keep ? rounds.size() - keep : 0;
  const auto gstart = Clock::now();
  for (size_t r = first; std::chrono::duration<double>(Clock::now() - gstart).count() < min_time;
       r = r + 1 < rounds.size() ? r + 1 : first) {
    const auto t0 = Clock::now();
    auto n = c.BatchGetInto(rounds[r], outs);
    get.seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    for (const auto& x : n) get.errors += !x.ok() || *x != size;
    get.bytes += size * batch;
    get.keys += batch;
  }
  (void)c.UnregisterBuffer(src.data());
  (void)c.UnregisterBuffer(dst.data());
  return {put, get};
}

}  // namespace

int main(int argc, char** argv) {
  std::string file, sizes_text, min_time_text, csv, tag;
  size_t batch = 32;
  po::options_description d(
      "client_bench CONNECT_FILE [options]: the store client (libmooncake_client) against a store "
      "job\nOptions");
  d.add_options()("help,h", "this help")("connect", po::value(&file), "the job's connect.json")(
      "sizes", po::value(&sizes_text)->default_value("4KiB,64KiB,1MiB,16MiB"), "value sizes")(
      "batch", po::value(&batch)->default_value(32), "keys per call")(
      "min-time", po::value(&min_time_text)->default_value("1s"), "timed run per op and size")(
      "csv", po::value(&csv), "write the results here")("tag", po::value(&tag)->default_value("cb"),
                                                        "key prefix (distinct per run)");
  po::positional_options_description pos;
  pos.add("connect", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv)
                  .options(d)
                  .positional(pos)
                  .style(mooncake::cli::kCommandLineStyle)
                  .run(),
              vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "client_bench: " << e.what() << "\n";
    return 2;
  }
  if (vm.count("help") || file.empty()) {
    std::cout << d;
    return vm.count("help") ? 0 : 2;
  }
  auto min_time = mooncake::ParseDuration(min_time_text);
  std::vector<size_t> sizes;
  std::stringstream in(sizes_text);
  for (std::string s; std::getline(in, s, ',');) {
    auto b = mooncake::ParseBytes(s);
    if (!b.ok() || *b == 0) {
      std::cerr << "client_bench: --sizes: '" << s << "' is not a size\n";
      return 2;
    }
    sizes.push_back(*b);
  }
  if (!min_time.ok() || batch == 0) {
    std::cerr << "client_bench: bad --min-time or --batch\n";
    return 2;
  }
  auto client = Client::Connect(file);
  if (!client.ok()) {
    std::cerr << "client_bench: " << client.status().ToString() << "\n";
    return 1;
  }
  std::ofstream out;
  if (!csv.empty()) {
    out.open(csv);
    out << "op,size,batch,gb_per_s,keys_per_s,errors\n";
  }
  uint64_t errors = 0;
  for (size_t size : sizes) {
    auto [put, get] = RunSize(**client, size, batch, min_time->count() / 1e9, tag);
    for (const auto& [op, m] : {std::pair{"put", put}, std::pair{"get", get}}) {
      const double gbps = m.bytes / m.seconds / 1e9, kps = m.keys / m.seconds;
      std::printf("%-4s %10s x%zu: %8.3f GB/s %12.0f keys/s  errors %llu\n", op,
                  mooncake::FormatBytes(size).c_str(), batch, gbps, kps,
                  static_cast<unsigned long long>(m.errors));
      if (out.is_open()) {
        out << op << "," << size << "," << batch << "," << gbps << "," << kps << "," << m.errors
            << "\n";
      }
      errors += m.errors;
    }
  }
  return errors == 0 ? 0 : 1;
}
