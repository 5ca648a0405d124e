// SHA-1 (FIPS 180-1), for script ids: EVAL/EVALSHA name a script by the SHA-1
// of its body, in lowercase hex, as Redis does.
#pragma once

#include <string>
#include <string_view>

namespace kvrocks {

// 40 lowercase hex digits.
std::string Sha1Hex(std::string_view data);

}  // namespace kvrocks
