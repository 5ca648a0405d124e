#include "commands/cmd_client.h"

#include "commands/helpers.h"
#include "common/time_util.h"

namespace kvrocks {

namespace {

void Pause(CommandCall& call) {
  const auto& a = call.args;
  if (a.size() < 3 || a.size() > 4) return ReplySubcommandArity(call);
  int64_t ms;
  if (!ParseInt64(a[2], &ms)) return ReplyError(call, "ERR timeout is not an integer or out of range");
  if (ms < 0) return ReplyError(call, "ERR timeout is negative");
  bool all = true;
  if (a.size() == 4) {
    if (EqualsIgnoreCase(a[3], "write")) {
      all = false;
    } else if (!EqualsIgnoreCase(a[3], "all")) {
      return ReplyError(call, "ERR CLIENT PAUSE mode must be WRITE or ALL");
    }
  }
  call.server->PauseClients(static_cast<int64_t>(NowMs()) + ms, all, call.conn->worker());
  reply::Ok(call.out);
}

void Reply(CommandCall& call) {
  if (call.args.size() != 3) return ReplySubcommandArity(call);
  Connection* c = call.conn;
  const std::string& mode = call.args[2];
  if (EqualsIgnoreCase(mode, "on")) {
    c->reply_off = c->reply_skip = c->reply_skip_next = false;
    return reply::Ok(call.out);
  }
  if (EqualsIgnoreCase(mode, "off")) {
    c->reply_off = true;
    return;
  }
  if (EqualsIgnoreCase(mode, "skip")) {
    if (!c->reply_off) c->reply_skip_next = true;
    return;
  }
  ReplyError(call, kSyntaxError);
}

void Unblock(CommandCall& call) {
  const auto& a = call.args;
  if (a.size() < 3 || a.size() > 4) return ReplySubcommandArity(call);
  int64_t id;
  if (!IntArg(call, 2, &id)) return;
  bool error = false;
  if (a.size() == 4) {
    if (EqualsIgnoreCase(a[3], "error")) {
      error = true;
    } else if (!EqualsIgnoreCase(a[3], "timeout")) {
      return ReplyError(call, "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
    }
  }
  reply::Integer(call.out, call.server->UnblockClient(static_cast<uint64_t>(id), error) ? 1 : 0);
}

void NoEvict(CommandCall& call) {
  if (call.args.size() != 3) return ReplySubcommandArity(call);
  // kvrocks never evicts keys; the flag is kept for CLIENT LIST/INFO.
  if (EqualsIgnoreCase(call.args[2], "on")) {
    call.conn->no_evict = true;
  } else if (EqualsIgnoreCase(call.args[2], "off")) {
    call.conn->no_evict = false;
  } else {
    return ReplyError(call, kSyntaxError);
  }
  reply::Ok(call.out);
}

}  // namespace

bool ClientControl(CommandCall& call) {
  const std::string& sub = call.args[1];
  if (EqualsIgnoreCase(sub, "pause")) {
    Pause(call);
  } else if (EqualsIgnoreCase(sub, "unpause")) {
    if (call.args.size() != 2) {
      ReplySubcommandArity(call);
    } else {
      call.server->UnpauseClients();
      reply::Ok(call.out);
    }
  } else if (EqualsIgnoreCase(sub, "reply")) {
    Reply(call);
  } else if (EqualsIgnoreCase(sub, "unblock")) {
    Unblock(call);
  } else if (EqualsIgnoreCase(sub, "no-evict")) {
    NoEvict(call);
  } else {
    return false;
  }
  return true;
}

}  // namespace kvrocks
