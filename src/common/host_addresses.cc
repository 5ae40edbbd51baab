#include "common/host_addresses.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <algorithm>

namespace mooncake {

std::vector<std::string> HostIpv4Addresses() {
  std::vector<std::string> external, loopback;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) == 0) {
    for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
      if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP)) {
        continue;
      }
      char text[INET_ADDRSTRLEN] = {};
      const auto* a = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
      if (inet_ntop(AF_INET, &a->sin_addr, text, sizeof text) == nullptr) continue;
      auto& out = (i->ifa_flags & IFF_LOOPBACK) ? loopback : external;
      if (std::find(out.begin(), out.end(), text) == out.end()) out.emplace_back(text);
    }
    freeifaddrs(list);
  }
  if (loopback.empty()) loopback.emplace_back("127.0.0.1");
  external.insert(external.end(), loopback.begin(), loopback.end());
  return external;
}

std::vector<std::string> ListenerAddresses(const std::string& bind_address) {
  if (bind_address == "0.0.0.0") return HostIpv4Addresses();
  return {bind_address};
}

}  // namespace mooncake
