// What an engine's KV connector does with an installed mooncake: attach with the store job's
// connection file, save one request's blocks, load them back, compare. Prints "engine_client OK".
#include <cstdio>
#include <string>
#include <vector>

#include "client/client.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: engine_client CONNECT_FILE\n");
    return 2;
  }
  auto client = mooncake::client::Client::Connect(argv[1]);
  if (!client.ok()) {
    std::fprintf(stderr, "engine_client: %s\n", client.status().ToString().c_str());
    return 1;
  }
  std::vector<std::string> keys;
  std::vector<std::vector<std::byte>> blocks;
  for (int b = 0; b < 8; ++b) {
    keys.push_back("engine/request-7/block-" + std::to_string(b));
    blocks.emplace_back(256 << 10, std::byte(b * 29 + 3));
  }
  std::vector<std::span<const std::byte>> values(blocks.begin(), blocks.end());
  for (const auto& s : (*client)->BatchPut(keys, values)) {
    if (!s.ok()) {
      std::fprintf(stderr, "engine_client: put: %s\n", s.ToString().c_str());
      return 1;
    }
  }
  std::vector<std::vector<std::byte>> back(keys.size(), std::vector<std::byte>(256 << 10));
  std::vector<std::span<std::byte>> outs(back.begin(), back.end());
  auto sizes = (*client)->BatchGetInto(keys, outs);
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!sizes[i].ok() || *sizes[i] != blocks[i].size() || back[i] != blocks[i]) {
      std::fprintf(stderr, "engine_client: block %zu came back wrong\n", i);
      return 1;
    }
  }
  std::printf("engine_client OK: %zu blocks saved and loaded\n", keys.size());
  return (*client)->Close().ok() ? 0 : 1;
}
