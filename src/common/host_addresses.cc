#include "common/host_addresses.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <algorithm>
#include <set>
#include <sstream>

namespace mooncake {
namespace {

// "mlx5_0:1,eth0" to its names; a leading '^' (UCX: every device but these) is returned in
// `*excluding`.
std::set<std::string> DeviceNames(const std::string& list, bool* excluding) {
  std::string rest = list;
  *excluding = !rest.empty() && rest[0] == '^';
  if (*excluding) rest.erase(0, 1);
  std::set<std::string> names;
  std::stringstream in(rest);
  std::string name;
  while (std::getline(in, name, ',')) {
    if (!name.empty()) names.insert(name);
  }
  return names;
}

}  // namespace

std::vector<InterfaceAddress> HostInterfaceAddresses() {
  std::vector<InterfaceAddress> found;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return found;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP)) {
      continue;
    }
    char text[INET_ADDRSTRLEN] = {};
    const auto* a = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
    if (inet_ntop(AF_INET, &a->sin_addr, text, sizeof text) == nullptr) continue;
    found.push_back({i->ifa_name, text, (i->ifa_flags & IFF_LOOPBACK) != 0});
  }
  freeifaddrs(list);
  return found;
}

// External addresses first, loopback last, each once.
static std::vector<std::string> Ordered(const std::vector<InterfaceAddress>& interfaces) {
  std::vector<std::string> external, loopback;
  for (const InterfaceAddress& i : interfaces) {
    auto& out = i.loopback ? loopback : external;
    if (std::find(out.begin(), out.end(), i.address) == out.end()) out.push_back(i.address);
  }
  external.insert(external.end(), loopback.begin(), loopback.end());
  return external;
}

std::vector<std::string> HostIpv4Addresses() {
  std::vector<std::string> all = Ordered(HostInterfaceAddresses());
  if (std::none_of(all.begin(), all.end(),
                   [](const std::string& a) { return a.rfind("127.", 0) == 0; })) {
    all.emplace_back("127.0.0.1");
  }
  return all;
}

std::vector<std::string> ListenerAddresses(const std::string& bind_address,
                                           const std::string& net_devices) {
  if (bind_address != "0.0.0.0") return {bind_address};
  if (net_devices.empty() || net_devices == "all") return HostIpv4Addresses();
  bool excluding = false;
  const std::set<std::string> names = DeviceNames(net_devices, &excluding);
  std::vector<InterfaceAddress> kept;
  for (const InterfaceAddress& i : HostInterfaceAddresses()) {
    if ((names.count(i.interface) != 0) != excluding) kept.push_back(i);
  }
  if (kept.empty()) return HostIpv4Addresses();
  return Ordered(kept);
}

}  // namespace mooncake
