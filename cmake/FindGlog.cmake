# Finds Debian's libgoogle-glog-dev. Defines Glog::Glog.
find_path(GLOG_INCLUDE_DIR glog/logging.h)
find_library(GLOG_LIBRARY NAMES glog)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Glog DEFAULT_MSG GLOG_LIBRARY GLOG_INCLUDE_DIR)
if(Glog_FOUND AND NOT TARGET Glog::Glog)
  add_library(Glog::Glog UNKNOWN IMPORTED)
  set_target_properties(Glog::Glog PROPERTIES
    IMPORTED_LOCATION "${GLOG_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${GLOG_INCLUDE_DIR}")
endif()
