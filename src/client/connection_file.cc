#include "client/connection_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace mooncake::client {
namespace {

using nlohmann::json;

constexpr const char* kFormat = "mooncake-connect";

Status Bad(const std::string& path, const std::string& what) {
  return InvalidArgument("connection file " + path + ": " + what);
}

json ToJson(const ConnectionInfo& info) {
  return json{{"format", kFormat},
              {"version", kConnectionFileVersion},
              {"mooncake_version", info.mooncake_version},
              {"cluster_id", info.cluster_id},
              {"token", info.token.Hex()},
              {"world_size", info.world_size},
              {"master", {{"rank", info.master_rank}, {"addresses", info.master_addresses}}},
              {"store",
               {{"ranks", info.store_ranks},
                {"dram_per_rank", info.dram_per_rank},
                {"ssd", info.ssd},
                {"replicas", info.replicas}}},
              {"run_dir", info.run_dir},
              {"host", info.host},
              {"pid", info.pid},
              {"created", info.created}};
}

// The fields a client needs, each checked; the descriptive ones are optional.
Status FromJson(const json& j, const std::string& path, ConnectionInfo* info) {
  if (!j.is_object() || j.value("format", "") != kFormat) {
    return Bad(path, "not a mooncake connection file (no \"format\": \"mooncake-connect\")");
  }
  if (j.value("version", 0) != kConnectionFileVersion) {
    return Bad(path, "version " + j.value("version", json()).dump() + " (this client reads " +
                         std::to_string(kConnectionFileVersion) + ")");
  }
  auto token = ParseToken(j.value("token", ""));
  if (!token.ok()) return Bad(path, "token: " + token.status().message());
  info->token = *token;
  info->world_size = j.value("world_size", 0);
  if (info->world_size < 2) return Bad(path, "world_size must be at least 2");
  const json& master = j.value("master", json::object());
  info->master_rank = master.value("rank", -1);
  if (info->master_rank < 0 || info->master_rank >= info->world_size) {
    return Bad(path, "master.rank is not a rank of the job");
  }
  info->master_addresses = master.value("addresses", std::vector<std::string>{});
  if (info->master_addresses.empty()) return Bad(path, "master.addresses is empty");
  for (const auto& a : info->master_addresses) {
    std::string host;
    uint16_t port = 0;
    MC_RETURN_IF_ERROR(
        SplitHostPort(a, "connection file " + path + ": master.addresses", &host, &port));
  }
  const json& store = j.value("store", json::object());
  info->store_ranks = store.value("ranks", std::vector<int>{});
  info->dram_per_rank = store.value("dram_per_rank", uint64_t{0});
  info->ssd = store.value("ssd", false);
  info->replicas = store.value("replicas", 1u);
  info->mooncake_version = j.value("mooncake_version", "");
  info->cluster_id = j.value("cluster_id", "");
  info->run_dir = j.value("run_dir", "");
  info->host = j.value("host", "");
  info->pid = j.value("pid", int64_t{0});
  info->created = j.value("created", "");
  return Status::Ok();
}

}  // namespace

Status SplitHostPort(const std::string& address, const std::string& what, std::string* host,
                     uint16_t* port) {
  const size_t colon = address.rfind(':');
  char* end = nullptr;
  const long p =
      colon == std::string::npos ? 0 : std::strtol(address.c_str() + colon + 1, &end, 10);
  if (colon == std::string::npos || colon == 0 || end == address.c_str() + colon + 1 ||
      *end != '\0' || p < 1 || p > 65535) {
    return InvalidArgument(what + ": '" + address + "' is not HOST:PORT");
  }
  *host = address.substr(0, colon);
  *port = static_cast<uint16_t>(p);
  return Status::Ok();
}

Result<transport::JobToken> ParseToken(const std::string& hex) {
  if (hex.size() != 32 || hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
    return InvalidArgument("a job token is 32 hex digits");
  }
  transport::JobToken t;
  t.hi = std::stoull(hex.substr(0, 16), nullptr, 16);
  t.lo = std::stoull(hex.substr(16), nullptr, 16);
  return t;
}

std::vector<std::byte> TokenBytes(const transport::JobToken& token) {
  std::vector<std::byte> out(16);
  std::memcpy(out.data(), &token.hi, 8);
  std::memcpy(out.data() + 8, &token.lo, 8);
  return out;
}

Status WriteConnectionFile(const std::string& path, const ConnectionInfo& info) {
  const std::string partial = path + ".partial";
  const std::string text = ToJson(info).dump(2) + "\n";
  // Created 0600 (O_EXCL after removing a stale one): the token is never readable by others.
  (void)unlink(partial.c_str());
  const int fd = open(partial.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return IoError("cannot create " + partial + ": " + std::strerror(errno));
  const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const bool closed = close(fd) == 0;
  if (!written || !closed || std::rename(partial.c_str(), path.c_str()) != 0) {
    (void)unlink(partial.c_str());
    return IoError("cannot write the connection file " + path + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

Result<ConnectionInfo> ReadConnectionFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return InvalidArgument("connection file " + path + ": cannot open it (" + std::strerror(errno) +
                           ")");
  }
  std::stringstream text;
  text << in.rdbuf();
  json j = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Bad(path, "not valid JSON");
  ConnectionInfo info;
  try {
    MC_RETURN_IF_ERROR(FromJson(j, path, &info));
  } catch (const nlohmann::json::exception& e) {
    return Bad(path, std::string("a field has the wrong type (") + e.what() + ")");
  }
  return info;
}

}  // namespace mooncake::client
