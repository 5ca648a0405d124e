// SHA-256 (FIPS 180-4), for ACL passwords: Redis keeps and shows the SHA-256
// of each password in lowercase hex, never the password.
#pragma once

#include <string>
#include <string_view>

namespace kvrocks {

// 64 lowercase hex digits.
std::string Sha256Hex(std::string_view data);

}  // namespace kvrocks
