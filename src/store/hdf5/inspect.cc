#include "store/hdf5/inspect.h"

#include <fmt/format.h>

#include <vector>

#include "common/checksum.h"
#include "store/hdf5/bucket_file.h"

namespace mooncake::store::hdf5 {

int InspectFile(const std::string& path, std::ostream& out, std::ostream& err) {
  auto file = BucketFile::Open(path);
  if (!file.ok()) {
    err << "error: " << file.status().ToString() << "\n";
    return 2;
  }
  auto attrs = (*file)->ReadAttributes();
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
  out << fmt::format("{:>5}  {:>12}  {:>10}  {:>16}  {:<7}  {}\n", "slot", "offset", "length",
                     "checksum", "status", "key");
  uint64_t bad = 0;
  std::vector<std::byte> buf;
  for (const IndexEntry& e : *entries) {
    const char* status = "ok";
    if (e.offset > (*file)->data_bytes() || e.length > (*file)->data_bytes() - e.offset) {
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
    out << fmt::format("{:>5}  {:>12}  {:>10}  {:016x}  {:<7}  {}\n", e.slot, e.offset, e.length,
                       e.checksum, status, e.key);
  }
  out << fmt::format("{} blocks, {} intact, {} corrupt\n", entries->size(), entries->size() - bad,
                     bad);
  return bad == 0 ? 0 : 1;
}

}  // namespace mooncake::store::hdf5
