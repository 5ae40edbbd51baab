// Fuzzes the SSD tier's crash recovery (store/hdf5 Hdf5Tier::Open, recovery.cc) on a bucket file
// found after a crash: the input replaces the raw /index and /blocks bytes of a real bucket file
// (hdf5_template.h), which is written to a fresh temp folder and recovered. Recovery must not
// crash, and every block it recovers must read back with its recorded size and checksum.
// (Mutating HDF5's own metadata fuzzes libhdf5, not our code: see README.md.)
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "common/checksum.h"
#include "fuzz_check.h"
#include "hdf5_template.h"
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
    auto found = tier.Lookup(b.key, b.version);
    MC_FUZZ_CHECK(found.ok() && found->size == b.size && found->checksum == b.checksum,
                  "recovered block not indexed as reported");
    buf.resize(b.size);
    auto read = tier.Read(b.key, b.version, buf);
    MC_FUZZ_CHECK(read.ok() && *read == b.size, "recovered block does not read back");
    MC_FUZZ_CHECK(Checksum64(buf.data(), buf.size()) == b.checksum, "recovered block checksum");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& dir = Folder();
  static const fuzz::BucketTemplate* tmpl = [&dir] {
    auto t = fuzz::MakeBucketTemplate(dir);
    if (!t.ok()) {
      std::fprintf(stderr, "cannot write the template bucket: %s\n", t.status().ToString().c_str());
      std::abort();
    }
    return new fuzz::BucketTemplate(std::move(t).value());
  }();
  std::vector<std::byte> file = tmpl->file;
  const size_t index_part = std::min<size_t>(size, tmpl->index_bytes);
  std::memcpy(file.data() + tmpl->index_at, data, index_part);
  const size_t blocks_part = std::min<size_t>(size - index_part, tmpl->blocks_bytes);
  std::memcpy(file.data() + tmpl->blocks_at, data + index_part, blocks_part);
  const std::string path = dir + "/" + fuzz::kTemplateName;
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (std::fwrite(file.data(), 1, file.size(), f) != file.size()) std::abort();
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
