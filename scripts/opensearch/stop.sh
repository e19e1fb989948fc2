#!/usr/bin/env bash
# Stop the node started by start.sh: SIGTERM (clean close), SIGKILL after a timeout. Idempotent.
#
# Environment: OPENSEARCH_PIDFILE (default scripts/opensearch/.node.pid),
#              OPENSEARCH_STOP_TIMEOUT seconds before SIGKILL (default 30, or 150 while the JVM
#              still has to write its first class-data archive: see OPENSEARCH_CDS in start.sh).
# A temp data dir made by start.sh is removed; an OPENSEARCH_DATA dir is kept.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PIDFILE="${OPENSEARCH_PIDFILE:-$HERE/.node.pid}"
MAIN=memvault.opensearch.MemvaultOpenSearchNode

say() { echo "[opensearch] $*"; }

# $PIDFILE.data (written by start.sh): data_kind=temp|keep, data_dir=, cds_dump=, cds_archive=
meta() { { sed -n "s/^$1=//p" "$PIDFILE.data" 2>/dev/null || true; } | head -n1; }

cleanup_files() { # $1 = 1 when the JVM exited on its own after TERM (so a CDS dump is complete)
  local dir dump
  dir="$(meta data_dir)"
  if [[ "$(meta data_kind)" == temp && -n "$dir" && -d "$dir" ]]; then
    rm -rf "$dir"
  fi
  dump="$(meta cds_dump)"
  if [[ -n "$dump" && -f "$dump" ]]; then
    if [[ "${1:-0}" == 1 ]]; then
      mv -f "$dump" "$(meta cds_archive)"
    else
      rm -f "$dump"
    fi
  fi
  rm -f "$PIDFILE" "$PIDFILE.data"
}

if [[ ! -f "$PIDFILE" ]]; then
  say "not running (no $PIDFILE)"
  exit 0
fi
pid="$(cat "$PIDFILE" 2>/dev/null || true)"
# Only signal the process if it is still our node (the PID may have been reused).
if [[ -z "$pid" ]] || ! kill -0 "$pid" 2>/dev/null ||
  ! grep -qa "$MAIN" "/proc/$pid/cmdline" 2>/dev/null; then
  say "not running (stale pid '${pid}')"
  cleanup_files
  exit 0
fi

if [[ -n "$(meta cds_dump)" ]]; then
  TIMEOUT="${OPENSEARCH_STOP_TIMEOUT:-150}"
  say "stopping pid $pid (TERM); it writes its class-data archive first, which takes a while"
else
  TIMEOUT="${OPENSEARCH_STOP_TIMEOUT:-30}"
  say "stopping pid $pid (TERM)"
fi
kill -TERM "$pid" 2>/dev/null || true
t0=$SECONDS
while kill -0 "$pid" 2>/dev/null && ((SECONDS - t0 < TIMEOUT)); do
  sleep 0.5
done
clean=1
if kill -0 "$pid" 2>/dev/null; then
  clean=0
  say "still alive after ${TIMEOUT}s, sending KILL"
  kill -KILL "$pid" 2>/dev/null || true
  for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
fi
if kill -0 "$pid" 2>/dev/null; then
  echo "[opensearch] could not stop pid $pid" >&2
  exit 1
fi
say "stopped in $((SECONDS - t0))s"
cleanup_files "$clean"
