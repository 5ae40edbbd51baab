// Where the files the binary ships with live (configs/ presets, tools/plot_run.py): installed
// (`cmake --install build --prefix P`), in P/share/mooncake/<name>, found from the running
// binary's own path, so the installed `mooncake` works from any working directory; run from a
// build tree, in the source checkout it was configured from.
#pragma once

#include <string>

namespace mooncake {

// `name` is "configs" or "tools". The installed folder when <binary dir>/../share/mooncake/name
// exists, else the checkout's (MOONCAKE_SOURCE_DIR/name, fixed when the build was configured).
std::string DataDir(const std::string& name);

}  // namespace mooncake
