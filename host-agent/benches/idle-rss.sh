#!/usr/bin/env bash
# The idle agent's resident memory (BENCHMARKS.md, "Agent size and idle memory"): a
# controller, one agent enrolled with a join token that connects, heartbeats and discovers
# Docker (when the engine answers), and runs nothing. Prints VmRSS, RssAnon, RssFile and the thread count
# every STEP seconds for IDLE seconds. The controller's build does not matter for this
# figure; the agent should be the shipping build (`cargo build --profile release-agent`).
#
#   AGENT=target/release-agent/vigil-agent CONTROLLER=target/debug/vigil-controller \
#     IDLE=300 STEP=60 host-agent/benches/idle-rss.sh
set -euo pipefail

AGENT="${AGENT:-target/release-agent/vigil-agent}"
CONTROLLER="${CONTROLLER:-target/debug/vigil-controller}"
IDLE="${IDLE:-600}"
STEP="${STEP:-60}"
HTTP_PORT="${HTTP_PORT:-18640}"
GRPC_PORT="${GRPC_PORT:-18641}"

# shellcheck source=host-agent/benches/controller.sh
source "$(dirname "$0")/controller.sh"
start_controller "$CONTROLLER"
"$AGENT" join --url "https://127.0.0.1:$GRPC_PORT" --token "$token" \
  --ca-fingerprint "$fingerprint" --state-dir "$work/agent" >/dev/null 2>&1
"$AGENT" run --state-dir "$work/agent" 2>"$work/agent.log" &
agent="$!"
pids+=("$agent")
sleep 5
agents="$(curl -fs -H "Authorization: Bearer $(cat "$work/ctl/admin.token")" \
  "http://127.0.0.1:$HTTP_PORT/api/agents")"
grep -q '"connected":true' <<<"$agents" || { echo "the agent did not connect: $agents" >&2; exit 1; }
echo "connected; discovery: $(grep -o 'capabilities=[^ ]*' "$work/agent.log" | tail -n 1)"

echo "agent $(stat -c %s "$AGENT") bytes: $AGENT"
for ((t = 0; t <= IDLE; t += STEP)); do
  ((t == 0)) || sleep "$STEP"
  printf 't=%4ss ' "$((t + 5))"
  grep -E '^(VmRSS|RssAnon|RssFile|Threads)' "/proc/$agent/status" | tr -s ' \t' ' ' | tr '\n' ' '
  echo
done
