// Join slots: store ranks that join a running job (`mooncake store join`, issue 33 item 4).
//
// A joining process attaches to the master like any process outside the job (transport.h,
// "Attaching") and is then moved into one of kMaxJoinedRanks slots numbered from world_size()
// up: AdoptAttached on the master, TakeJoinSlot on the joining process. From then on it is
// addressed by that number like a rank of the job (messages, Import, Submit), and processes
// attach to its own listener by it. Listeners number attached processes above the slots, so no
// number is ever both a store rank and an attached process.
//
// A capability beside Transport, not part of it: backends that have slots (ucx) implement it,
// JoinSlotsOf finds it; the loopback backend has none.
#pragma once

#include "common/ids.h"
#include "common/status.h"
#include "transport/transport.h"

namespace mooncake::transport {

inline constexpr int kMaxJoinedRanks = 256;

class JoinSlots {
 public:
  virtual ~JoinSlots() = default;
  // Listener side: the process attached as `attached` is rank `slot` from now on (its number
  // `attached` keeps working too). InvalidArgument when `slot` is not a join slot,
  // AlreadyExists when it is taken, NotFound when no such process is attached. Any thread.
  virtual Status AdoptAttached(Rank attached, Rank slot) = 0;
  // Attaching side: the listener `listener` moved this process into join slot `slot`; it goes
  // by `slot` there (and self() is `slot`) from now on. Call before sending more to it.
  virtual Status TakeJoinSlot(Rank listener, Rank slot) = 0;
};

// The join slots of `transport`, or NotSupported naming its backend.
inline Result<JoinSlots*> JoinSlotsOf(Transport& transport) {
  auto* slots = dynamic_cast<JoinSlots*>(&transport);
  if (slots == nullptr) return NotSupported(transport.backend_name() + " has no join slots");
  return slots;
}

}  // namespace mooncake::transport
