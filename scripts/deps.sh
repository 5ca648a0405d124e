#!/usr/bin/env bash
# Installs the Debian 12 packages kvrocks needs to build and test (only the missing ones).
set -euo pipefail
pkgs=(cmake make g++ pkg-config librocksdb-dev libjemalloc-dev libgoogle-glog-dev libgflags-dev libgtest-dev
      libsnappy-dev liblz4-dev libzstd-dev libbz2-dev zlib1g-dev liburing-dev libevent-dev
      liblua5.1-0-dev lua-cjson-dev lua-bitop-dev)
if [ "${1:-}" = "--test" ]; then
  pkgs+=(redis-server redis-tools python3 python3-pip clang libclang-rt-14-dev iproute2)
  # node-redis client tests; a node installed otherwise (with its own npm) will do.
  command -v node >/dev/null && command -v npm >/dev/null || pkgs+=(nodejs npm)
  # go-redis client tests (go 1.18 or later); a go installed otherwise will do.
  command -v go >/dev/null || pkgs+=(golang-go)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
