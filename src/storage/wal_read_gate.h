// WalReadGate keeps readers of the write-ahead log (GetUpdatesSince and its
// iterator, which kvrocks replicas are fed from) apart from writes in flight.
//
// With pipelined writes RocksDB publishes a write group's sequence numbers in
// parts (its memtable groups), so the last published sequence number can end
// inside a WAL record; RocksDB's log iterator then reads that record, which
// Debian's RocksDB (built with assertions) aborts on. The same happens after a
// gap in the WAL (an ingested file, an unlogged write). While a reader holds
// the gate no write is in flight, so every record in the log is published.
//
// Readers go first: once one waits, new writes wait for it, so that a stream of
// writes cannot starve a replica's sender. Thread-safe.
#pragma once

#include <condition_variable>
#include <mutex>

namespace kvrocks {

class WalReadGate {
 public:
  // Held around a write to RocksDB. Does not nest: a holder that waited again
  // for a waiting reader would wait for itself.
  class Writing {
   public:
    explicit Writing(WalReadGate* gate) : gate_(gate) {
      std::unique_lock<std::mutex> g(gate_->mu_);
      gate_->cv_.wait(g, [&] { return gate_->readers_ == 0; });
      gate_->writes_++;
    }
    ~Writing() {
      std::lock_guard<std::mutex> g(gate_->mu_);
      if (--gate_->writes_ == 0 && gate_->readers_ > 0) gate_->cv_.notify_all();
    }
    Writing(const Writing&) = delete;
    Writing& operator=(const Writing&) = delete;

   private:
    WalReadGate* gate_;
  };

  // Held while reading the log; waits for the writes in flight to end.
  class Reading {
   public:
    explicit Reading(WalReadGate* gate) : gate_(gate) {
      std::unique_lock<std::mutex> g(gate_->mu_);
      gate_->readers_++;  // from now on new writes wait
      gate_->cv_.wait(g, [&] { return gate_->writes_ == 0 && !gate_->reading_; });
      gate_->reading_ = true;
    }
    ~Reading() { unlock(); }
    void unlock() {
      if (gate_ == nullptr) return;
      std::lock_guard<std::mutex> g(gate_->mu_);
      gate_->reading_ = false;
      gate_->readers_--;
      gate_->cv_.notify_all();
      gate_ = nullptr;
    }
    Reading(const Reading&) = delete;
    Reading& operator=(const Reading&) = delete;

   private:
    WalReadGate* gate_;
  };

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int writes_ = 0;        // writes in flight
  int readers_ = 0;       // readers reading or waiting
  bool reading_ = false;  // one reads at a time (log iterators are cheap to serialize)
};

}  // namespace kvrocks
