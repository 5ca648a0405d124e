#include "stats/stats.h"

namespace kvrocks {

void Stats::Reset() {
  total_connections_received = 0;
  total_commands_processed = 0;
  rejected_connections = 0;
  keyspace_hits = 0;
  keyspace_misses = 0;
  expired_keys = 0;
  net_input_bytes = 0;
  net_output_bytes = 0;
  total_error_replies = 0;
}

}  // namespace kvrocks
