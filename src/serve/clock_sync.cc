#include "serve/clock_sync.h"

#include "common/wire.h"
#include "serve/messages.h"

namespace mooncake::serve {

void ServeClock(transport::Rpc& rpc) {
  transport::CheckRegistered(
      rpc.Register(kMsgClockSync, [](Rank, std::span<const std::byte>, transport::Responder r) {
        WireWriter w;
        w.Put<int64_t>(SteadyClock().Now().count());
        r.Reply(w.bytes());
      }));
}

Result<Nanos> SyncClock(transport::Rpc& rpc, Rank conductor, int rounds, Nanos timeout) {
  SteadyClock clock;
  Nanos best_rtt = Nanos::max();
  Nanos offset{0};
  for (int i = 0; i < rounds; ++i) {
    Nanos sent = clock.Now();
    auto reply = rpc.Call(conductor, kMsgClockSync, {}, timeout);
    Nanos received = clock.Now();
    if (!reply.ok()) return reply.status().WithContext("clock sync");
    WireReader r(*reply);
    int64_t remote = 0;
    if (!r.Get(&remote) || !r.done()) return ProtocolError("malformed clock sync reply");
    if (received - sent < best_rtt) {
      best_rtt = received - sent;
      offset = Nanos(remote) - (sent + (received - sent) / 2);
    }
  }
  return offset;
}

}  // namespace mooncake::serve
