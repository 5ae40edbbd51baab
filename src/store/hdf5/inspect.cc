#include "store/hdf5/inspect.h"

#include <fmt/format.h>

#include <vector>

#include "common/checksum.h"
#include "store/hdf5/bucket_file.h"

namespace mooncake::store::hdf5 {

namespace {
// Keys are byte strings: bytes outside printable ASCII (and the backslash) are shown as \xNN.
std::string Printable(const std::string& key) {
  std::string out;
  for (unsigned char c : key) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  return out;
}
}  // namespace

int InspectFile(const std::string& path, std::ostream& out, std::ostream& err) {
  auto file = BucketFile::Open(path);
  if (!file.ok()) {
    err << "error: " << file.status().ToString() << "\n";
    return 2;
  }
  auto attrs = (*file)->ReadAttributes();
  if (attrs.ok() && attrs->format_version != kFormatVersion) {
    err << "error: " << path << " has on-disk format version " << attrs->format_version
        << "; this build reads version " << kFormatVersion << "\n";
    return 2;
  }
  auto entries = (*file)->ReadIndex();
  if (!attrs.ok() || !entries.ok()) {
    err << "error: " << (attrs.ok() ? entries.status() : attrs.status()).ToString() << "\n";
    return 2;
  }
  out << fmt::format(
      "file {}\nformat_version {}  cluster_id '{}'  model_preset '{}'  kv_layout '{}'  "
      "block_tokens {}  store_rank {}  blocks_capacity {} B\n",
      path, attrs->format_version, attrs->cluster_id, attrs->model_preset, attrs->kv_layout,
      attrs->block_tokens, attrs->store_rank, (*file)->data_bytes());
  out << fmt::format("{:>5}  {:<9}  {:>20}  {:>12}  {:>10}  {:>16}  {:<7}  {}\n", "slot", "kind",
                     "version", "offset", "length", "checksum", "status", "key");
  uint64_t bad = 0;
  std::vector<std::byte> buf;
  for (const IndexEntry& e : *entries) {
    const char* status = "ok";
    const bool tombstone = e.kind == SlotKind::kTombstone;
    if (!e.key_intact) {
      status = "TORNKEY";
    } else if (tombstone) {
      status = "ok";
    } else if (e.offset > (*file)->data_bytes() || e.length > (*file)->data_bytes() - e.offset) {
      status = "RANGE";
    } else {
      buf.resize(e.length);
      if (!(*file)->ReadData(e.offset, buf).ok()) {
        status = "IOERR";
      } else if (Checksum64(buf.data(), buf.size()) != e.checksum) {
        status = "CORRUPT";
      }
    }
    if (std::string_view(status) != "ok") ++bad;
    out << fmt::format("{:>5}  {:<9}  {:>20}  {:>12}  {:>10}  {:016x}  {:<7}  {}\n", e.slot,
                       tombstone ? "tombstone" : "block", e.version, e.offset, e.length, e.checksum,
                       status, Printable(e.key));
  }
  out << fmt::format("{} blocks, {} intact, {} corrupt\n", entries->size(), entries->size() - bad,
                     bad);
  return bad == 0 ? 0 : 1;
}

}  // namespace mooncake::store::hdf5
