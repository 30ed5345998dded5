#!/bin/sh
# redis-standin: like the official image, a bare `redis-server ...` listens on every interface
# with protected mode off (only the compose network reaches it; no port is published).
set -e
if [ "${1:-}" = "redis-server" ]; then
  shift
  set -- redis-server --bind 0.0.0.0 --protected-mode no "$@"
fi
exec "$@"
