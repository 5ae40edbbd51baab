// InspectFile: `mooncake store inspect FILE`. Lists a bucket file's attributes and blocks and
// verifies every block's checksum. Exit code: 0 all blocks intact, 1 at least one block corrupt
// or torn, 2 the file cannot be read as a bucket file.
#pragma once

#include <ostream>
#include <string>

namespace mooncake::store::hdf5 {

int InspectFile(const std::string& path, std::ostream& out);

}  // namespace mooncake::store::hdf5
