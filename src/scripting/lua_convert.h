// Conversions between Lua values and RESP, with Redis 7.0's rules (see
// "Conversion between Lua and Redis data types" in the Redis docs).
#pragma once

#include <string>
#include <string_view>

struct lua_State;

namespace kvrocks::scripting {

// Appends the reply of the Lua value at idx, shaped for protocol resp (2/3):
// string → bulk; number → integer (truncated); true → 1 (#t if the script
// chose RESP3 with redis.setresp, as Redis decides by the script's protocol);
// false/nil → null; {err=} → error; {ok=} → status; {double=}, {big_number=},
// {verbatim_string=}, {map=}, {set=}; other tables → array up to the first nil.
void LuaToResp(lua_State* L, int idx, int resp, int script_resp, std::string* out);

// Pushes the Lua value of the RESP reply at reply[*pos] and advances *pos:
// integer → number; bulk → string (null → false, or nil under RESP3);
// status → {ok=}; error → {err="CODE msg"}; array → table; RESP3 types as
// {map=}, {set=}, {double=}, {big_number=}, {verbatim_string=}, booleans.
void RespToLua(lua_State* L, std::string_view reply, size_t* pos);

// Pushes {err=...} as Redis' luaPushError does: "-CODE text" keeps its code
// (without the '-'), any other msg gets "ERR "; trailing CR/LF are dropped.
void PushErrorTable(lua_State* L, std::string_view msg);

// An error reply: "-" + msg, CR/LF mapped to spaces.
void AppendError(std::string* out, std::string_view msg);

}  // namespace kvrocks::scripting
