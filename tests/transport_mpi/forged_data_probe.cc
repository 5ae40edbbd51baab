// A process outside the job that knows the ranks' worker addresses (job.address_file) and forges
// data-path messages with plain UCX: to every rank, writes and read requests that name another
// job rank as their sender, and read responses and write acknowledgements for tokens 1..N (what a
// guesser tries first). The ranks must refuse every one: a message is only taken from the
// endpoint of the rank it names (tests/transport_mpi/forged_data.sh).
//
// Usage: forged_data_probe ADDRESS_FILE REQUESTS_PER_RANK ACK_TOKENS [PASSES [CONNECT_FILE]]
// PASSES (default 1) repeats the whole forging, so that it lasts while a client works. With a
// store job's CONNECT_FILE it also connects to the master's listener twice, as a store client
// does: once attached with the job token (an admitted process), once not attached at all; on each
// connection it sends REQUESTS_PER_RANK writes and read requests naming store rank 1, and prints
// "probe: through the listener: N attached, M unattached".
// Prints "probe: sent W writes, R reads, A acks to N ranks in S s" and exits 0, or names what
// failed and exits 1.
#include <ucp/api/ucp.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "client/connection_file.h"
#include "transport/ucx/ucx_impl.h"  // the AM ids and headers a rank of the job sends

using namespace mooncake::transport;

namespace {

std::vector<std::vector<char>> ReadAddresses(const std::string& path) {
  std::vector<std::vector<char>> all;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<char> address;
    for (size_t i = 0; i + 1 < line.size(); i += 2) {
      address.push_back(static_cast<char>(std::stoul(line.substr(i, 2), nullptr, 16)));
    }
    all.push_back(std::move(address));
  }
  return all;
}

// Sends one active message as a job rank would (REPLY flag set) and waits for it to leave.
bool Send(ucp_worker_h worker, ucp_ep_h ep, unsigned id, const void* header, size_t header_len,
          const void* payload, size_t len) {
  ucp_request_param_t rp{};
  rp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  rp.flags = UCP_AM_SEND_FLAG_REPLY;
  ucs_status_ptr_t req = ucp_am_send_nbx(ep, id, header, header_len, payload, len, &rp);
  if (UCS_PTR_IS_ERR(req)) return false;
  if (req == nullptr) return true;
  while (ucp_request_check_status(req) == UCS_INPROGRESS) ucp_worker_progress(worker);
  const bool ok = ucp_request_check_status(req) == UCS_OK;
  ucp_request_free(req);
  return ok;
}

