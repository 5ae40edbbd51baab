// mooncake: one binary, N ranks under mpirun or srun; `mooncake eval` for trace evaluation,
// `mooncake p2p` to distribute files, `mooncake store` for the store's offline tools,
// `mooncake generate` for the reference model's greedy output, `mooncake calibrate` to fit a
// hardware preset to it, `mooncake serve stop` to end a serving job.
// main only wires (STYLE.md habit 10): pick the command, parse options, hand over.
#include <cstring>

#include "app/eval_wiring.h"
#include "app/options.h"
#include "app/p2p_wiring.h"
#include "app/run.h"
#include "app/store_command.h"
#include "engine/calibrate_command.h"
#include "engine/generate_command.h"
#include "serve/serve_command.h"

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "eval") == 0) {
    return mooncake::app::RunEval(argc - 1, argv + 1);
  }
  if (argc > 1 && std::strcmp(argv[1], "p2p") == 0) {
    return mooncake::app::RunP2p(argc - 1, argv + 1);
  }
  if (argc > 1 && std::strcmp(argv[1], "generate") == 0) {
    return mooncake::engine::RunGenerate(argc - 1, argv + 1);
  }
  if (argc > 1 && std::strcmp(argv[1], "calibrate") == 0) {
    return mooncake::engine::RunCalibrate(argc - 1, argv + 1);
  }
  if (argc > 1 && std::strcmp(argv[1], "serve") == 0) {
    return mooncake::serve::RunServeCommand(argc - 1, argv + 1);
  }
  if (argc > 1 && std::strcmp(argv[1], "store") == 0) {
    return mooncake::app::RunStoreCommand(argc - 1, argv + 1);
  }
  auto parsed = mooncake::app::ParseJobOptions(argc, argv);
  if (!parsed.options) return parsed.exit_code;
  return mooncake::app::Run(*parsed.options, &argc, &argv);
}
