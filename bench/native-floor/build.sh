#!/usr/bin/env bash
# Builds the native FUSE floor (bench/native-floor/floor.c) to $1 (default: bench/native-floor/floor).
# Needs gcc and the libfuse 2 headers (Debian: apt-get install -y gcc libfuse-dev).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/floor}"
if ! pkg-config --exists fuse; then
  echo "native floor: the libfuse 2 headers are missing (apt-get install -y libfuse-dev)" >&2
  exit 1
fi
gcc -O2 -Wall -Wextra -o "$out" "$here/floor.c" $(pkg-config --cflags --libs fuse)
echo "$out"
