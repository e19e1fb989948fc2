#!/usr/bin/env bash
# Smoke-test a running node (start.sh) for what memvault's search adapter needs:
#   - the `english` analyzer (analysis-common): "running migrations" -> run, migrat
#   - function_score + Painless script_score over doc['updated_at'].value and params.now
#     (lang-painless), with boost_mode multiply, checked against the ranking formula
#   - highlight (core)
# Usage: scripts/opensearch/smoke.sh [URL]   (default $MEMVAULT_TEST_OPENSEARCH_URL or
# http://127.0.0.1:${OPENSEARCH_PORT:-9200}). Exit 0 when every check passes.
set -euo pipefail

URL="${1:-${MEMVAULT_TEST_OPENSEARCH_URL:-http://127.0.0.1:${OPENSEARCH_PORT:-9200}}}"
IDX="memvault-smoke-$$"
J='Content-Type: application/json'
NOW="$(date +%s)"
OLD=$((NOW - 60 * 86400))

req() { # METHOD PATH [BODY]
  curl -sS -m 30 -X "$1" "$URL$2" -H "$J" ${3:+-d "$3"}
}
trap 'req DELETE "/$IDX" >/dev/null 2>&1 || true' EXIT

echo "== create index $IDX (english-analyzed text fields)"
req PUT "/$IDX" '{
  "settings": {"number_of_shards": 1, "number_of_replicas": 0},
  "mappings": {"properties": {
    "path": {"type": "text", "analyzer": "english"},
    "title": {"type": "text", "analyzer": "english"},
    "tags": {"type": "text", "analyzer": "english"},
    "body": {"type": "text", "analyzer": "english"},
    "updated_at": {"type": "double"},
    "inbound_links": {"type": "integer"}}}}'
echo

echo "== _analyze 'running migrations' with the field's analyzer"
analyze="$(req POST "/$IDX/_analyze" '{"field": "body", "text": "running migrations"}')"
echo "$analyze"

echo "== index two docs"
req PUT "/$IDX/_doc/1" "{\"path\":\"ops/db.md\",\"title\":\"Database migrations\",\"tags\":\"ops\",\"body\":\"We are running migrations nightly.\",\"updated_at\":$NOW,\"inbound_links\":3}"
echo
req PUT "/$IDX/_doc/2?refresh=true" "{\"path\":\"notes/old.md\",\"title\":\"Old notes\",\"tags\":\"misc\",\"body\":\"A migration ran last month; running it again.\",\"updated_at\":$OLD,\"inbound_links\":0}"
echo

MM='{"multi_match": {"query": "running migrations", "fields": ["path^2", "title^3", "tags^2", "body"]}}'
SCRIPT="double ageDays = Math.max(0.0, params.now - doc['updated_at'].value) / 86400.0; double recency = 1.0 / (1.0 + ageDays / params.half_life); long n = doc['inbound_links'].size() == 0 ? 0 : doc['inbound_links'].value; double links = n / (n + params.sat); return 1.0 + params.rw * recency + params.lw * links;"
echo "== plain multi_match (relevance only)"
plain="$(req POST "/$IDX/_search" "{\"query\": $MM}")"
echo "== function_score(multi_match, painless script_score) + highlight"
scored="$(req POST "/$IDX/_search" "{
  \"query\": {\"function_score\": {
    \"query\": $MM,
    \"functions\": [{\"script_score\": {\"script\": {\"lang\": \"painless\", \"source\": \"$SCRIPT\",
      \"params\": {\"now\": $NOW, \"half_life\": 30.0, \"sat\": 5.0, \"rw\": 0.25, \"lw\": 0.25}}}}],
    \"boost_mode\": \"multiply\"}},
  \"highlight\": {\"fields\": {\"title\": {}, \"body\": {}}}}")"

python3 - "$analyze" "$plain" "$scored" "$NOW" <<'PY'
import json
import sys

analyze, plain, scored = (json.loads(a) for a in sys.argv[1:4])
now = float(sys.argv[4])
tokens = [t["token"] for t in analyze.get("tokens", [])]
print("english tokens:", tokens)
assert tokens == ["run", "migrat"], tokens
for resp in (plain, scored):
    assert "error" not in resp, json.dumps(resp)[:2000]
rel = {h["_id"]: h["_score"] for h in plain["hits"]["hits"]}
print(json.dumps(scored["hits"]["hits"], indent=1))
assert len(scored["hits"]["hits"]) == 2, scored["hits"]
for h in scored["hits"]["hits"]:
    src = h["_source"]
    age = max(0.0, now - src["updated_at"]) / 86400.0
    n = src["inbound_links"]
    mult = 1.0 + 0.25 / (1.0 + age / 30.0) + 0.25 * n / (n + 5.0)
    want = rel[h["_id"]] * mult
    print(f"doc {h['_id']}: relevance={rel[h['_id']]:.6f} multiplier={mult:.6f} "
          f"expected={want:.6f} got={h['_score']:.6f}")
    assert abs(h["_score"] - want) <= 1e-5 * max(1.0, want), (h["_score"], want)
    hl = h.get("highlight", {})
    assert any("<em>" in frag for frags in hl.values() for frag in frags), hl
print("SMOKE OK: english analyzer, painless function_score, highlight")
PY
