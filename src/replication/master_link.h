// A blocking TCP connection to a master, used by the replica thread: buffered
// reads with timeouts (poll), RESP command writes. Every wait is cut into
// short slices so that a stop request is noticed quickly.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace kvrocks {

class MasterLink {
 public:
  // bytes_in (optional) counts every byte received from the master.
  explicit MasterLink(const std::atomic<bool>* stop, std::atomic<uint64_t>* bytes_in = nullptr)
      : stop_(stop), bytes_in_(bytes_in) {}
  ~MasterLink();
  MasterLink(const MasterLink&) = delete;
  MasterLink& operator=(const MasterLink&) = delete;

  // NotFound if host does not resolve, TimedOut if no connection within timeout_ms.
  // A source_addr (Redis' bind-source-addr) is bound before connecting; an
  // address that cannot be bound fails the connection, as in Redis.
  Status Connect(const std::string& host, int port, int timeout_ms, const std::string& source_addr = "");
  void Close();

  // Writes all of bytes, waiting at most timeout_ms in all (-1: no limit).
  Status Send(const std::string& bytes, int timeout_ms = -1);
  Status SendCommand(const std::vector<std::string>& args);
  // Sends a command and reads the first line of its reply.
  Status Ask(const std::vector<std::string>& args, std::string* line, int timeout_ms);
  // Reads a line (without its \r\n or \n).
  Status ReadLine(std::string* line, int timeout_ms);
  // Reads exactly n bytes.
  Status ReadExact(char* buf, size_t n, int timeout_ms);
  // Waits up to timeout_ms for data; returns how many new bytes were buffered.
  Status Fill(int timeout_ms, size_t* got);

  // Unconsumed input (the replication stream after the handshake).
  std::string& buffer() { return in_; }
  size_t& buffer_pos() { return pos_; }
  // Drops consumed input.
  void Compact();
  // Bytes received by the kernel and not read yet.
  size_t Unread() const;
  // Time of the last byte received (monotonic ms).
  uint64_t last_io_ms() const { return last_io_ms_; }
  // The connected socket (-1 before Connect and after Close).
  int fd() const { return fd_; }

 private:
  const std::atomic<bool>* stop_;
  std::atomic<uint64_t>* bytes_in_;
  int fd_ = -1;
  std::string in_;
  size_t pos_ = 0;
  uint64_t last_io_ms_ = 0;
};

}  // namespace kvrocks
