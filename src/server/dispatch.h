// Runs parsed commands for a connection. See dispatch.cc.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kvrocks {

class Connection;
class Server;
struct CommandSpec;

// The ACL check of a call: "" or the NOPERM error (logged in ACL LOG with
// context "toplevel", "multi" or "lua").
std::string CheckAcl(Server* srv, Connection* conn, const CommandSpec& spec, const std::vector<std::string>& args,
                     const char* context);
// Runs (or, inside MULTI, queues) one command and appends its reply.
void Dispatch(Connection* conn, std::vector<std::string>& args);
// A run of GET commands (RESP multibulk form) at the front of a connection's
// unparsed input is read with one MultiGet before the first of them runs; the
// commands then run as usual and find their keys' metadata prefetched
// (Context::Prefetch). Returns how many commands the prefetch covers (0: none).
size_t PrefetchGets(Connection* conn, std::string_view input);
// Runs one command now: locks its keys if it writes, commits its batch.
void RunCommand(Connection* conn, const CommandSpec& spec, const std::vector<std::string>& args);
// Re-runs the command of a blocked connection on `ready`, the (logical db, key)
// of its keys that got data (or was deleted), as Redis serves it from that key
// alone. False when it did not run: the key does not hold the type it waits for.
bool RetryBlockedCommand(Connection* conn, const std::vector<std::string>& args,
                         const std::pair<uint8_t, std::string>& ready);
// Counts the call of a blocked command answered without running it again
// (timeout, CLIENT UNBLOCK) with this reply.
void FinishBlocked(Connection* conn, const std::string& reply);
// A replica's stream applier runs its master client's commands itself; these
// do for them what Redis' call() and rejectCommand do for any client's.
// BeginMasterCall, before the command runs or when MULTI queues it: CLIENT
// LIST's cmd= (spec nullptr: an unknown command), and (unless queued) MONITOR
// for a script, which shows itself first.
void BeginMasterCall(Connection* conn, const CommandSpec* spec, const std::vector<std::string>& args,
                     bool queued = false);
// Once it ran (since start_us, MonotonicUs), with its reply (an error reply
// counts as a failure): MONITOR, the statistics (total_commands_processed,
// commandstats, errorstats, latency monitor) and the slow log.
void FinishMasterCall(Connection* conn, const CommandSpec& spec, const std::vector<std::string>& args,
                      const std::string& reply, uint64_t start_us);
// Refused before it ran (unknown, wrong number of arguments): rejected_calls
// and errorstats count it; error is the reply without '-' and CRLF.
void RejectMasterCall(Connection* conn, const CommandSpec* spec, const std::vector<std::string>& args,
                      const std::string& error);
// EXEC: runs the queued commands under all their key locks and commits them
// as one batch; appends the EXEC reply to out.
void RunTransaction(Connection* conn, std::string* out);

}  // namespace kvrocks
