#include "commands/debug_reload.h"

#include <glog/logging.h>

#include <string>
#include <vector>

#include "commands/blocked_signals.h"
#include "commands/helpers.h"
#include "commands/watched_changes.h"
#include "common/time_util.h"
#include "replication/rdb_file.h"
#include "replication/rdb_object.h"
#include "scripting/functions.h"

namespace kvrocks {

namespace {

// A replica keeps the keys that arrive already expired, as Redis' rdbLoad does
// when it is not a master: they are its master's to delete.
bool KeepsExpired(Server* srv) { return srv->IsReplica(); }

using scripting::FunctionRegistry;
using scripting::Library;

// Loads an RDB on top of the current data set (NOFLUSH), through the call's
// context: a key or library that exists already is an error unless `merge`.
class MergeLoader : public rdb::Handler {
 public:
  MergeLoader(CommandCall& call, bool merge) : call_(call), merge_(merge) {}

  Status OnSelectDb(uint64_t db) override {
    if (db >= static_cast<uint64_t>(call_.server->config()->databases)) {
      return Status::Corruption("the RDB holds database " + std::to_string(db) + ", beyond `databases`");
    }
    db_ = static_cast<int>(db);
    return Status::OK();
  }

  Status OnKey(std::string key, rdb::Object obj, int64_t expire_ms) override {
    // Skipped as a load skips them: module values, keys already expired (on a master), empty collections.
    if (!obj.module_name.empty() || obj.Empty()) return Status::OK();
    if (!KeepsExpired(call_.server) && expire_ms != -1 && static_cast<uint64_t>(expire_ms) <= NowMs()) {
      expired_++;
      return Status::OK();
    }
    Database db(call_.ctx, call_.server->storage()->PhysicalDb(db_));
    LoadedKey lk;
    Status s = db.Load(key, &lk);
    if (!s.ok()) return s;
    if (lk.live && !merge_) {
      return Status::InvalidArgument("RDB has duplicated key '" + key + "' in DB " + std::to_string(db_));
    }
    if (lk.on_disk) {
      bool deleted;
      if (!(s = db.Delete(key, &deleted)).ok()) return s;
    }
    // A replica keeps what expired, as its full sync's load does (RdbLoader).
    const bool was_left = call_.ctx->expiry_left_to_master();
    call_.ctx->set_expiry_left_to_master(KeepsExpired(call_.server));
    s = rdb::RestoreObject(&db, key, obj, expire_ms == -1 ? 0 : static_cast<uint64_t>(expire_ms));
    call_.ctx->set_expiry_left_to_master(was_left);
    if (s.ok() && ++keys_ % 10000 == 0) s = call_.ctx->Commit();  // bounded batches
    return s;
  }

  Status OnFunction(const std::string& code) override {
    Library lib;
    std::string err = FunctionRegistry::Build(code, &lib);
    if (err.empty()) err = FunctionRegistry::Instance().Add(lib, merge_);
    if (!err.empty()) return Status::InvalidArgument("function library in the RDB: " + err);
    functions_changed_ = true;
    return Status::OK();
  }

  bool functions_changed() const { return functions_changed_; }
  uint64_t keys() const { return keys_; }
  uint64_t expired() const { return expired_; }

