#!/usr/bin/env bash
# Runs every test: starts the local OpenSearch node the AWS tier needs, runs pytest,
# stops the node. Where Java or Maven is missing, the AWS tier is skipped and this
# says so plainly; under CI=true a missing node is a failure, never a skip.
set -uo pipefail
cd "$(dirname "$0")/.."

export OPENSEARCH_PORT="${OPENSEARCH_PORT:-9260}"
export OPENSEARCH_PIDFILE="${OPENSEARCH_PIDFILE:-$PWD/scripts/opensearch/.test-node.pid}"
ci="$(echo "${CI:-}" | tr '[:upper:]' '[:lower:]')"

# The node's own CPU, printed as it stops (the suite's speed is CPU on two cores).
node_cpu() {
  local pid stat hz
  pid="$(cat "$OPENSEARCH_PIDFILE" 2>/dev/null || true)"
  stat="$(cat "/proc/$pid/stat" 2>/dev/null || true)"
  [[ -n "$pid" && -n "$stat" ]] || return 0
  hz="$(getconf CLK_TCK)"
  read -r -a f <<<"${stat##*) }"
  echo "[opensearch] node CPU: $(((f[11] + f[12]) / hz)) s (user+sys)" >&2
}
stop_node() { node_cpu; bash scripts/opensearch/stop.sh >/dev/null 2>&1 || true; }

bash scripts/opensearch/start.sh
status=$?
if [ "$status" -eq 0 ]; then
  trap stop_node EXIT
  export MEMVAULT_TEST_OPENSEARCH_URL="http://127.0.0.1:$OPENSEARCH_PORT"
elif [ "$status" -eq 3 ]; then
  if [ "$ci" = "true" ]; then
    echo "CI: the OpenSearch node is required (see the message above)" >&2
    exit 1
  fi
  echo "NOTE: the AWS backend tier (DynamoDB/S3 on moto + OpenSearch) is SKIPPED: see above." >&2
else
  echo "the OpenSearch node failed to start (see the log above)" >&2
  exit 1
fi

# Bytecode is cached (outside the tree), even where PYTHONDONTWRITEBYTECODE is set: without
# it every xdist worker, and every process a test starts (the CLI, MCP stdio, the cold
# starts, job and parsing workers), compiled memvault and rewrote the tests' asserts again
# (collection alone: 15 s of CPU a worker against 8 s cached).
export PYTHONPYCACHEPREFIX="${PYTHONPYCACHEPREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/memvault/pycache}"
unset PYTHONDONTWRITEBYTECODE

# Three workers on two cores (pytest-xdist; PYTEST_WORKERS=0 runs in one process): much
# of the suite waits on sockets, moto and the OpenSearch node, and a third worker keeps
# the cores busy meanwhile (3,712 tests: 291 s against 326 s with two); the 25 slowest
# tests at the end, so a regression in the suite's own speed shows.
# --dist loadgroup: the browser tests are one group, run on one worker (tests/conftest.py);
# every other test is a group of its own, handed out as workers free up.
dist=()
[ "${PYTEST_WORKERS:-3}" != "0" ] && dist=(--dist loadgroup)
.venv/bin/pytest -n "${PYTEST_WORKERS:-3}" "${dist[@]}" --durations=25 "$@"
