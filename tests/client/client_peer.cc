// A C++ process outside the store job, for the client tests (tests/client/test_client.py) and
// docs/CLIENT.md: it attaches with a connection file and puts or verifies the values the tests
// share with the Python processes. A value's bytes are a function of its key (ValueByte), so any
// process can check what it read without a copy.
//
//   client_peer FILE put PREFIX          puts PREFIX/<size> for every size in kSizes
//   client_peer FILE verify PREFIX       reads and verifies them (Get and GetInto)
//   client_peer FILE attach              attaches and detaches (exit 3 when refused)
//   client_peer FILE keys PREFIX         every call refuses the empty key and a 4097-byte one
//                                        (InvalidArgument naming the limit); 4096 bytes work
//   client_peer FILE start-put KEY SIZE  starts a put and stops before its end, then waits to be
//                                        killed (a client that dies mid-put)
#include <chrono>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "client/client.h"
#include "client/connection_file.h"
#include "store/net/messages.h"
#include "transport/factory/transport_factory.h"

namespace {

using mooncake::client::Client;

// The sizes every writer puts: 1 B to 64 MiB, odd ones included.
constexpr size_t kSizes[] = {1, 100, 4096, 65543, 1 << 20, (16 << 20) + 3, 64 << 20};

// Byte i of the value under `key`: (seed + 131 i) mod 251 with seed = sum of the key's bytes
// mod 251 (the same formula as test_client.py's value()).
uint8_t ValueByte(uint32_t seed, size_t i) { return static_cast<uint8_t>((seed + 131 * i) % 251); }

uint32_t Seed(const std::string& key) {
  uint32_t s = 0;
  for (unsigned char c : key) s += c;
  return s % 251;
}

std::vector<std::byte> Value(const std::string& key, size_t size) {
  std::vector<std::byte> v(size);
  const uint32_t seed = Seed(key);
  for (size_t i = 0; i < size; ++i) v[i] = std::byte{ValueByte(seed, i)};
  return v;
}

bool Matches(const std::string& key, const std::byte* data, size_t size) {
  const uint32_t seed = Seed(key);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] != std::byte{ValueByte(seed, i)}) {
      std::fprintf(stderr, "client_peer: %s differs at byte %zu\n", key.c_str(), i);
      return false;
    }
  }
  return true;
}

int Put(Client& c, const std::string& prefix) {
  for (size_t size : kSizes) {
    const std::string key = prefix + "/" + std::to_string(size);
    mooncake::Status s = c.Put(key, Value(key, size));
    if (!s.ok()) {
      std::fprintf(stderr, "client_peer: put %s: %s\n", key.c_str(), s.ToString().c_str());
      return 1;
    }
  }
  std::printf("client_peer: put %zu values under %s\n", std::size(kSizes), prefix.c_str());
  return 0;
}

int Verify(Client& c, const std::string& prefix) {
  std::vector<std::byte> buffer(64 << 20);
  for (size_t size : kSizes) {
    const std::string key = prefix + "/" + std::to_string(size);
    auto copy = c.Get(key);
    auto n = c.GetInto(key, buffer.data(), buffer.size());
    auto reported = c.GetSize(key);
    if (!copy.ok() || !n.ok() || !reported.ok()) {
      std::fprintf(stderr, "client_peer: get %s: %s\n", key.c_str(),
                   (!copy.ok() ? copy.status()
                    : !n.ok()  ? n.status()
                               : reported.status())
                       .ToString()
                       .c_str());
      return 1;
    }
    if (copy->size() != size || *n != size || *reported != size ||
        !Matches(key, copy->data(), size) || !Matches(key, buffer.data(), size)) {
      std::fprintf(stderr, "client_peer: %s has the wrong size or bytes\n", key.c_str());
      return 1;
    }
  }
  std::printf("client_peer: verified %zu values under %s\n", std::size(kSizes), prefix.c_str());
  return 0;
}

