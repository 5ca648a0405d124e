#include "storage/tombstone_compactor.h"

#include <glog/logging.h>
#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>

#include <algorithm>
#include <memory>
#include <utility>

namespace kvrocks {

TombstoneCompactor::TombstoneCompactor(rocksdb::DB* db) : db_(db), thread_([this] { Loop(); }) {}

TombstoneCompactor::~TombstoneCompactor() { Stop(); }

void TombstoneCompactor::Request(rocksdb::ColumnFamilyHandle* cf, std::string begin, std::string end) {
  std::lock_guard<std::mutex> g(mu_);
  if (stopping_ || queue_.size() >= kMaxQueued) return;
  bool queued = std::any_of(queue_.begin(), queue_.end(),
                            [&](const Range& r) { return r.cf == cf && r.begin == begin && r.end == end; });
  if (queued) return;
  queue_.push_back(Range{cf, std::move(begin), std::move(end)});
  cv_.notify_one();
}

void TombstoneCompactor::Stop() {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (stopping_) return;
    stopping_ = true;
    cv_.notify_one();
  }
  // Cancels a compaction in progress (it would hold up shutdown).
  db_->DisableManualCompaction();
  if (thread_.joinable()) thread_.join();
  db_->EnableManualCompaction();
}

uint64_t TombstoneCompactor::done() const {
  std::lock_guard<std::mutex> g(mu_);
  return done_;
}

void TombstoneCompactor::Loop() {
  auto last = std::chrono::steady_clock::now() - kMinInterval;
  std::unique_lock<std::mutex> lk(mu_);
  while (true) {
    cv_.wait(lk, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    if (cv_.wait_until(lk, last + kMinInterval, [&] { return stopping_; })) return;
    Range r = std::move(queue_.front());
    queue_.pop_front();
    lk.unlock();
    rocksdb::CompactRangeOptions co;
    co.exclusive_manual_compaction = false;  // automatic compactions go on meanwhile
    co.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForceOptimized;
    rocksdb::Slice begin(r.begin), end(r.end);
    rocksdb::Status s = db_->CompactRange(co, r.cf, &begin, &end);
    if (!s.ok() && !s.IsIncomplete()) LOG(WARNING) << "Compaction of a range full of tombstones: " << s.ToString();
    last = std::chrono::steady_clock::now();
    lk.lock();
    done_++;
  }
}

namespace {

// Nesting depth of PerfCountScopes on this thread, and the perf level to
// restore when the outermost one goes.
thread_local int count_depth = 0;
thread_local rocksdb::PerfLevel level_before = rocksdb::PerfLevel::kDisable;

void BeginCounting() {
  if (count_depth++ == 0) {
    level_before = rocksdb::GetPerfLevel();
    if (level_before < rocksdb::PerfLevel::kEnableCount) rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  }
}

void EndCounting() {
  if (--count_depth == 0) rocksdb::SetPerfLevel(level_before);
}

struct Watch {
  TombstoneCompactor* compactor;
  rocksdb::ColumnFamilyHandle* cf;
  const rocksdb::Slice* lower;  // the iterator's bounds: they outlive it
  const rocksdb::Slice* upper;
  uint64_t skipped_before;
};

void EndWatch(void* arg, void* /*unused*/) {
  std::unique_ptr<Watch> w(static_cast<Watch*>(arg));
  uint64_t skipped = rocksdb::get_perf_context()->internal_delete_skipped_count - w->skipped_before;
  EndCounting();
  if (skipped > TombstoneCompactor::kSkippedTombstones) {
    w->compactor->Request(w->cf, w->lower->ToString(), w->upper->ToString());
  }
}

}  // namespace

PerfCountScope::PerfCountScope() { BeginCounting(); }

PerfCountScope::~PerfCountScope() { EndCounting(); }

void WatchTombstones(TombstoneCompactor* compactor, rocksdb::ColumnFamilyHandle* cf, const rocksdb::ReadOptions& ro,
                     rocksdb::Iterator* it) {
  if (compactor == nullptr || ro.iterate_lower_bound == nullptr || ro.iterate_upper_bound == nullptr) return;
  BeginCounting();
  auto w = std::make_unique<Watch>(Watch{compactor, cf, ro.iterate_lower_bound, ro.iterate_upper_bound,
                                         rocksdb::get_perf_context()->internal_delete_skipped_count});
  it->RegisterCleanup(&EndWatch, w.release(), nullptr);
}

}  // namespace kvrocks
