// kvrocks: a Redis-compatible server whose data lives in RocksDB.
//
//   kvrocks [--conf kvrocks.conf | kvrocks.conf] [--<option> <value> ...]
//
// Every kvrocks.conf option can be given as a flag, which overrides the file.
#include <event2/thread.h>
#include <glog/logging.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <clocale>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <thread>

#include "commands/command.h"
#include "common/version.h"
#include "common/time_util.h"
#include "config/config.h"
#include "replication/rdb_file.h"
#include "replication/rdb_reader.h"
#include "replication/rdb_writer.h"
#include "scripting/functions.h"
#include "scripting/lua_engine.h"
#include "server/fd_limit.h"
#include "server/logging.h"
#include "server/sched_policy.h"
#include "server/supervision.h"
#include "server/server.h"
#include "storage/storage.h"
#include "types/encoding_limits.h"

using kvrocks::Config;
using kvrocks::Status;

// jemalloc reads this before the first allocation: it madvises its memory for
// transparent huge pages (a MALLOC_CONF environment variable still overrides it).
// `disable-thp yes` turns THP off for the whole process instead (main below).
extern "C" {
const char* malloc_conf = "thp:always";
}

namespace {

void Usage() {
  std::cerr << "Usage: kvrocks [--conf FILE | FILE] [--<option> <value> ...]\n"
               "       kvrocks --version\n";
}

Status ParseArgs(int argc, char** argv, Config* cfg) {
  std::vector<std::pair<std::string, std::string>> overrides;
  std::string conf;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a == "--conf" || a == "-c") {
      if (i + 1 >= argc) return Status::InvalidArgument("--conf needs a file");
      conf = argv[++i];
    } else if (a.rfind("--", 0) == 0) {
      if (i + 1 >= argc) return Status::InvalidArgument(a + " needs a value");
      overrides.emplace_back(a.substr(2), argv[++i]);
    } else if (conf.empty() && i == 1) {
      conf = a;
    } else {
      return Status::InvalidArgument("unexpected argument '" + a + "'");
    }
  }
  if (!conf.empty()) {
    Status s = cfg->LoadFile(conf);
    if (!s.ok()) return s;
  }
  for (auto& [k, v] : overrides) {
    Status s = cfg->Set(k, v, true);
    if (!s.ok()) return Status::InvalidArgument("--" + k + ": " + s.message());
  }
  return Status::OK();
}

}  // namespace

