// A process outside the job that knows the ranks' worker addresses (job.address_file) and forges
// data-path messages with plain UCX: to every rank, writes and read requests that name another
// job rank as their sender, and read responses and write acknowledgements for tokens 1..N (what a
// guesser tries first). The ranks must refuse every one: a message is only taken from the
// endpoint of the rank it names (tests/transport_mpi/forged_data.sh).
//
// Usage: forged_data_probe ADDRESS_FILE REQUESTS_PER_RANK ACK_TOKENS
// Prints "probe: sent W writes, R reads, A acks to N ranks" and exits 0, or names what failed
// and exits 1.
#include <ucp/api/ucp.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

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

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: forged_data_probe ADDRESS_FILE REQUESTS_PER_RANK ACK_TOKENS\n");
    return 2;
  }
  const auto addresses = ReadAddresses(argv[1]);
  const int requests = std::stoi(argv[2]);
  const uint64_t tokens = std::stoull(argv[3]);
  const int n = static_cast<int>(addresses.size());
  if (n < 2) {
    std::fprintf(stderr, "probe: %s holds %d addresses\n", argv[1], n);
    return 1;
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES;
  params.features = UCP_FEATURE_AM;
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
  for (int i = 0; i < 1000; ++i) ucp_worker_progress(worker);
  std::printf("probe: sent %llu writes, %llu reads, %llu acks to %d ranks\n",
              static_cast<unsigned long long>(writes), static_cast<unsigned long long>(reads),
              static_cast<unsigned long long>(acks), n);
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
