// Redis' `supervised` option: telling an init system (systemd, upstart) how the
// server is doing, so that it can wait for readiness and watch shutdowns.
#pragma once

#include <string>

namespace kvrocks {

// Whether `supervised` (no, upstart, systemd, auto: upstart if UPSTART_JOB is
// set, else systemd if NOTIFY_SOCKET is) finds its supervisor's variable: a
// supervised server does not daemonize, as in Redis.
bool Supervised(const std::string& mode);

// Starts the supervision as Redis' redisIsSupervised, once logging is up:
// upstart stops the process (SIGSTOP) as its readiness signal; systemd is told
// that the server is loading. Call once, before NotifySystemd.
void StartSupervision(const std::string& mode);

// systemd only (nothing otherwise): sends one sd_notify message, such as
// "READY=1\n" or "STATUS=...\n", to the socket in NOTIFY_SOCKET.
void NotifySystemd(const std::string& message);

}  // namespace kvrocks
