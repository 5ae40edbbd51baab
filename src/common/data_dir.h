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

// The running binary's own path ("mooncake" when /proc cannot say), for commands printed to the
// user (the store service's stop hint).
std::string ThisBinary();

// `path` from the root, so that a process started in another folder finds it (`path` itself
// when it cannot be made absolute).
std::string AbsolutePath(const std::string& path);

}  // namespace mooncake
