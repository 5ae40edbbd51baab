// Fuzzes the connection file's parser (client/connection_file.h), which reads a file a user
// points the client at. A file it accepts must hold only bounded fields and must read back the
// same from the text the writer makes of it.
#include <string>
#include <string_view>

#include "client/connection_file.h"
#include "fuzz_check.h"

using namespace mooncake;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto info = client::ParseConnectionFile(text, "fuzz.json");
  if (!info.ok()) return 0;
  MC_FUZZ_CHECK(info->world_size >= 2 && info->world_size <= client::kMaxJobRanks, "world_size");
  MC_FUZZ_CHECK(info->master_rank >= 0 && info->master_rank < info->world_size, "master.rank");
  MC_FUZZ_CHECK(!info->master_addresses.empty() &&
                    info->master_addresses.size() <= client::kMaxMasterAddresses,
                "master.addresses");
  MC_FUZZ_CHECK(info->store_ranks.size() <= static_cast<size_t>(info->world_size), "store.ranks");
  auto again = client::ParseConnectionFile(client::ConnectionFileText(*info), "again.json");
  MC_FUZZ_CHECK(again.ok(), "the written text parses back");
  MC_FUZZ_CHECK(again->token == info->token && again->world_size == info->world_size &&
                    again->master_addresses == info->master_addresses &&
                    again->store_ranks == info->store_ranks && again->replicas == info->replicas &&
                    again->run_dir == info->run_dir && again->pid == info->pid,
                "round trip");
  return 0;
}
