#!/usr/bin/env bash
# Measures fidelity: runs LangGraph's own server API tests (langgraphjs
# libs/langgraph-api/tests/api.test.mts, with its graphs/ fixtures) against a Runledger producer and
# worker. The file expects its server at localhost:2024; LGSUITE_PORT (default 2024) moves both. Nothing of langgraphjs is kept in this
# repository: give a checkout or a bare git directory of it.
#   DATABASE_URL=… REDIS_URL=… scripts/langgraph-api-suite.sh <langgraphjs> [vitest filters…]
# Prints vitest's per-test lines and the pass count; the run's logs stay in .lgsuite/.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
src=${1:?usage: scripts/langgraph-api-suite.sh <langgraphjs checkout or git dir> [vitest filters…]}
shift
: "${DATABASE_URL:?set DATABASE_URL}" "${REDIS_URL:?set REDIS_URL}"
# Inside the repository, so the fixture graphs import the same @langchain packages Runledger runs.
work="$repo/.lgsuite"
rm -rf "$work/tests" && mkdir -p "$work"
if [ -d "$src/libs/langgraph-api/tests" ]; then cp -r "$src/libs/langgraph-api/tests" "$work/tests"
else git --git-dir="$src" archive HEAD libs/langgraph-api/tests | tar -x -C "$work" --strip-components=2; fi
port=${LGSUITE_PORT:-2024}
file=${LGSUITE_FILE:-api.test.mts}
config=langgraph.json
if [ "$file" = auth.test.mts ]; then
  config=langgraph.auth.json
  # The auth tests import LangGraph's filter matcher from its source (beside tests/, as in its repository).
  rm -rf "$work/src" && mkdir -p "$work/src/auth"
  if [ -d "$src/libs/langgraph-api/src/auth" ]; then cp "$src/libs/langgraph-api/src/auth/index.mts" "$work/src/auth/"
  else git --git-dir="$src" show HEAD:libs/langgraph-api/src/auth/index.mts >"$work/src/auth/index.mts"; fi
fi
sed -i "s#http://localhost:202[45]#http://127.0.0.1:$port#" "$work/tests/$file"
# Two packages the test file imports for code paths Runledger's run does not take (a Postgres
# inspection it skips in memory mode, and waiting for a port it only spawns in its own CI).
# Installed beside it: its own node_modules comes first when the test file resolves them.
[ -d "$work/node_modules/hono" ] || (cd "$work" && echo '{"private":true}' >package.json && npm install --silent --no-package-lock --no-save postgres@3.4.7 wait-port@1.1.0 hono@4 >/dev/null)
cat >"$work/vitest.config.mts" <<CFG
import { defineConfig } from 'vitest/config';
export default defineConfig({ test: { include: ['tests/$file'], testTimeout: 60_000, hookTimeout: 60_000 } });
CFG
schema="lgsuite_$$"
export DB_SCHEMA=$schema PORT=$port HOST=127.0.0.1 RUNLEDGER_CONFIG="$work/tests/graphs/$config" RUNLEDGER_TEST_HOOKS=1 LOG_LEVEL=${LOG_LEVEL:-warn}
cd "$repo"
npx tsx --conditions=@runledger/source packages/ledger/src/migrate-cli.ts >"$work/migrate.log" 2>&1
# Each in its own process group, so the whole tree (npx, tsx, node) stops at the end.
setsid npx tsx --conditions=@runledger/source apps/producer/src/main.ts >"$work/producer.log" 2>&1 & producer=$!
setsid npx tsx --conditions=@runledger/source apps/worker/src/main.ts >"$work/worker.log" 2>&1 & worker=$!
trap 'kill -TERM -- -$producer -$worker 2>/dev/null; wait 2>/dev/null; psql "$DATABASE_URL" -qc "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true' EXIT
for _ in $(seq 1 60); do curl -sf http://127.0.0.1:$port/ok >/dev/null || curl -sf http://127.0.0.1:$port/healthz >/dev/null && break; sleep 1; done
cd "$work" && npx vitest run --config vitest.config.mts --reporter=verbose "$@" 2>&1 | tee "$work/result.log" | grep -E '^\s+(✓|×|↓)|Tests ' || true
