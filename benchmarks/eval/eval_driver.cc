// A stand-alone `mooncake eval` (the same library the main binary calls), so the eval speed
// benchmark and the tests can run it before or without the full job binary.
#include "eval/eval_command.h"

int main(int argc, char** argv) {
  // argv[0] (the program name) stands where `mooncake eval` has "eval": it is skipped.
  return mooncake::eval::RunEvalCommand(argc, argv);
}
