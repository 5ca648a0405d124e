# Finds Debian's librocksdb-dev. Defines RocksDB::RocksDB.
#
# kvrocks links the static archive: Debian's shared library is built with
# position-independent code, so each of RocksDB's thread-local variables
# (perf and IO-stats contexts, touched on every Get/Put) is reached through a
# __tls_get_addr call, and every call into the library goes through the PLT.
# Linked into the executable, the linker turns those into direct accesses
# (bench/RESULTS.md, session 14: about 10% less CPU per pipelined SET).
find_path(ROCKSDB_INCLUDE_DIR rocksdb/db.h)
find_library(ROCKSDB_STATIC_LIBRARY NAMES librocksdb.a)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(RocksDB DEFAULT_MSG ROCKSDB_STATIC_LIBRARY ROCKSDB_INCLUDE_DIR)
if(RocksDB_FOUND AND NOT TARGET RocksDB::RocksDB)
  # What librocksdb.so links against (the compression libraries and gflags).
  set(_rocksdb_deps)
  foreach(_lib gflags snappy z bz2 lz4 zstd)
    find_library(ROCKSDB_DEP_${_lib} NAMES ${_lib} REQUIRED)
    list(APPEND _rocksdb_deps ${ROCKSDB_DEP_${_lib}})
  endforeach()
  find_package(Threads REQUIRED)
  add_library(RocksDB::RocksDB STATIC IMPORTED)
  set_target_properties(RocksDB::RocksDB PROPERTIES
    IMPORTED_LOCATION "${ROCKSDB_STATIC_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${ROCKSDB_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${_rocksdb_deps};Threads::Threads;${CMAKE_DL_LIBS}")
endif()
