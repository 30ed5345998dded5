#!/usr/bin/env bash
# Make `docker compose up` possible for tests/docker (issue 15): a Docker engine, the compose v2
# CLI plugin and the two base images compose.yaml and the Dockerfile start from.
# Idempotent; every step is skipped when its result is already there. Caches live in
# $MCB_DOCKER_CACHE (default /var/cache/mcb-docker) and Docker's own image store.
#
#   1. engine: when none answers and this runs as root on Debian, installs docker.io (dockerd,
#      containerd, runc) with apt-get and starts dockerd (log: /var/log/mcb-dockerd.log;
#      storage driver overlay2, vfs where overlay2 does not work);
#   2. compose v2 plugin: when `docker compose` is missing, builds it from its Go module
#      github.com/docker/compose/v2 (pinned below; needs Go >= 1.24 and the Go module proxy;
#      ~7 min on 2 cores, once: the binary is cached per version) into
#      /usr/local/lib/docker/cli-plugins/docker-compose;
#   3. base images: python:3.11-slim and redis:7.4-alpine are pulled; where no registry answers,
#      stand-ins are built from Debian packages (debootstrap a bookworm root, `docker import`,
#      then scripts/docker/*-standin.Dockerfile) and tagged with those names, so compose.yaml
#      and the Dockerfile stay as users run them. Stand-ins carry the label
#      org.minecraft-builder-mcp.standin.
#
# Never fails `make test`: when something cannot be provided (not root, no apt-get, no Go, ...)
# it says what and exits 0; tests/docker then skips with its own reason.
# MCB_SKIP_DOCKER=1 skips it all explicitly.
set -uo pipefail
cd "$(dirname "$0")/.."

COMPOSE_VERSION=${MCB_COMPOSE_VERSION:-v2.40.3}
CACHE=${MCB_DOCKER_CACHE:-/var/cache/mcb-docker}
PLUGIN_DIR=/usr/local/lib/docker/cli-plugins
DOCKERD_LOG=/var/log/mcb-dockerd.log
PY_IMAGE=python:3.11-slim
REDIS_IMAGE=redis:7.4-alpine
BASE_IMAGE=mcb-standin/debian:bookworm
# The Debian mirror debootstrap uses: MCB_DEBIAN_MIRROR, else the first Debian archive this machine's apt
# is configured with (deb822 .sources "URIs:" or sources.list "deb" lines; not the security archive).
apt_mirror() {
  { grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | sed 's/^URIs:[[:space:]]*//' | tr ' ' '\n'
    grep -hs '^deb[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list | sed 's/\[[^]]*\]//' | awk '{print $2}'
  } | grep -v -- '-security' | grep -m1 .
}
DEBIAN_MIRROR=${MCB_DEBIAN_MIRROR:-$(apt_mirror || true)}

say() { echo "docker-env: $*"; }
give_up() { say "skipped: $*"; say "tests/docker will skip"; exit 0; }
t0=$(date +%s)
elapsed() { echo "$(( $(date +%s) - t0 ))s"; }

[ "${MCB_SKIP_DOCKER:-0}" = 1 ] && give_up "MCB_SKIP_DOCKER=1"
command -v docker >/dev/null 2>&1 || give_up "no docker CLI on PATH"
is_root() { [ "$(id -u)" = 0 ]; }
engine_up() { timeout 10 docker info >/dev/null 2>&1; }

apt_install() {  # waits for another apt/dpkg (other installs on the same machine) instead of failing
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=900 \
    --no-install-recommends "$@" >/dev/null
}
apt_ready=0
apt_update() { [ $apt_ready = 1 ] || { apt-get update -qq -o DPkg::Lock::Timeout=900 >/dev/null && apt_ready=1; }; }

go_bin() {
  local g
  for g in "$(command -v go 2>/dev/null)" /usr/local/go/bin/go; do
    [ -n "$g" ] && [ -x "$g" ] && { echo "$g"; return 0; }
  done
  return 1
}

