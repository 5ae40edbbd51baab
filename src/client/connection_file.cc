#include "client/connection_file.h"

#include <sys/stat.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/log.h"
#include "common/replace_file.h"

namespace mooncake::client {
namespace {

using nlohmann::json;

constexpr const char* kFormat = "mooncake-connect";

Status Bad(const std::string& path, const std::string& what) {
  return InvalidArgument("connection file " + path + ": " + what);
}

// The conductors a file lists: those given, or the master alone for a job with one.
std::vector<ConductorAddress> ConductorsOf(const ConnectionInfo& info) {
  if (!info.conductors.empty()) return info.conductors;
  return {ConductorAddress{info.master_rank, info.master_addresses, true}};
}

json ToJson(const ConnectionInfo& info) {
  json conductors = json::array();
  for (const ConductorAddress& c : ConductorsOf(info)) {
    conductors.push_back({{"rank", c.rank}, {"addresses", c.addresses}, {"active", c.active}});
  }
  return json{{"format", kFormat},
              {"version", kConnectionFileVersion},
              {"mooncake_version", info.mooncake_version},
              {"cluster_id", info.cluster_id},
              {"token", info.token.Hex()},
              {"world_size", info.world_size},
              {"master", {{"rank", info.master_rank}, {"addresses", info.master_addresses}}},
              {"conductors", conductors},
              {"epoch", info.epoch},
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

// An integer field of `parent` within [lo, hi], or `fallback` when absent (no fallback:
// required). `what` is its dotted name in errors.
Result<int64_t> IntField(const json& parent, const char* key, const std::string& what, int64_t lo,
                         int64_t hi, std::optional<int64_t> fallback, const std::string& path) {
  auto it = parent.find(key);
  if (it == parent.end()) {
    if (fallback) return *fallback;
    return Bad(path, what + " is missing");
  }
  // nlohmann keeps a non-negative integer as unsigned: read each kind as itself (lo, hi >= 0).
  const bool in_range =
      it->is_number_unsigned()
          ? it->get<uint64_t>() >= static_cast<uint64_t>(lo) &&
                it->get<uint64_t>() <= static_cast<uint64_t>(hi)
          : it->is_number_integer() && it->get<int64_t>() >= lo && it->get<int64_t>() <= hi;
  if (!in_range) {
    return Bad(path, what + " is " + it->dump().substr(0, 64) + ", not an integer in [" +
                         std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return it->get<int64_t>();
}

// A text field of at most kMaxTextFieldLength bytes ("" when absent).
Result<std::string> TextField(const json& parent, const char* key, const std::string& what,
                              const std::string& path) {
  auto it = parent.find(key);
  if (it == parent.end()) return std::string();
  if (!it->is_string()) return Bad(path, what + " is not a string");
  const auto& text = it->get_ref<const std::string&>();
  if (text.size() > kMaxTextFieldLength) {
    return Bad(path, what + " has " + std::to_string(text.size()) + " bytes, more than " +
                         std::to_string(kMaxTextFieldLength));
  }
  return text;
}

// An array field of at most `max` entries (empty when absent).
Result<const json*> ArrayField(const json& parent, const char* key, const std::string& what,
                               size_t max, const std::string& path) {
  static const json kEmpty = json::array();
  auto it = parent.find(key);
  if (it == parent.end()) return &kEmpty;
  if (!it->is_array()) return Bad(path, what + " is not an array");
  if (it->size() > max) {
    return Bad(path, what + " has " + std::to_string(it->size()) + " entries, more than " +
                         std::to_string(max));
  }
  return &*it;
}

const json& ObjectField(const json& parent, const char* key) {
  static const json kEmpty = json::object();
  auto it = parent.find(key);
  return it != parent.end() && it->is_object() ? *it : kEmpty;
}

// A non-empty array of "host:port" strings, each bounded (`what` names it in errors).
Status AddressesField(const json& parent, const std::string& what, const std::string& path,
                      std::vector<std::string>* out) {
  auto addresses = ArrayField(parent, "addresses", what, kMaxMasterAddresses, path);
  if (!addresses.ok()) return addresses.status();
  if ((*addresses)->empty()) return Bad(path, what + " is empty");
  for (const json& a : **addresses) {
    if (!a.is_string() || a.get_ref<const std::string&>().size() > kMaxAddressLength) {
      return Bad(path, what + " holds " + a.dump().substr(0, 64) + ", not a HOST:PORT of at most " +
                           std::to_string(kMaxAddressLength) + " bytes");
    }
    std::string host;
    uint16_t port = 0;
    MC_RETURN_IF_ERROR(SplitHostPort(a.get_ref<const std::string&>(),
                                     "connection file " + path + ": " + what, &host, &port));
    out->push_back(a.get<std::string>());
  }
  return Status::Ok();
}

// "conductors" and "epoch" (after "master"): every conductor, exactly one of them active and
// that one the master. Absent (a file of one conductor, or older): the master alone, epoch 0.
Status ConductorsField(const json& j, const std::string& path, ConnectionInfo* info) {
  auto epoch = IntField(j, "epoch", "epoch", 0, std::numeric_limits<int64_t>::max(), 0, path);
  if (!epoch.ok()) return epoch.status();
  info->epoch = static_cast<uint64_t>(*epoch);
  auto list = ArrayField(j, "conductors", "conductors", kMaxConductors, path);
  if (!list.ok()) return list.status();
  if ((*list)->empty()) {
    info->conductors = {ConductorAddress{info->master_rank, info->master_addresses, true}};
    return Status::Ok();
  }
  int active = 0;
  for (size_t i = 0; i < (*list)->size(); ++i) {
    const json& entry = (**list)[i];
    const std::string what = "conductors[" + std::to_string(i) + "]";
    if (!entry.is_object()) return Bad(path, what + " is not an object");
    ConductorAddress c;
    auto rank =
        IntField(entry, "rank", what + ".rank", 0, info->world_size - 1, std::nullopt, path);
    if (!rank.ok()) return rank.status();
    c.rank = static_cast<int>(*rank);
    MC_RETURN_IF_ERROR(AddressesField(entry, what + ".addresses", path, &c.addresses));
    auto flag = entry.find("active");
    if (flag != entry.end() && !flag->is_boolean()) {
      return Bad(path, what + ".active is not true or false");
    }
    c.active = flag != entry.end() && flag->get<bool>();
    for (const ConductorAddress& seen : info->conductors) {
      if (seen.rank == c.rank)
        return Bad(path, what + " lists rank " + std::to_string(c.rank) + " a second time");
    }
    if (c.active) {
      ++active;
      if (c.rank != info->master_rank) {
        return Bad(path, what + " (rank " + std::to_string(c.rank) +
                             ") is marked active, but master.rank is " +
                             std::to_string(info->master_rank));
      }
    }
    info->conductors.push_back(std::move(c));
  }
  if (active != 1) {
    return Bad(path, "conductors marks " + std::to_string(active) +
                         " conductors active (exactly one, the master, must be)");
  }
  return Status::Ok();
}

// The fields a client needs, each checked and bounded before anything is sized from it; the
// descriptive ones are optional.
Status FromJson(const json& j, const std::string& path, ConnectionInfo* info) {
  if (!j.is_object() || j.value("format", "") != kFormat) {
    return Bad(path, "not a mooncake connection file (no \"format\": \"mooncake-connect\")");
  }
  if (j.value("version", 0) != kConnectionFileVersion) {
    return Bad(path, "version " + j.value("version", json()).dump().substr(0, 64) +
                         " (this client reads " + std::to_string(kConnectionFileVersion) + ")");
  }
  auto token_text = TextField(j, "token", "token", path);
  if (!token_text.ok()) return token_text.status();
  auto token = ParseToken(*token_text);
  if (!token.ok()) return Bad(path, "token: " + token.status().message());
  info->token = *token;
  auto world = IntField(j, "world_size", "world_size", 2, kMaxJobRanks, std::nullopt, path);
  if (!world.ok()) return world.status();
  info->world_size = static_cast<int>(*world);
  const json& master = ObjectField(j, "master");
  auto master_rank =
      IntField(master, "rank", "master.rank", 0, info->world_size - 1, std::nullopt, path);
  if (!master_rank.ok()) return master_rank.status();
  info->master_rank = static_cast<int>(*master_rank);
  MC_RETURN_IF_ERROR(AddressesField(master, "master.addresses", path, &info->master_addresses));
  MC_RETURN_IF_ERROR(ConductorsField(j, path, info));
  const json& store = ObjectField(j, "store");
  auto ranks =
      ArrayField(store, "ranks", "store.ranks", static_cast<size_t>(info->world_size), path);
  if (!ranks.ok()) return ranks.status();
  for (const json& r : **ranks) {
    if (!r.is_number_integer() || r.get<int64_t>() < 0 || r.get<int64_t>() >= info->world_size) {
      return Bad(path, "store.ranks holds " + r.dump().substr(0, 64) + ", not a rank of the job");
    }
    info->store_ranks.push_back(r.get<int>());
  }
  auto dram = IntField(store, "dram_per_rank", "store.dram_per_rank", 0,
                       std::numeric_limits<int64_t>::max(), 0, path);
  if (!dram.ok()) return dram.status();
  info->dram_per_rank = static_cast<uint64_t>(*dram);
  info->ssd = store.value("ssd", false);
  auto replicas = IntField(store, "replicas", "store.replicas", 1, kMaxReplicas, 1, path);
  if (!replicas.ok()) return replicas.status();
  info->replicas = static_cast<uint32_t>(*replicas);
  std::string* texts[] = {&info->mooncake_version, &info->cluster_id, &info->run_dir, &info->host,
                          &info->created};
  const char* names[] = {"mooncake_version", "cluster_id", "run_dir", "host", "created"};
  for (size_t i = 0; i < std::size(texts); ++i) {
    auto t = TextField(j, names[i], names[i], path);
    if (!t.ok()) return t.status();
    *texts[i] = std::move(*t);
  }
  auto pid = IntField(j, "pid", "pid", 0, std::numeric_limits<int64_t>::max(), 0, path);
  if (!pid.ok()) return pid.status();
  info->pid = *pid;
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
  // 0600: the token is never readable by others.
  const Status written = ReplaceFile(path, ConnectionFileText(info), 0600);
  if (!written.ok()) return IoError("the connection file: " + written.message());
  return Status::Ok();
}

std::string ConnectionFileText(const ConnectionInfo& info) { return ToJson(info).dump(2) + "\n"; }

Result<ConnectionInfo> ParseConnectionFile(std::string_view text, const std::string& path) {
  if (text.size() > kMaxConnectionFileBytes) {
    return Bad(path, std::to_string(text.size()) + " bytes, more than a connection file's " +
                         std::to_string(kMaxConnectionFileBytes));
  }
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Bad(path, "not valid JSON");
  ConnectionInfo info;
  try {
    MC_RETURN_IF_ERROR(FromJson(j, path, &info));
  } catch (const nlohmann::json::exception& e) {
    return Bad(path, std::string("a field has the wrong type (") + e.what() + ")");
  }
  return info;
}

std::string ReadableByOthersWarning(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || (st.st_mode & (S_IRGRP | S_IROTH)) == 0) return "";
  return fmt::format(
      "connection file {} is readable by {} (mode {:04o}): it holds the store job's token, and "
      "whoever reads it can use the store; chmod 600 it",
      path, (st.st_mode & S_IROTH) ? "others" : "its group", st.st_mode & 07777);
}

Result<ConnectionInfo> ReadConnectionFile(const std::string& path, bool warn_if_readable) {
  if (std::string warning = warn_if_readable ? ReadableByOthersWarning(path) : "";
      !warning.empty()) {
    log::Warn("{}", warning);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return InvalidArgument("connection file " + path + ": cannot open it (" + std::strerror(errno) +
                           ")");
  }
  // At most one byte more than the limit is read: a larger file is refused, never loaded.
  std::string text(kMaxConnectionFileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return ParseConnectionFile(text, path);
}

}  // namespace mooncake::client
