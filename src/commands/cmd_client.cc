#include "commands/cmd_client.h"

#include "commands/helpers.h"
#include "common/time_util.h"

namespace kvrocks {

namespace {

void Pause(CommandCall& call) {
  const auto& a = call.args;
  if (a.size() < 3 || a.size() > 4) return ReplySubcommandSyntaxError(call);
  int64_t ms;
  if (!ParseInt64(a[2], &ms)) return ReplyError(call, "ERR timeout is not an integer or out of range");
  if (ms < 0) return ReplyError(call, "ERR timeout is negative");
  bool all = true;
  if (a.size() == 4) {
    if (TokenEquals(a[3], "write")) {
      all = false;
    } else if (!TokenEquals(a[3], "all")) {
      return ReplyError(call, "ERR CLIENT PAUSE mode must be WRITE or ALL");
    }
  }
  call.server->PauseClients(static_cast<int64_t>(NowMs()) + ms, all, call.conn->worker());
  reply::Ok(call.out);
}

void Reply(CommandCall& call) {
  if (call.args.size() != 3) return ReplySubcommandSyntaxError(call);
  Connection* c = call.conn;
  const std::string& mode = call.args[2];
  if (TokenEquals(mode, "on")) {
    c->reply_off = c->reply_skip = c->reply_skip_next = false;
    return reply::Ok(call.out);
  }
  if (TokenEquals(mode, "off")) {
    c->reply_off = true;
    return;
  }
  if (TokenEquals(mode, "skip")) {
    if (!c->reply_off) c->reply_skip_next = true;
    return;
  }
  ReplyError(call, kSyntaxError);
}

void Unblock(CommandCall& call) {
  const auto& a = call.args;
  if (a.size() < 3 || a.size() > 4) return ReplySubcommandSyntaxError(call);
  bool error = false;
  if (a.size() == 4) {  // the reason is checked first, as Redis does
    if (TokenEquals(a[3], "error")) {
      error = true;
    } else if (!TokenEquals(a[3], "timeout")) {
      return ReplyError(call, "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
    }
  }
  int64_t id;
  if (!IntArg(call, 2, &id)) return;
  bool unblocked = call.server->UnblockClient(static_cast<uint64_t>(id), error);
  call.conn->call_made_error_reply = unblocked && error;
  reply::Integer(call.out, unblocked ? 1 : 0);
}

void NoEvict(CommandCall& call) {
  if (call.args.size() != 3) return ReplySubcommandSyntaxError(call);
  // kvrocks never evicts keys; the flag is kept for CLIENT LIST/INFO.
  if (TokenEquals(call.args[2], "on")) {
    call.conn->no_evict = true;
  } else if (TokenEquals(call.args[2], "off")) {
    call.conn->no_evict = false;
  } else {
    return ReplyError(call, kSyntaxError);
  }
  reply::Ok(call.out);
}

void TrackingCmd(CommandCall& call) {
  const auto& a = call.args;
  Tracking::Options o;
  for (size_t j = 3; j < a.size(); j++) {
    bool more = j + 1 < a.size();
    if (TokenEquals(a[j], "redirect") && more) {
      j++;
      if (o.redirect != 0) return ReplyError(call, "ERR A client can only redirect to a single other client");
      int64_t id;
      if (!IntArg(call, j, &id)) return;
      // The target must exist now, though it may go away later.
      if (id <= 0 || (call.server->WorkerOf(static_cast<uint64_t>(id)) == nullptr &&
                      !call.server->IsListedMasterClient(static_cast<uint64_t>(id)))) {
        return ReplyError(call, "ERR The client ID you want redirect to does not exist");
      }
      o.redirect = static_cast<uint64_t>(id);
    } else if (TokenEquals(a[j], "bcast")) {
      o.bcast = true;
    } else if (TokenEquals(a[j], "optin")) {
      o.optin = true;
    } else if (TokenEquals(a[j], "optout")) {
      o.optout = true;
    } else if (TokenEquals(a[j], "noloop")) {
      o.noloop = true;
    } else if (TokenEquals(a[j], "prefix") && more) {
      o.prefixes.push_back(a[++j]);
    } else {
      return ReplyError(call, kSyntaxError);
    }
  }
  Tracking& tracking = call.server->tracking();
  if (TokenEquals(a[2], "on")) {
    std::string err = tracking.Validate(call.conn, o);
    if (!err.empty()) return ReplyError(call, err);
    tracking.Enable(call.conn, o);
  } else if (TokenEquals(a[2], "off")) {
    tracking.Disable(call.conn);
  } else {
    return ReplyError(call, kSyntaxError);
  }
  reply::Ok(call.out);
}

void Caching(CommandCall& call) {
  Connection* c = call.conn;
  if (!c->tracking) {
    return ReplyError(call, "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or "
                            "OPTOUT mode enabled");
  }
  if (TokenEquals(call.args[2], "yes")) {
    if (!c->tracking_optin) {
      return ReplyError(call, "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.");
    }
  } else if (TokenEquals(call.args[2], "no")) {
    if (!c->tracking_optout) {
      return ReplyError(call, "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.");
    }
  } else {
    return ReplyError(call, kSyntaxError);
  }
  c->tracking_caching = true;  // for the next command (or transaction)
  reply::Ok(call.out);
}

void TrackingInfo(CommandCall& call) {
  Tracking::Info info = call.server->tracking().InfoOf(call.conn);
  reply::MapHeader(call.out, 3, call.resp);
  reply::Bulk(call.out, "flags");
  reply::SetHeader(call.out, info.flags.size(), call.resp);
  for (const auto& f : info.flags) reply::Bulk(call.out, f);
  reply::Bulk(call.out, "redirect");
  reply::Integer(call.out, info.redirect);
  reply::Bulk(call.out, "prefixes");
  reply::ArrayHeader(call.out, info.prefixes.size());
  for (const auto& p : info.prefixes) reply::Bulk(call.out, p);
}

}  // namespace

bool ClientControl(CommandCall& call) {
  const std::string& sub = call.args[1];
  if (TokenEquals(sub, "pause")) {
    Pause(call);
  } else if (TokenEquals(sub, "unpause")) {
    if (call.args.size() != 2) {
      ReplySubcommandSyntaxError(call);
    } else {
      call.server->UnpauseClients();
      reply::Ok(call.out);
    }
  } else if (TokenEquals(sub, "reply")) {
    Reply(call);
  } else if (TokenEquals(sub, "unblock")) {
    Unblock(call);
  } else if (TokenEquals(sub, "no-evict")) {
    NoEvict(call);
  } else if (TokenEquals(sub, "tracking") && call.args.size() >= 3) {
    TrackingCmd(call);
  } else if (TokenEquals(sub, "caching") && call.args.size() >= 3) {
    Caching(call);
  } else if (TokenEquals(sub, "getredir") && call.args.size() == 2) {
    Tracking::Info info = call.server->tracking().InfoOf(call.conn);
    reply::Integer(call.out, info.redirect);
  } else if (TokenEquals(sub, "trackinginfo") && call.args.size() == 2) {
    TrackingInfo(call);
  } else {
    return false;
  }
  return true;
}

}  // namespace kvrocks
