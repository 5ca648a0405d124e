#pragma once

namespace kvrocks {

// The Redis version whose command semantics kvrocks implements; reported as
// redis_version so that clients enable the matching features.
inline constexpr char kRedisVersion[] = "7.0.0";
inline constexpr char kKvrocksVersion[] = "0.1.0";

}  // namespace kvrocks
