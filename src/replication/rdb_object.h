// Conversion between RDB objects and kvrocks keys, through the types layer:
// loading an RDB and RESTORE write keys with RestoreObject; DUMP serializes a
// key with DumpObject.
#pragma once

#include <string>
#include <string_view>

#include "replication/rdb_reader.h"
#include "types/database.h"

namespace kvrocks::rdb {

// Writes obj under key (which must be absent) with an absolute expiry (0 = none).
// Module values and empty collections are not written (NotSupported / OK). Hash
// fields whose TTL has passed are written too, as Redis 7.4 loads them. A past key
// expiry deletes the key (Database::SetExpire) unless db's context leaves expiry to
// a master (Context::set_expiry_left_to_master: a replica's load or stream).
Status RestoreObject(Database* db, std::string_view key, const Object& obj, uint64_t expire_ms);

// Redis' DUMP payload of key; NotFound if absent.
Status DumpObject(Database* db, std::string_view key, std::string* payload);

// Appends key's value in RDB object form (type byte, then the value: a DUMP
// payload without its version and CRC64) to *body. lk is the live key as
// Database::Load found it; *version is raised to the RDB version the value needs.
Status SerializeObject(Database* db, std::string_view key, const LoadedKey& lk, std::string* body, int* version);

}  // namespace kvrocks::rdb