int main(int argc, char** argv) {
  // As Redis' main: SORT ... ALPHA and Lua's string comparisons collate by the
  // environment's locale (strcoll).
  std::setlocale(LC_COLLATE, "");
  if (argc == 2 && (std::string(argv[1]) == "--version" || std::string(argv[1]) == "-v")) {
    std::cout << "kvrocks " << kvrocks::kKvrocksVersion << " (redis " << kvrocks::kRedisVersion << " compatible)\n";
    return 0;
  }
  if (argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
    Usage();
    return 0;
  }
  Config cfg;
  Status s = ParseArgs(argc, argv, &cfg);
  if (!s.ok()) {
    std::cerr << "kvrocks: " << s.message() << "\n";
    Usage();
    return 1;
  }
  kvrocks::StatusOr<int> logfile = kvrocks::OpenLogFile(cfg);
  if (!logfile.ok()) {
    std::cerr << "kvrocks: " << logfile.status().message() << "\n";
    return 1;
  }
  // As Redis: a supervised server stays in the foreground.
  if (cfg.daemonize && !kvrocks::Supervised(cfg.supervised) && daemon(1, 0) != 0) {
    perror("daemon");
    return 1;
  }
  kvrocks::InitLogging(&cfg, argv[0], *logfile);
  // Before the first thread starts: every thread inherits the policy. Refused
  // (a sandbox's seccomp filter), the server runs at the policy it has.
  s = kvrocks::SetSchedPolicy(cfg.sched_policy);
  if (!s.ok()) LOG(WARNING) << s.message();
  kvrocks::rdb::Reader::set_file_checksums(cfg.rdbchecksum);
  kvrocks::StartSupervision(cfg.supervised);
  evthread_use_pthreads();
  if (cfg.disable_thp && prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0) {
    LOG(WARNING) << "disable-thp: prctl(PR_SET_THP_DISABLE) failed: " << strerror(errno);
  }

  // Signals are handled by one thread with sigwait; every other thread blocks them.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  signal(SIGPIPE, SIG_IGN);

  kvrocks::FdBudget fds;
  s = kvrocks::AdjustOpenFilesLimit(cfg.maxclients, cfg.rocksdb_max_open_files, &fds);
  if (!s.ok()) {
    LOG(ERROR) << s.message();
    return 1;
  }
  if (!fds.warning.empty()) LOG(WARNING) << fds.warning;
  if (fds.limit > fds.original_limit) {
    LOG(INFO) << "Increased maximum number of open files to " << fds.limit << " (it was originally set to "
              << fds.original_limit << ").";
  }
  cfg.maxclients = fds.maxclients;
  cfg.rocksdb_max_open_files = fds.rocksdb_open_files;
  cfg.OnSet("maxclients", [](const Config& c) {
    // RocksDB's share is fixed once it is open: the clients get what the limit leaves.
    kvrocks::FdBudget now;
    Status st = kvrocks::AdjustOpenFilesLimit(c.maxclients, c.rocksdb_max_open_files, &now);
    if (!st.ok()) return st;
    const int fit = now.limit - kvrocks::kReservedFds - c.rocksdb_max_open_files;
    if (fit < c.maxclients) {
      return Status::InvalidArgument(
          "The operating system is not able to handle the specified number of clients, try with " +
          std::to_string(std::max(fit, 1)));
    }
    return Status::OK();
  });

  // Before any load: an RDB's collections take the encodings these limits give.
  auto apply_encoding_limits = [](const Config& c) {
    auto& limits = kvrocks::EncodingLimits::Get();
    limits.hash_max_listpack_entries = static_cast<uint64_t>(c.hash_max_listpack_entries);
    limits.hash_max_listpack_value = static_cast<uint64_t>(c.hash_max_listpack_value);
    limits.set_max_intset_entries = static_cast<uint64_t>(c.set_max_intset_entries);
    limits.zset_max_listpack_entries = static_cast<uint64_t>(c.zset_max_listpack_entries);
    limits.zset_max_listpack_value = static_cast<uint64_t>(c.zset_max_listpack_value);
    limits.list_max_listpack_size = c.list_max_listpack_size;
    limits.list_compress_depth = c.list_compress_depth;
    kvrocks::rdb::SetCompression(c.rdbcompression);
    return Status::OK();
  };
  apply_encoding_limits(cfg);
  for (const char* name : {"hash-max-listpack-entries", "hash-max-listpack-value", "set-max-intset-entries",
                           "zset-max-listpack-entries", "zset-max-listpack-value", "list-max-listpack-size",
                           "list-compress-depth", "rdbcompression"}) {
    cfg.OnSet(name, apply_encoding_limits);
  }

  kvrocks::Storage storage(&cfg);
  s = storage.Open();
  if (!s.ok()) {
    LOG(ERROR) << "Failed to open storage: " << s.message();
    return 1;
  }
  // Constructed before an RDB loads: the keys' idle times go to its access clock.
  kvrocks::Server server(&cfg, &storage);
  if (!cfg.load_rdb.empty()) {
    uint64_t keys = 0, expired = 0;
    uint64_t start = kvrocks::MonotonicUs();
    // Started as a replica (replicaof), it keeps the keys already expired, as Redis does.
    s = kvrocks::LoadRdbFile(&storage, cfg.databases, cfg.load_rdb, &server.access_clock(), !cfg.replicaof.empty(),
                             &keys, &expired);
    if (s.ok()) server.NoteRdbLoaded(keys, expired);
    if (!s.ok()) {
      LOG(ERROR) << "Failed to load " << cfg.load_rdb << ": " << s.message();
      storage.Close();
      return 1;
    }
    LOG(INFO) << "Loaded " << keys << " keys from " << cfg.load_rdb << " in "
              << (kvrocks::MonotonicUs() - start) / 1000 << " ms";
  }
  for (const std::string& name : kvrocks::Storage::RuntimeOptions()) {
    cfg.OnSet(name, [&storage, name](const Config&) { return storage.ApplyOption(name); });
  }
  {
    // Function libraries persisted by FUNCTION LOAD (or an RDB's).
    std::string data;
    rocksdb::Status rs = storage.db()->Get(rocksdb::ReadOptions(), storage.cf(kvrocks::ColumnFamily::kState),
                                           kvrocks::scripting::FunctionRegistry::kStateKey, &data);
    if (rs.ok()) {
      auto libs = kvrocks::scripting::FunctionRegistry::BuildAll(kvrocks::scripting::FunctionRegistry::Deserialize(data));
      LOG(INFO) << "Loaded " << libs.size() << " function libraries";
      kvrocks::scripting::FunctionRegistry::Instance().Reset(libs);
    }
  }
  for (const auto& [from, to] : cfg.rename_commands) {
    if (!kvrocks::CommandTable::Instance().Rename(from, to)) {
      LOG(ERROR) << "No such command in rename-command: " << from;
      return 1;
    }
  }
  kvrocks::scripting::RunningScripts::SetBusyThresholdMs(cfg.busy_reply_threshold);
  cfg.OnSet("busy-reply-threshold", [](const Config& c) {
    kvrocks::scripting::RunningScripts::SetBusyThresholdMs(c.busy_reply_threshold);
    return Status::OK();
  });
  // Read before the workers start: from then on CONFIG SET and REPLICAOF may change them.
  const std::string listening = cfg.port != 0 ? cfg.bind + ":" + std::to_string(cfg.port) : "no TCP port";
  const bool replica_at_start = !cfg.replicaof.empty();
  s = server.Start();
  if (!s.ok()) {
    LOG(ERROR) << "Failed to start server: " << s.message();
    return 1;
  }
  if (!cfg.pidfile.empty()) {
    std::ofstream(cfg.pidfile) << getpid() << "\n";
  }
  LOG(INFO) << "kvrocks " << kvrocks::kKvrocksVersion << " ready to accept connections on " << listening
            << (cfg.unixsocket.empty() ? "" : " and at " + cfg.unixsocket) << " with " << cfg.workers
            << " workers, data in " << cfg.dir;
  kvrocks::NotifySystemd(!replica_at_start ? "STATUS=Ready to accept connections\n"
                                           : "STATUS=Ready to accept connections in read-only mode. Waiting for "
                                             "MASTER <-> REPLICA sync\n");
  kvrocks::NotifySystemd("READY=1\n");

  std::thread signal_thread([&server, &cfg, sigs] {
    int sig = 0;
    while (sigwait(&sigs, &sig) == 0) {
      if (server.stopping()) return;
      LOG(INFO) << "Received " << (sig == SIGINT ? "SIGINT" : "SIGTERM") << " scheduling shutdown...";
      // As SHUTDOWN with the options shutdown-on-sigint/-sigterm give (NOW waits for
      // no replica: kvrocks replicas resume from the master's WAL after its restart).
      const int flags = sig == SIGINT ? cfg.shutdown_on_sigint.load() : cfg.shutdown_on_sigterm.load();
      kvrocks::Status saved =
          server.SaveBeforeShutdown(flags & Config::kShutdownNoSave, flags & Config::kShutdownSave);
      if (!saved.ok()) {
        if (!(flags & Config::kShutdownForce)) {
          // As Redis: no exit without the save that the save points ask for.
          LOG(ERROR) << "Error trying to save the DB, can't exit: " << saved.message();
          kvrocks::NotifySystemd("STATUS=Error trying to save the DB, can't exit.\n");
          continue;
        }
        LOG(WARNING) << "Error trying to save the DB. Exit anyway: " << saved.message();
      }
      server.Stop();
      return;
    }
  });
  server.Wait();
  // Wake the signal thread if the stop came from SHUTDOWN.
  if (signal_thread.joinable()) {
    pthread_kill(signal_thread.native_handle(), SIGTERM);
    signal_thread.join();
  }
  storage.Close();
  if (!cfg.pidfile.empty()) unlink(cfg.pidfile.c_str());
  LOG(INFO) << "kvrocks is now ready to exit, bye bye...";
  return 0;
}
