// Control-plane message types of the job (Rpc types). Each payload is encoded with
// common/wire.h and decoded with bounds checks by its handler.
#pragma once

#include <cstdint>

namespace mooncake::app {

enum MessageType : uint16_t {
  kMsgPing = 1,  // empty request, empty reply: RTT measurement
  kMsgStop = 2,  // conductor -> every rank: finish and shut down
};

}  // namespace mooncake::app