 private:
  CommandCall& call_;
  bool merge_;
  int db_ = 0;
  uint64_t keys_ = 0, expired_ = 0;
  bool functions_changed_ = false;
};

void PersistFunctions(CommandCall& call) {
  call.ctx->Put(ColumnFamily::kState, FunctionRegistry::kStateKey, FunctionRegistry::Instance().Serialize());
}

// Loads path on top of the data set.
Status LoadMerged(CommandCall& call, const std::string& path, bool merge) {
  MergeLoader loader(call, merge);
  Status s = ReadRdbFile(path, &loader);
  // What was loaded before an error stays, as in Redis.
  if (loader.functions_changed()) PersistFunctions(call);
  if (s.ok()) call.server->NoteRdbLoaded(loader.keys(), loader.expired());
  return s;
}

// Replaces the data set and the function libraries with path's (Redis:
// emptyData, then rdbLoad). If the file cannot be loaded the data set is left
// empty, as Redis leaves it; while a replica's full sync loads, nothing changes.
Status LoadReplacing(CommandCall& call, const std::string& path) {
  Server* srv = call.server;
  Storage* st = srv->storage();
  const int dbs = srv->config()->databases;
  // Watchers of keys that existed see them touched, as by a flush.
  std::vector<WatchedChange> changes;
  for (int j = 0; j < dbs; j++) AddWatchedChanges(call, st->PhysicalDb(j), nullptr, &changes);
  std::vector<WaitedKey> waited = WaitedKeysBefore(call);
  RdbLoader loader(st, dbs);
  loader.set_access_clock(&srv->access_clock());
  loader.set_keep_expired(KeepsExpired(srv));
  Status s = loader.Begin();
  if (!s.ok()) return s;  // a full sync is loading: nothing was touched
  // Replaced or emptied from here on: a writable replica forgets the keys its clients
  // gave a TTL, as Redis' emptyData does.
  call.ctx->TakeExpiringKeys();
  srv->ForgetOwnExpiries();
  s = StageRdbFile(&loader, path);
  std::vector<Library> functions;
  if (s.ok()) {
    functions = FunctionRegistry::BuildAll(loader.functions());
    s = loader.Finish({{FunctionRegistry::kStateKey, FunctionRegistry::SerializeLibraries(functions)}});
  }
  if (s.ok()) srv->NoteRdbLoaded(loader.keys_loaded(), loader.expired_skipped());
  if (!s.ok()) {
    loader.Abort();
    functions.clear();
    for (int j = 0; j < dbs; j++) st->FlushDb(st->PhysicalDb(j));
  }
  FunctionRegistry::Instance().Reset(functions);
  if (!s.ok()) PersistFunctions(call);
  ApplyWatchedChanges(call, changes);
  SignalWaitedKeys(call, waited, DbChange::kReloaded);
  srv->tracking().InvalidateAll();
  return s;
}

}  // namespace

void DebugReload(CommandCall& call) {
  const auto& a = call.args;
  bool flush = true, save = true, merge = false;
  for (size_t j = 2; j < a.size(); j++) {
    if (TokenEquals(a[j], "merge")) {
      merge = true;
    } else if (TokenEquals(a[j], "noflush")) {
      flush = false;
    } else if (TokenEquals(a[j], "nosave")) {
      save = false;
    } else {
      return ReplyError(call, "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.");
    }
  }
  if (!call.exclusive) {
    call.rerun_exclusive = true;  // the whole data set: run again holding every key lock
    return;
  }
  Server* srv = call.server;
  const std::string path = srv->config()->dir + "/" + srv->config()->Value(&Config::dbfilename);
  Status s = call.ctx->Commit();  // an EXEC's writes before it are part of what is saved
  if (s.ok() && save) {
    const uint64_t covered = srv->stats().dirty.load();
    std::vector<std::string> codes;
    for (const auto& lib : FunctionRegistry::Instance().Libraries()) codes.push_back(lib.code);
    uint64_t keys;
    s = WriteRdbFile(srv->storage(), srv->config()->databases, codes, path, &keys);
    if (!s.ok()) {
      LOG(WARNING) << "DEBUG RELOAD: saving " << path << " failed: " << s.message();
      return ReplyError(call, "ERR");  // Redis' shared.err
    }
    srv->NoteSaved(covered);
  }
  if (!s.ok()) return ReplyStatusError(call, s);
  s = flush ? LoadReplacing(call, path) : LoadMerged(call, path, merge);
  if (!s.ok()) {
    LOG(WARNING) << "DEBUG RELOAD: loading " << path << " failed: " << s.message();
    return ReplyError(call, "ERR Error trying to load the RDB dump");
  }
  LOG(WARNING) << "DB reloaded by DEBUG RELOAD";
  reply::Ok(call.out);
}

}  // namespace kvrocks
