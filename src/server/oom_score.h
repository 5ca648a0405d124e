// Redis' oom-score-adj: the process' score for the kernel's OOM killer, set from
// oom-score-adj-values by the server's role.
#pragma once

#include "config/config.h"

namespace kvrocks {

// Writes /proc/self/oom_score_adj as Redis' setOOMScoreAdj does: with
// oom-score-adj absolute, the role's value (master or replica); with yes
// (relative), that value plus the score the process had before kvrocks first
// changed it; with no, that earlier score again if kvrocks had changed it.
// Clamped to [-1000, 1000]. False, with a warning in the log, when /proc refuses
// (an unprivileged process may not lower its score). Thread-safe.
bool ApplyOomScoreAdj(const Config& cfg, bool replica);

}  // namespace kvrocks
