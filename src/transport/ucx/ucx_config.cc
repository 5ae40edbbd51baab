// The UCX settings that need no UCX: the tls shorthands and their families. Built with or
// without UCX (the disabled twin and the tests use them too).
#include "transport/ucx/ucx_config.h"

namespace mooncake::transport {

std::string ResolveTls(const std::string& v) {
  if (v.empty() || v == "auto") return "";
  if (v == "shm") return "posix,sysv,cma,self";
  if (v == "tcp") return "tcp,self";
  if (v == "rdma") return "rc,ud,self,posix,sysv,cma";
  return v;
}

TlsFamilies ClassifyTls(const std::string& resolved) {
  TlsFamilies f;
  f.pinned = !resolved.empty();
  size_t start = 0;
  while (start <= resolved.size()) {
    size_t comma = resolved.find(',', start);
    std::string t =
        resolved.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    auto starts = [&t](const char* p) { return t.rfind(p, 0) == 0; };
    if (t == "tcp") f.tcp = true;
    if (t == "posix" || t == "sysv" || t == "cma" || t == "knem" || t == "xpmem" || t == "shm" ||
        t == "sm") {
      f.shm = true;
    }
    if (starts("rc") || starts("ud") || starts("dc") || t == "ib" || t == "rdma") f.rdma = true;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return f;
}

bool TcpMayOpen(const std::string& ucx_tls) {
  if (ucx_tls.empty() || ucx_tls == "all") return true;
  if (ucx_tls[0] == '^') return !ClassifyTls(ucx_tls.substr(1)).tcp;
  return ClassifyTls(ucx_tls).tcp;
}

}  // namespace mooncake::transport
