// A process outside the job that knows the ranks' worker addresses (job.address_file) but not the
// job token: it connects over UCX, claims to be the conductor (rank 0) and sends every other rank
// the serving job's stop and shutdown messages with a token of its own. With the token check
// none of them runs a handler; the job finishes normally and its summary.json counts the frames
// (tests/transport_mpi/foreign_token.sh).
//
// Usage: foreign_probe ADDRESS_FILE FRAMES_PER_RANK
// Prints "probe: sent N frames to M ranks" and exits 0, or names what failed and exits 1.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "serve/messages.h"
#include "transport/factory/transport_factory.h"
#include "transport/rpc.h"

using namespace mooncake;

namespace {

std::vector<std::vector<std::byte>> ReadAddresses(const std::string& path) {
  std::vector<std::vector<std::byte>> all;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::byte> address;
    for (size_t i = 0; i + 1 < line.size(); i += 2) {
      address.push_back(static_cast<std::byte>(std::stoul(line.substr(i, 2), nullptr, 16)));
    }
    all.push_back(std::move(address));
  }
  return all;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: foreign_probe ADDRESS_FILE FRAMES_PER_RANK\n");
    return 2;
  }
  auto addresses = ReadAddresses(argv[1]);
  const int frames = std::stoi(argv[2]);
  const int n = static_cast<int>(addresses.size());
  if (n < 2) {
    std::fprintf(stderr, "probe: %s holds %d addresses\n", argv[1], n);
    return 1;
  }
  const Rank claimed{0};  // the conductor: the rank whose stop message every rank obeys
  auto t = transport::CreateTransport(transport::TransportConfig{}, claimed, n);
  if (!t.ok()) {
    std::fprintf(stderr, "probe: %s\n", t.status().ToString().c_str());
    return 1;
  }
  addresses[0] = (*t)->LocalAddress();  // its own slot: never the real conductor's
  Status connected = (*t)->ConnectAll(addresses);
  if (!connected.ok()) {
    std::fprintf(stderr, "probe: %s\n", connected.ToString().c_str());
    return 1;
  }
  transport::Rpc rpc(**t);
  rpc.SetJobToken(transport::DrawJobToken());  // right address, wrong token
  int sent = 0;
  for (int r = 1; r < n; ++r) {
    for (int i = 0; i < frames; ++i) {
      const uint16_t type = i % 2 == 0 ? serve::kMsgStop : serve::kMsgShutdown;
      if (rpc.Notify(Rank{r}, type, {}).ok()) ++sent;
    }
    // A request too: it must time out, never be answered.
    auto answer = rpc.Call(Rank{r}, serve::kMsgStop, {}, Nanos(200'000'000));
    ++sent;
    if (answer.ok()) {
      std::fprintf(stderr, "probe: rank %d answered a stop request with a wrong token\n", r);
      return 1;
    }
  }
  std::printf("probe: sent %d frames to %d ranks\n", sent, n - 1);
  std::fflush(stdout);
  (*t)->BeginShutdown();
  rpc.Stop();
  (void)(*t)->Close(Nanos(1'000'000'000));
  return 0;
}