// One connection to the master's listener at `address` (HOST:PORT), as a store client makes it.
// With `token`, it attaches first (the AttachHeader and the credential, as UcxTransport::Attach
// sends them) and waits for the admission. Then it forges `requests` writes and read requests
// naming `claimed`; returns how many left, or -1. The connection stays open (in `*open`).
int ForgeThroughListener(ucp_worker_h worker, const std::string& address, int world_size,
                         const mooncake::transport::JobToken* token, int requests, int32_t claimed,
                         std::vector<ucp_ep_h>* open) {
  std::string host;
  uint16_t port = 0;
  if (!mooncake::client::SplitHostPort(address, "master", &host, &port).ok()) return -1;
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  if (inet_pton(AF_INET, host.c_str(), &sa.sin_addr) != 1) return -1;
  ucp_ep_params_t params{};
  // The error mode must be the listener's (none, as UcxTransport::Attach asks): UCX refuses a
  // connection whose two ends differ.
  params.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR |
                      UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  params.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
  params.sockaddr.addr = reinterpret_cast<const sockaddr*>(&sa);
  params.sockaddr.addrlen = sizeof sa;
  params.err_mode = UCP_ERR_HANDLING_MODE_NONE;
  ucp_ep_h ep = nullptr;
  if (ucp_ep_create(worker, &params, &ep) != UCS_OK) {
    std::fprintf(stderr, "probe: cannot connect to the listener at %s\n", address.c_str());
    return -1;
  }
  if (token != nullptr) {
    static AttachReplyHeader reply;
    static bool answered = false;
    ucp_am_handler_param_t hp{};
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                    UCP_AM_HANDLER_PARAM_FIELD_ARG;
    hp.id = kAmAttachReply;
    hp.cb = [](void*, const void* header, size_t length, void*, size_t,
               const ucp_am_recv_param_t*) -> ucs_status_t {
      if (length == sizeof reply) std::memcpy(&reply, header, sizeof reply);
      answered = true;
      return UCS_OK;
    };
    if (ucp_worker_set_am_recv_handler(worker, &hp) != UCS_OK) return -1;
    const AttachHeader h{kAttachMagic, kAttachVersion, world_size, 0};
    const std::vector<std::byte> credential = mooncake::client::TokenBytes(*token);
    if (!Send(worker, ep, kAmAttach, &h, sizeof h, credential.data(), credential.size())) {
      std::fprintf(stderr, "probe: cannot send the attach request to %s\n", address.c_str());
      return -1;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!answered && std::chrono::steady_clock::now() < deadline) ucp_worker_progress(worker);
    if (!answered || reply.status != 0) {
      std::fprintf(stderr, "probe: the listener at %s did not admit the token (%s, status %d)\n",
                   address.c_str(), answered ? "answered" : "no answer", reply.status);
      return -1;
    }
  }
  char payload[64];
  std::memset(payload, 0x5a, sizeof payload);
  int sent = 0;
  for (int i = 0; i < requests; ++i) {
    DataHeader h{static_cast<uint64_t>(i + 1), 0x1000 + 64ull * i, sizeof payload, claimed, 0};
    if (Send(worker, ep, kAmWrite, &h, sizeof h, payload, sizeof payload)) ++sent;
    if (Send(worker, ep, kAmReadReq, &h, sizeof h, nullptr, 0)) ++sent;
  }
  open->push_back(ep);  // closed at the end, with the others
  return sent;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 6) {
    std::fprintf(stderr,
                 "usage: forged_data_probe ADDRESS_FILE REQUESTS_PER_RANK ACK_TOKENS [PASSES "
                 "[CONNECT_FILE]]\n");
    return 2;
  }
  const auto addresses = ReadAddresses(argv[1]);
  const int requests = std::stoi(argv[2]);
  const uint64_t tokens = std::stoull(argv[3]);
  const int passes = argc >= 5 ? std::stoi(argv[4]) : 1;
  const int n = static_cast<int>(addresses.size());
  if (n < 2) {
    std::fprintf(stderr, "probe: %s holds %d addresses\n", argv[1], n);
    return 1;
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features =
      UCP_FEATURE_AM | UCP_FEATURE_RMA;  // what a job rank (and a store client) asks for
  ucp_config_t* config = nullptr;
  ucp_context_h context = nullptr;
  ucp_worker_h worker = nullptr;
  if (ucp_config_read(nullptr, nullptr, &config) != UCS_OK) return 1;
  ucs_status_t st = ucp_init(&params, config, &context);
  ucp_config_release(config);
  ucp_worker_params_t wp{};
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_SINGLE;
  if (st != UCS_OK || ucp_worker_create(context, &wp, &worker) != UCS_OK) {
    std::fprintf(stderr, "probe: cannot start UCX\n");
    return 1;
  }
  const auto started = std::chrono::steady_clock::now();
  std::vector<ucp_ep_h> eps(n, nullptr);
  for (int r = 0; r < n; ++r) {
    ucp_ep_params_t ep{};
    ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    ep.address = reinterpret_cast<const ucp_address_t*>(addresses[r].data());
    if (ucp_ep_create(worker, &ep, &eps[r]) != UCS_OK) {
      std::fprintf(stderr, "probe: cannot reach rank %d\n", r);
      return 1;
    }
  }
  char payload[64];
  std::memset(payload, 0x5a, sizeof payload);
  uint64_t writes = 0, reads = 0, acks = 0;
  for (int pass = 0; pass < passes; ++pass) {
    for (int r = 0; r < n; ++r) {
      const int32_t claimed = (r + 1) % n;  // another rank of the job
      for (int i = 0; i < requests; ++i) {
        // Addresses a guesser would try: the bottom of the heap, and the same again as a read.
        DataHeader h{static_cast<uint64_t>(i + 1), 0x1000 + 64ull * i, sizeof payload, claimed, 0};
        if (Send(worker, eps[r], kAmWrite, &h, sizeof h, payload, sizeof payload)) ++writes;
        if (Send(worker, eps[r], kAmReadReq, &h, sizeof h, nullptr, 0)) ++reads;
      }
      for (uint64_t t = 1; t <= tokens; ++t) {
        AckHeader a{t, 0, 0};  // UCS_OK: "your transfer completed", with bytes for a read
        if (Send(worker, eps[r], t % 2 ? kAmReadResp : kAmWriteAck, &a, sizeof a, payload,
                 t % 2 ? sizeof payload : 0)) {
          ++acks;
        }
      }
    }
  }
  for (int i = 0; i < 1000; ++i) ucp_worker_progress(worker);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("probe: sent %llu writes, %llu reads, %llu acks to %d ranks in %.2f s\n",
              static_cast<unsigned long long>(writes), static_cast<unsigned long long>(reads),
              static_cast<unsigned long long>(acks), n, took);
  if (argc == 6) {
    auto info = mooncake::client::ReadConnectionFile(argv[5]);
    if (!info.ok()) {
      std::fprintf(stderr, "probe: %s\n", info.status().ToString().c_str());
      return 1;
    }
    std::string master = info->master_addresses.front();
    for (const std::string& a : info->master_addresses) {
      if (a.rfind("127.0.0.1:", 0) == 0) master = a;  // the test runs on one host
    }
    const int attached = ForgeThroughListener(worker, master, info->world_size, &info->token,
                                              requests, /*claimed=*/1, &eps);
    const int unattached =
        ForgeThroughListener(worker, master, info->world_size, nullptr, requests, 1, &eps);
    if (attached < 0 || unattached < 0) {
      std::fprintf(stderr, "probe: forging through the listener at %s failed\n", master.c_str());
      return 1;
    }
    std::printf("probe: through the listener: %d attached, %d unattached\n", attached, unattached);
    // Sent is not yet handled: a connection closed at once is reset at the listener, which then
    // forgets it and names what it still has to handle from it "unknown". Stay a while: 5 s,
    // since a sanitizer build's master beside other tests may need more than 2 s for them.
    const auto linger = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < linger) ucp_worker_progress(worker);
  }
  std::fflush(stdout);
  for (ucp_ep_h ep : eps) {
    ucp_request_param_t rp{};
    rp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    rp.flags = UCP_EP_CLOSE_FLAG_FORCE;
    ucs_status_ptr_t req = ucp_ep_close_nbx(ep, &rp);
    if (req != nullptr && !UCS_PTR_IS_ERR(req)) {
      while (ucp_request_check_status(req) == UCS_INPROGRESS) ucp_worker_progress(worker);
      ucp_request_free(req);
    }
  }
  ucp_worker_destroy(worker);
  ucp_cleanup(context);
  return 0;
}
