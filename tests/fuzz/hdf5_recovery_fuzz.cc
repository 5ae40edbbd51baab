// Fuzzes the SSD tier's crash recovery (store/hdf5 Hdf5Tier::Open, recovery.cc): the input is
// the bytes of one bucket file found after a crash, written to a fresh temp folder. Recovery must
// not crash, and every block it recovers must read back with its recorded size and checksum.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "common/checksum.h"
#include "fuzz_check.h"
#include "store/hdf5/tier.h"

using namespace mooncake;
namespace fs = std::filesystem;

namespace {

std::string* folder = nullptr;

void RemoveFolder() {
  std::error_code ec;
  if (folder != nullptr) fs::remove_all(*folder, ec);
}

// One folder per process under $TMPDIR (run_fuzz.sh points it at the run's own folder).
const std::string& Folder() {
  if (folder == nullptr) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr ? tmp : "/tmp") + "/fuzz-hdf5-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) std::abort();
    folder = new std::string(pattern);
    std::atexit(RemoveFolder);
  }
  return *folder;
}

void CheckRecovered(store::hdf5::Hdf5Tier& tier, const store::RecoveryReport& report) {
  MC_FUZZ_CHECK(report.files == 1, "one bucket file was there");
  MC_FUZZ_CHECK(report.recovered == report.blocks.size(), "recovered count");
  std::vector<std::byte> buf;
  for (const store::SsdBlock& b : report.blocks) {
    auto found = tier.Lookup(b.key);
    MC_FUZZ_CHECK(found.ok() && found->size == b.size && found->checksum == b.checksum,
                  "recovered block not indexed as reported");
    buf.resize(b.size);
    auto read = tier.Read(b.key, buf);
    MC_FUZZ_CHECK(read.ok() && *read == b.size, "recovered block does not read back");
    MC_FUZZ_CHECK(Checksum64(buf.data(), buf.size()) == b.checksum, "recovered block checksum");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& dir = Folder();
  const std::string path = dir + "/bucket-00000000.h5";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  {
    store::hdf5::Hdf5TierOptions opts;
    opts.dir = dir;
    opts.capacity = 1ull << 20;
    opts.bucket_bytes = 64ull << 10;
    opts.bucket_entries = 16;
    opts.queue_bytes = 1ull << 20;
    store::RecoveryReport report;
    auto tier = store::hdf5::Hdf5Tier::Open(opts, &report);
    if (tier.ok()) CheckRecovered(**tier, report);
  }
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) fs::remove_all(entry.path(), ec);
  return 0;
}
