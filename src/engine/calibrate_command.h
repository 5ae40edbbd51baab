// `mooncake calibrate`: measures the reference engine on this machine and writes a hardware
// preset whose cost model predicts its prefill and decode times (docs/MODEL.md "Calibrating").
#pragma once

namespace mooncake::engine {

// argv[0] is "calibrate". Returns the exit code: 0, 1 (a checkpoint that cannot be read, a failed
// computation or write), 2 (a usage error, naming the option).
int RunCalibrate(int argc, char** argv);

}  // namespace mooncake::engine
