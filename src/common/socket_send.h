// Blocking writes to a socket whose send timeout (SO_SNDTIMEO) bounds each wait.
#pragma once

#include <cstddef>

#include "common/status.h"

namespace kvrocks {

// Makes fd blocking, each send waiting at most timeout_s seconds.
void SetBlockingWithSendTimeout(int fd, int timeout_s);
// Sends all n bytes (TimedOut when a wait passes the send timeout).
Status SendAll(int fd, const char* p, size_t n);

}  // namespace kvrocks
