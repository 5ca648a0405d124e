#include "common/socket_address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

namespace kvrocks {

std::string AddrToString(const sockaddr* sa) {
  char host[INET6_ADDRSTRLEN] = {0};
  if (sa->sa_family == AF_INET) {
    auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
    return std::string(host) + ":" + std::to_string(ntohs(in->sin_port));
  }
  if (sa->sa_family == AF_INET6) {
    auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
    return "[" + std::string(host) + "]:" + std::to_string(ntohs(in6->sin6_port));
  }
  return "?:0";
}

namespace {

template <typename Fn>
std::string AddressOf(int fd, Fn get) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (get(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?:0";
  return AddrToString(reinterpret_cast<sockaddr*>(&ss));
}

}  // namespace

std::string PeerAddress(int fd) { return AddressOf(fd, ::getpeername); }
std::string LocalAddress(int fd) { return AddressOf(fd, ::getsockname); }

}  // namespace kvrocks
