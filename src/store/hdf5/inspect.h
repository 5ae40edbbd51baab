// InspectFile: `mooncake store inspect FILE`. Lists a bucket file's attributes and blocks and
// verifies every block's checksum. Exit code: 0 all blocks intact, 1 at least one block corrupt
// or torn, 2 the file cannot be read as a bucket file. The listing goes to `out`; the reason a
// file cannot be read to `err` (the command passes stdout and stderr).
#pragma once

#include <ostream>
#include <string>

namespace mooncake::store::hdf5 {

int InspectFile(const std::string& path, std::ostream& out, std::ostream& err);

}  // namespace mooncake::store::hdf5