# ---------------------------------------------------------------- 2 (started first: slowest)
compose_ok() { timeout 20 docker compose version >/dev/null 2>&1; }
compose_cached="$CACHE/compose-$COMPOSE_VERSION/docker-compose"
compose_pid=""
build_compose() {  # runs in the background while apt and debootstrap work
  local go src
  go=$(go_bin) || { echo "no Go toolchain (need Go >= 1.24 to build docker compose $COMPOSE_VERSION)"; return 1; }
  export GOFLAGS=-mod=mod CGO_ENABLED=0
  src=$("$go" mod download -json "github.com/docker/compose/v2@$COMPOSE_VERSION" \
        | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p') || return 1
  [ -d "$src" ] || { echo "go mod download of compose $COMPOSE_VERSION failed"; return 1; }
  mkdir -p "$(dirname "$compose_cached")"
  (cd "$src" && "$go" build -trimpath \
     -ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=$COMPOSE_VERSION" \
     -o "$compose_cached.tmp" ./cmd) && mv "$compose_cached.tmp" "$compose_cached"
}
if ! compose_ok && [ ! -x "$compose_cached" ]; then
  is_root || give_up "the docker compose plugin is missing and building it into $PLUGIN_DIR needs root"
  say "building the compose plugin $COMPOSE_VERSION from its Go module (once; ~7 min on 2 cores)"
  mkdir -p "$CACHE"
  build_compose > "$CACHE/compose-build.log" 2>&1 &
  compose_pid=$!
fi

# ---------------------------------------------------------------- 1. engine
start_dockerd() {  # $1: storage driver ("" = dockerd's choice)
  local args=(--host=unix:///var/run/docker.sock)
  [ -n "$1" ] && args+=(--storage-driver="$1")
  say "starting dockerd${1:+ (storage driver $1)}; log $DOCKERD_LOG"
  nohup dockerd "${args[@]}" >>"$DOCKERD_LOG" 2>&1 </dev/null &
  echo $! > /var/run/mcb-dockerd.pid
  local i
  for i in $(seq 1 60); do engine_up && return 0; kill -0 "$(cat /var/run/mcb-dockerd.pid)" 2>/dev/null || return 1; sleep 1; done
  return 1
}
stop_our_dockerd() {
  local pid; pid=$(cat /var/run/mcb-dockerd.pid 2>/dev/null) || return 0
  kill "$pid" 2>/dev/null; for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
}
overlay_works() {  # a throw-away overlay mount in Docker's data root's file system
  local d; d=$(mktemp -d /var/lib/mcb-overlay-probe.XXXXXX) || return 1
  mkdir -p "$d"/{l,u,w,m}
  if mount -t overlay overlay -o "lowerdir=$d/l,upperdir=$d/u,workdir=$d/w" "$d/m" 2>/dev/null; then
    umount "$d/m"; rm -rf "$d"; return 0
  fi
  rm -rf "$d"; return 1
}

if ! engine_up; then
  is_root || give_up "no Docker engine answers and starting one needs root"
  if ! command -v dockerd >/dev/null 2>&1; then
    command -v apt-get >/dev/null 2>&1 || give_up "no Docker engine and no apt-get to install Debian's docker.io"
    say "installing docker.io (dockerd, containerd, runc) with apt-get"
    apt_update && apt_install docker.io iptables || give_up "apt-get install docker.io failed"
  fi
  if pgrep -x dockerd >/dev/null 2>&1; then  # started by someone else, not answering yet
    for _ in $(seq 1 30); do engine_up && break; sleep 1; done
  fi
  if ! engine_up; then
    mkdir -p /var/lib/docker
    driver=""
    overlay_works || driver=vfs
    start_dockerd "$driver" || { [ -z "$driver" ] && stop_our_dockerd && start_dockerd vfs; } \
      || give_up "dockerd did not start (see $DOCKERD_LOG)"
  fi
fi
engine_up || give_up "no Docker engine answers"
say "engine: $(docker info --format '{{.ServerVersion}}, storage driver {{.Driver}}' 2>/dev/null) ($(elapsed))"

# ---------------------------------------------------------------- 3. base images
have_image() { docker image inspect "$1" >/dev/null 2>&1; }
pull() { timeout "${MCB_PULL_TIMEOUT:-60}" docker pull -q "$1" >/dev/null 2>&1; }

build_base() {  # mcb-standin/debian:bookworm from a cached debootstrap tarball
  have_image "$BASE_IMAGE" && return 0
  local tarball="$CACHE/bookworm-minbase.tar" root
  if [ ! -s "$tarball" ]; then
    [ -n "$DEBIAN_MIRROR" ] || { say "no Debian mirror in apt's sources; set MCB_DEBIAN_MIRROR"; return 1; }
    command -v debootstrap >/dev/null 2>&1 || { apt_update && apt_install debootstrap; } || return 1
    root=$(mktemp -d "$CACHE/rootfs.XXXXXX")
    say "debootstrap bookworm (minbase) from $DEBIAN_MIRROR"
    debootstrap --variant=minbase bookworm "$root" "$DEBIAN_MIRROR" > "$CACHE/debootstrap.log" 2>&1 \
      || { rm -rf "$root"; say "debootstrap failed (see $CACHE/debootstrap.log)"; return 1; }
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
    tar -C "$root" -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
    rm -rf "$root"
  fi
  docker import --change 'CMD ["/bin/bash"]' --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    "$tarball" "$BASE_IMAGE" >/dev/null
}
standin() {  # $1 image name, $2 Dockerfile under scripts/docker
  have_image "$1" && return 0
  if pull "$1"; then say "pulled $1"; return 0; fi
  say "$1 cannot be pulled: building a stand-in from Debian packages ($2)"
  build_base || return 1
  DOCKER_BUILDKIT=0 docker build -q -t "$1" --build-arg "BASE_IMAGE=$BASE_IMAGE" \
    -f "scripts/docker/$2" scripts/docker >/dev/null
}
standin "$PY_IMAGE" python-standin.Dockerfile || give_up "no $PY_IMAGE image (pull and stand-in build failed)"
standin "$REDIS_IMAGE" redis-standin.Dockerfile || give_up "no $REDIS_IMAGE image (pull and stand-in build failed)"
say "base images: $PY_IMAGE, $REDIS_IMAGE ($(elapsed))"

# ---------------------------------------------------------------- 2. compose plugin (finish)
if ! compose_ok; then
  if [ -n "$compose_pid" ]; then
    wait "$compose_pid" || give_up "building the compose plugin failed (see $CACHE/compose-build.log)"
  fi
  [ -x "$compose_cached" ] || give_up "no compose plugin binary at $compose_cached"
  mkdir -p "$PLUGIN_DIR" && install -m 0755 "$compose_cached" "$PLUGIN_DIR/docker-compose"
  compose_ok || give_up "the compose plugin at $PLUGIN_DIR/docker-compose does not run"
fi
# Images left untagged by earlier test builds (same names, new content), only on the engine this
# script started (a CI machine), never on someone's own Docker.
if pid=$(cat /var/run/mcb-dockerd.pid 2>/dev/null) && [ "$(pgrep -x dockerd)" = "$pid" ]; then
  docker image prune -f >/dev/null 2>&1 || true
fi
say "ready: $(docker compose version 2>/dev/null) ($(elapsed))"
