// What every serving role shares: the job context, the cost model, the KV layout, the store
// client, and the two clocks. Model time (what the modelled cluster would take) maps to wall
// time by time_scale: wall = model / time_scale. Wall times exchanged between ranks are on the
// conductor's steady clock; `clock_offset` converts (conductor = local + offset).
#pragma once

#include <memory>
#include <thread>

#include "app/job_context.h"
#include "app/serve/kv_layout.h"
#include "engine/cost_model.h"
#include "store/client.h"

namespace mooncake::app::serve {

struct ServeContext {
  JobContext& job;
  const engine::CostModel& cost;
  const KvLayout& layout;
  store::StoreClient* store = nullptr;  // prefill and decode ranks
  Nanos clock_offset{0};
  double time_scale = 1.0;

  Nanos LocalNow() const { return SteadyClock().Now(); }
  Nanos ConductorNow() const { return LocalNow() + clock_offset; }
  Nanos ToLocal(Nanos conductor_wall) const { return conductor_wall - clock_offset; }
  Nanos ModelToWall(Nanos model) const {
    return Nanos(static_cast<int64_t>(static_cast<double>(model.count()) / time_scale));
  }
  double WallToModelSeconds(Nanos wall) const {
    return static_cast<double>(wall.count()) * 1e-9 * time_scale;
  }
};

// Sleeps until the local steady clock reaches `local_deadline` (returns at once if passed).
inline void SleepUntil(Nanos local_deadline) {
  Nanos now = SteadyClock().Now();
  if (local_deadline > now) std::this_thread::sleep_for(local_deadline - now);
}

}  // namespace mooncake::app::serve
