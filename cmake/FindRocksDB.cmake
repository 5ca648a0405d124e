# Finds Debian's librocksdb-dev. Defines RocksDB::RocksDB.
find_path(ROCKSDB_INCLUDE_DIR rocksdb/db.h)
find_library(ROCKSDB_LIBRARY NAMES rocksdb)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(RocksDB DEFAULT_MSG ROCKSDB_LIBRARY ROCKSDB_INCLUDE_DIR)
if(RocksDB_FOUND AND NOT TARGET RocksDB::RocksDB)
  add_library(RocksDB::RocksDB UNKNOWN IMPORTED)
  set_target_properties(RocksDB::RocksDB PROPERTIES
    IMPORTED_LOCATION "${ROCKSDB_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${ROCKSDB_INCLUDE_DIR}")
endif()
