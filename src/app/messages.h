// Control-plane message types of the job (Rpc types). Ranges: 0x00xx job control, 0x02xx
// serving (serve/messages.h), 0x04xx store (store/messages.h).
#pragma once

#include <cstdint>

namespace mooncake::app {

enum MessageType : uint16_t {
  kMsgPing = 0x0001,  // empty request, empty reply: RTT measurement
  kMsgStop = 0x0002,  // conductor -> every rank: finish and shut down
};

}  // namespace mooncake::app
