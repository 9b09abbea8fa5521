#!/usr/bin/env bash
# Start or stop a local Docker engine (Debian's docker.io) that needs no bridge and no iptables:
# every container runs on the host network. The data root persists, so images built once
# (the debootstrap base, see scripts/base-image.sh) are reused by the next run.
#   scripts/docker-engine.sh start   exit 0 when an engine answers (ours or one already running)
#   scripts/docker-engine.sh stop    stop the engine this script started
set -euo pipefail

root="${ESTEIRA_DOCKER_ROOT:-/var/lib/esteira-docker}"
run="${ESTEIRA_DOCKER_RUN:-/run/esteira-docker}"
pidfile="$run/dockerd.pid"
log="$root/dockerd.log"
docker="${DOCKER:-docker}"

answers() { "$docker" info >/dev/null 2>&1; }

ours() { [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

start() {
  if answers; then
    return 0
  fi
  if ! command -v dockerd >/dev/null; then
    echo "docker-engine: dockerd is not installed (scripts/install-system-deps.sh installs" \
         "docker.io)" >&2
    return 1
  fi
  if [ "$(id -u)" -ne 0 ]; then
    echo "docker-engine: dockerd needs root" >&2
    return 1
  fi
  if ours; then
    echo "docker-engine: dockerd (pid $(cat "$pidfile")) runs but does not answer; see $log" >&2
    return 1
  fi
  mkdir -p "$root" "$run"
  # No bridge, no NAT rules: containers join the host network (loopback only in our files).
  setsid dockerd --bridge=none --iptables=false --ip-masq=false \
    --data-root "$root/data" --exec-root "$run/exec" --pidfile "$pidfile" \
    --host unix:///var/run/docker.sock >>"$log" 2>&1 </dev/null &
  for _ in $(seq 120); do
    if answers; then
      return 0
    fi
    sleep 0.5
  done
  echo "docker-engine: dockerd did not answer within 60 s; last lines of $log:" >&2
  tail -n 20 "$log" >&2
  return 1
}

stop() {
  if ! ours; then
    return 0
  fi
  local pid
  pid=$(cat "$pidfile")
  kill -TERM "$pid"
  # dockerd stops its containers and its containerd before it exits.
  for _ in $(seq 120); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.5
  done
  echo "docker-engine: dockerd (pid $pid) still running after 60 s" >&2
  return 1
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
