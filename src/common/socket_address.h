// Socket addresses as Redis writes them (CLIENT LIST addr= / laddr=, MONITOR,
// SLOWLOG): "ip:port", "[ipv6]:port".
#pragma once

#include <sys/socket.h>

#include <string>

namespace kvrocks {

// "?:0" for a family other than IPv4 and IPv6.
std::string AddrToString(const sockaddr* sa);
// The far end (getpeername) and our end (getsockname) of a connected socket;
// "?:0" if the socket has none.
std::string PeerAddress(int fd);
std::string LocalAddress(int fd);

}  // namespace kvrocks