// The store's key limit (1..4096 bytes) as the C++ API reports it: every call, single and
// batch, refuses the empty key and a 4097-byte key with InvalidArgument whose message names the
// limit, before anything is sent; a 4096-byte key under PREFIX is stored and read back.
int Keys(Client& c, const std::string& prefix) {
  int failures = 0;
  const auto expect_refused = [&](const char* call, const std::string& key,
                                  const mooncake::Status& s) {
    const char* names = key.empty() ? "empty key" : "limit of 4096 bytes";
    if (s.code() != mooncake::ErrorCode::kInvalidArgument ||
        s.message().find(names) == std::string::npos) {
      std::fprintf(stderr,
                   "client_peer: %s of a %zu-byte key: %s (want InvalidArgument naming '%s')\n",
                   call, key.size(), s.ToString().c_str(), names);
      ++failures;
    }
  };
  const std::vector<std::byte> value(16, std::byte{7});
  std::vector<std::byte> out(16);
  for (const std::string& key : {std::string(), std::string(4097, 'k')}) {
    const std::vector<std::string> keys = {key};
    const std::vector<std::span<const std::byte>> values = {value};
    const std::vector<std::span<std::byte>> outs = {out};
    expect_refused("Put", key, c.Put(key, value));
    expect_refused("PutFrom", key, c.PutFrom(key, value.data(), value.size()));
    expect_refused("Get", key, c.Get(key).status());
    expect_refused("GetInto", key, c.GetInto(key, out.data(), out.size()).status());
    expect_refused("GetSize", key, c.GetSize(key).status());
    expect_refused("Exists", key, c.Exists(key));
    expect_refused("Remove", key, c.Remove(key));
    expect_refused("BatchPut", key, c.BatchPut(keys, values)[0]);
    expect_refused("BatchGet", key, c.BatchGet(keys)[0].status());
    expect_refused("BatchGetInto", key, c.BatchGetInto(keys, outs)[0].status());
    expect_refused("BatchExists", key, c.BatchExists(keys).status());
    expect_refused("BatchRemove", key, c.BatchRemove(keys)[0]);
  }
  const std::string longest = prefix + std::string(4096 - prefix.size(), 'x');
  const mooncake::Status put = c.Put(longest, value);
  auto back = c.Get(longest);
  if (!put.ok() || !back.ok() || *back != value) {
    std::fprintf(stderr, "client_peer: a 4096-byte key: put %s, get %s\n", put.ToString().c_str(),
                 back.status().ToString().c_str());
    ++failures;
  }
  if (failures == 0)
    std::printf("client_peer: keys of 0 and 4097 bytes refused, 4096 bytes work\n");
  return failures == 0 ? 0 : 1;
}

// A put that never ends: PutStart through the store's own RPC, then nothing (killed by the test).
int StartPut(const std::string& file, const std::string& key, uint64_t size) {
  namespace mc = mooncake;
  auto info = mc::client::ReadConnectionFile(file);
  if (!info.ok()) return 2;
  auto t = mc::transport::CreateTransport({}, mc::Rank{-1}, info->world_size);
  if (!t.ok()) return 1;
  mc::transport::Rpc rpc(**t);
  rpc.SetJobToken(info->token);
  std::string host;
  uint16_t port = 0;
  if (!mc::client::SplitHostPort(info->master_addresses.back(), "master", &host, &port).ok()) {
    return 2;
  }
  mc::Status s = (*t)->Attach(mc::Rank{info->master_rank}, host, port,
                              mc::client::TokenBytes(info->token), std::chrono::seconds(10));
  if (!s.ok()) return 1;
  mc::store::PutStartRequest req;
  req.keys = {key};
  req.sizes = {size};
  auto reply = rpc.Call(mc::Rank{info->master_rank}, mc::store::StoreMsg::kPutStart,
                        mc::store::Encode(req), std::chrono::seconds(10));
  mc::store::PutStartResponse resp;
  if (!reply.ok() || !mc::store::Decode(*reply, &resp).ok() || resp.entries.size() != 1 ||
      resp.entries[0].status.code != mc::ErrorCode::kOk) {
    std::fprintf(stderr, "client_peer: put start of %s failed\n", key.c_str());
    return 1;
  }
  std::printf("client_peer: started the put of %s (%llu B); waiting to be killed\n", key.c_str(),
              static_cast<unsigned long long>(size));
  std::fflush(stdout);
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr,
                 "usage: client_peer FILE put|verify|keys PREFIX | attach | start-put KEY SIZE\n");
    return 2;
  }
  const std::string file = argv[1], command = argv[2];
  if (command == "start-put" && argc == 5) return StartPut(file, argv[3], std::stoull(argv[4]));
  auto client = Client::Connect(file);
  if (!client.ok()) {
    std::fprintf(stderr, "client_peer: %s\n", client.status().ToString().c_str());
    return client.status().code() == mooncake::ErrorCode::kPermissionDenied ? 3 : 1;
  }
  if (command == "attach") {
    std::printf("client_peer: attached as %llu\n",
                static_cast<unsigned long long>((*client)->info().attached_as));
    return 0;
  }
  if (argc != 4) return 2;
  if (command == "keys") return Keys(**client, argv[3]);
  return command == "put" ? Put(**client, argv[3]) : Verify(**client, argv[3]);
}
