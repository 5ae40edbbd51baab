// What every serving role shares: the transport and RPC of this rank, who plays which role, the
// settings, the cost model (the conductor's predictions, modelled transfers), the KV layout, the
// engine (prefill and decode compute), the store client, and the two clocks. Model time (what
// the modelled cluster would take) maps to wall time by time_scale: wall = model / time_scale.
// Wall times exchanged between ranks are on the conductor's steady clock; `clock_offset`
// converts (conductor = local + offset).
#pragma once

#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/ids.h"
#include "common/log.h"
#include "engine/cost_model.h"
#include "engine/engine.h"
#include "engine/kv_layout.h"
#include "serve/conductor_link.h"
#include "serve/serve_config.h"
#include "store/net/client.h"
#include "transport/rpc.h"
#include "transport/transport.h"

namespace mooncake::serve {

// The ranks of a serving job by role. Instance i of a role is the i-th rank of its list.
struct ServePeers {
  Rank self{0};
  Rank conductor{0};
  std::vector<int> prefill_ranks;
  std::vector<int> decode_ranks;
};

struct ServeContext {
  transport::Transport& transport;
  transport::Rpc& rpc;
  ServePeers peers;
  const ServeConfig& config;
  const engine::CostModel& cost;
  const engine::KvLayout& layout;
  engine::Engine* engine = nullptr;     // prefill and decode ranks
  store::StoreClient* store = nullptr;  // prefill and decode ranks
  Nanos clock_offset{0};
  // Prefill and decode ranks: reports and calls to the conductor, which a standby may replace
  // (conductor_link.h). Null: straight to peers.conductor.
  ConductorLink* link = nullptr;

  Rank Conductor() const { return link != nullptr ? link->conductor() : peers.conductor; }
  Status NotifyConductor(uint16_t type, std::vector<std::byte> bytes) const {
    return link != nullptr ? link->Notify(type, std::move(bytes))
                           : rpc.Notify(peers.conductor, type, bytes);
  }
  Result<std::vector<std::byte>> CallConductor(uint16_t type, std::span<const std::byte> request,
                                               Nanos timeout) const {
    return link != nullptr ? link->Call(type, request, timeout)
                           : rpc.Call(peers.conductor, type, request, timeout);
  }

  // A call that the conductor answers the same however often it is asked (KvArrived): one
  // without an answer within rpc_timeout is asked again until phase_timeout. A conductor that
  // stalls for longer than rpc_timeout (a loaded machine, a slow disk) must not leave the
  // request to wait for the job deadline.
  Result<std::vector<std::byte>> CallConductorPatiently(uint16_t type,
                                                        std::span<const std::byte> request,
                                                        const char* what) const {
    const Nanos give_up = LocalNow() + config.phase_timeout;
    for (;;) {
      auto reply = CallConductor(type, request, config.rpc_timeout);
      if (reply.ok() || reply.status().code() != ErrorCode::kTimeout || LocalNow() > give_up) {
        return reply;
      }
      log::Warn("{}: no answer from the conductor within {} ms; asking again", what,
                config.rpc_timeout.count() / 1'000'000);
    }
  }

  double time_scale() const { return config.time_scale; }
  Nanos LocalNow() const { return SteadyClock().Now(); }
  Nanos ConductorNow() const { return LocalNow() + clock_offset; }
  Nanos ToLocal(Nanos conductor_wall) const { return conductor_wall - clock_offset; }
  Nanos ModelToWall(Nanos model) const {
    return Nanos(static_cast<int64_t>(static_cast<double>(model.count()) / config.time_scale));
  }
  double WallToModelSeconds(Nanos wall) const {
    return static_cast<double>(wall.count()) / 1e9 * config.time_scale;
  }
};

// Sleeps until the local steady clock reaches `local_deadline` (returns at once if passed).
inline void SleepUntil(Nanos local_deadline) {
  Nanos now = SteadyClock().Now();
  if (local_deadline > now) std::this_thread::sleep_for(local_deadline - now);
}

}  // namespace mooncake::serve
