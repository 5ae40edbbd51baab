// `mooncake generate`: the reference model in one process, greedy, no cache, no
// disaggregation (docs/MODEL.md). Prints one JSON object per prompt with its output_ids.
#pragma once

namespace mooncake::engine {

// argv[0] is "generate". Returns the exit code: 0, 1 (a checkpoint that cannot be read, a
// failed computation), 2 (a usage error, naming the option).
int RunGenerate(int argc, char** argv);

}  // namespace mooncake::engine
