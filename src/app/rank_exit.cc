#include "app/rank_exit.h"

#include <cstdio>
#include <cstdlib>

#include "common/log.h"

namespace mooncake::app {

void EndRankNow(int rank, std::string_view what, const Status& why, int code) {
  if (what.empty()) {
    log::Error("rank {} ends: {}", rank, why.ToString());
  } else {
    log::Error("rank {} ends: {}: {}", rank, what, why.ToString());
  }
  std::fflush(nullptr);
  std::_Exit(code);
}

}  // namespace mooncake::app
