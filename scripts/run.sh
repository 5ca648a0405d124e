#!/usr/bin/env bash
# Installs missing Debian packages, builds, and starts kvrocks with kvrocks.conf
# (data under ./data). Extra arguments are passed to kvrocks, e.g. --port 6380.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
exec build/kvrocks --conf kvrocks.conf "$@"
