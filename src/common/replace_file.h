// Writing a file that another process may be polling for (a run folder's summary, the
// connection file, endpoint.json): the text goes to a partial file beside it, which is then
// renamed over `path`, so a reader sees no file or a whole file, never a half-written one.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "common/status.h"

namespace mooncake {

// Creates `<path>.<random>.partial`, new, with `mode` less the umask (0600: a file holding a
// token is never readable by others, even for a moment), writes `text`, closes it and renames it
// to `path`. Writers of one path at once each leave a whole file, the last rename's. On failure
// nothing is left beside `path`, and the error names the file.
Status ReplaceFile(const std::string& path, std::string_view text, mode_t mode = 0666);

}  // namespace mooncake
