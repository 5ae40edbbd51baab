// Attach numbers: how a listener numbers the processes attached to it (transport.h,
// "Attaching"), and which number this process got at each listener it attached to.
//
// A process outside the job holds one number per rank it attached to. A store client whose
// master changes (docs/CLIENT.md, "When the master changes") attaches to a second conductor;
// the conductors' listeners then number from disjoint starts, so that a number names one process
// at one master. A capability beside Transport, as join_slots.h is: backends that take attaches
// (ucx) implement it, AttachNumbersOf finds it; the loopback backend has none.
#pragma once

#include <cstdint>

#include "common/ids.h"
#include "common/status.h"
#include "transport/transport.h"

namespace mooncake::transport {

class AttachNumbers {
 public:
  virtual ~AttachNumbers() = default;
  // Listener side, before Listen: attached processes are numbered from `first` up (never below
  // the join slots). InvalidArgument once listening.
  virtual Status NumberAttachedFrom(int32_t first) = 0;
  // Attaching side: the number the listener `listener` gave this process; self() for a rank
  // this process did not attach to (a rank of the job talks to its peers as itself).
  virtual Rank AttachedAs(Rank listener) const = 0;
};

// The attach numbers of `transport`, or null when its backend takes no attaches.
inline AttachNumbers* AttachNumbersOf(Transport& transport) {
  return dynamic_cast<AttachNumbers*>(&transport);
}

}  // namespace mooncake::transport
