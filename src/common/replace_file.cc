#include "common/replace_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "common/secret.h"

namespace mooncake {

Status ReplaceFile(const std::string& path, std::string_view text, mode_t mode) {
  // A name of its own per writer: ranks of one job on one node may write the same file at once
  // (bootstrap.json when the bootstrap fails), and a shared name would let one rename the other's
  // half-written file. Drawn, not counted: a pid and a counter repeat after a restart (one pid
  // per container), and a partial file left by a killed writer would then refuse the next.
  const std::string partial = fmt::format("{}.{:016x}.partial", path, RandomWord());
  const int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return IoError("cannot create " + partial + ": " + std::strerror(errno));
  bool written = true;
  for (size_t done = 0; written && done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    written = n > 0;
    if (written) done += static_cast<size_t>(n);
    if (n == 0) errno = EIO;  // no progress and no error: do not report a stale errno
  }
  const int write_errno = errno;
  const bool closed = ::close(fd) == 0;
  if (!written || !closed || std::rename(partial.c_str(), path.c_str()) != 0) {
    const int err = !written ? write_errno : errno;
    (void)::unlink(partial.c_str());
    return IoError("cannot write " + path + ": " + std::strerror(err));
  }
  return Status::Ok();
}

}  // namespace mooncake
