# Finds Debian's libevent-dev (core + pthreads). Defines Libevent::Libevent.
find_path(LIBEVENT_INCLUDE_DIR event2/event.h)
find_library(LIBEVENT_CORE_LIBRARY NAMES event_core)
find_library(LIBEVENT_PTHREADS_LIBRARY NAMES event_pthreads)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Libevent DEFAULT_MSG LIBEVENT_CORE_LIBRARY LIBEVENT_PTHREADS_LIBRARY LIBEVENT_INCLUDE_DIR)
if(Libevent_FOUND AND NOT TARGET Libevent::Libevent)
  add_library(Libevent::Libevent INTERFACE IMPORTED)
  set_target_properties(Libevent::Libevent PROPERTIES
    INTERFACE_LINK_LIBRARIES "${LIBEVENT_CORE_LIBRARY};${LIBEVENT_PTHREADS_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${LIBEVENT_INCLUDE_DIR}")
endif()
