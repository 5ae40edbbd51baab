// mooncake: one binary, N ranks under mpirun or srun; `mooncake eval` for trace evaluation.
// main only wires (STYLE.md habit 10): parse options, then hand over to Run.
#include <cstring>

#include "app/options.h"
#include "app/run.h"

int main(int argc, char** argv) {
  auto parsed = mooncake::app::ParseJobOptions(argc, argv);
  if (!parsed.options) return parsed.exit_code;
  return mooncake::app::Run(*parsed.options, &argc, &argv);
}
