// Status and StatusOr: error returns for storage and command paths.
// A Status is either OK or carries a code and a message. Messages of
// kRedisError statuses are full Redis error replies without the leading '-'
// (e.g. "ERR value is not an integer or out of range"), so a command can hand
// them to the client unchanged.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace kvrocks {

class Status {
 public:
  enum Code { kOK = 0, kNotFound, kRedisError, kIOError, kCorruption, kInvalidArgument, kAborted, kTimedOut };

  Status() = default;
  static Status OK() { return Status(); }
  static Status NotFound(std::string msg = "") { return Status(kNotFound, std::move(msg)); }
  // msg is a complete Redis error text, e.g. "WRONGTYPE Operation against ...".
  static Status RedisError(std::string msg) { return Status(kRedisError, std::move(msg)); }
  static Status IOError(std::string msg) { return Status(kIOError, std::move(msg)); }
  static Status Corruption(std::string msg) { return Status(kCorruption, std::move(msg)); }
  static Status InvalidArgument(std::string msg) { return Status(kInvalidArgument, std::move(msg)); }
  static Status Aborted(std::string msg = "") { return Status(kAborted, std::move(msg)); }
  // An I/O wait that ran out of time.
  static Status TimedOut(std::string msg) { return Status(kTimedOut, std::move(msg)); }

  bool ok() const { return code_ == kOK; }
  bool IsNotFound() const { return code_ == kNotFound; }
  bool IsRedisError() const { return code_ == kRedisError; }
  bool IsTimedOut() const { return code_ == kTimedOut; }
  bool IsCorruption() const { return code_ == kCorruption; }
  bool IsAborted() const { return code_ == kAborted; }
  Code code() const { return code_; }
  const std::string& message() const { return msg_; }

  // The text to send to a client as an error reply (without '-' and CRLF).
  std::string ToRedisError() const {
    if (code_ == kRedisError) return msg_;
    return "ERR " + msg_;
  }

 private:
  Status(Code code, std::string msg) : code_(code), msg_(std::move(msg)) {}
  Code code_ = kOK;
  std::string msg_;
};

template <typename T>
class StatusOr {
 public:
  StatusOr(Status s) : status_(std::move(s)) {}  // NOLINT: implicit by design
  StatusOr(T v) : value_(std::move(v)) {}        // NOLINT: implicit by design
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  T* operator->() { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace kvrocks
