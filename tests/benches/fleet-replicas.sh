#!/usr/bin/env bash
# make fleet FLEET_REPLICAS=N: N release controller replicas (docs/replicas.md) on a fresh
# schema of one PostgreSQL, holding FLEET_AGENTS simulated agents (vigil-fleet) spread over
# their gateways, with Debian's haproxy (when installed) in front of their HTTP APIs. Then:
# time to connect and each replica's memory; `vigil-fleet measure` through haproxy (or the
# first replica): GET /api/agents latency and fan-outs to every agent, each through one
# replica; the p50 of a read on an agent the first replica holds against one it forwards
# to another replica; and, after SIGKILL of the last replica, the time until every agent
# is connected again.
#
# Environment: FLEET_REPLICAS (3), FLEET_DATABASE_URL (postgres://…, required; a schema
# vigil_fleet_<pid> is made there and dropped at the end), FLEET_AGENTS (1000),
# FLEET_CONCURRENCY (64), FLEET_IDLE_S (30), FLEET_LIST_REQUESTS (100), FLEET_FANOUTS (3),
# FLEET_EXEC_REQUESTS (200), FLEET_CONNECT_TIMEOUT_S (900), FLEET_HTTP_PORT (18640; replica
# i uses +i), FLEET_GRPC_PORT (18660, +i), FLEET_CLUSTER_PORT (18680, +i), FLEET_LB_PORT
# (18639), FLEET_NO_BUILD=1, RUST_LOG (controllers). The replicas run without the exec
# rate limit (--rate-exec-per-s 0), so the timed reads are not refused.
set -euo pipefail

REPLICAS="${FLEET_REPLICAS:-3}"
AGENTS="${FLEET_AGENTS:-1000}"
CONCURRENCY="${FLEET_CONCURRENCY:-64}"
IDLE_S="${FLEET_IDLE_S:-30}"
LIST_REQUESTS="${FLEET_LIST_REQUESTS:-100}"
FANOUTS="${FLEET_FANOUTS:-3}"
EXEC_REQUESTS="${FLEET_EXEC_REQUESTS:-200}"
CONNECT_TIMEOUT_S="${FLEET_CONNECT_TIMEOUT_S:-900}"
HTTP_PORT="${FLEET_HTTP_PORT:-18640}"
GRPC_PORT="${FLEET_GRPC_PORT:-18660}"
CLUSTER_PORT="${FLEET_CLUSTER_PORT:-18680}"
LB_PORT="${FLEET_LB_PORT:-18639}"
CARGO="${CARGO:-cargo}"

die() { printf 'fleet: %s\n' "$*" >&2; exit 1; }
[[ -n "${FLEET_DATABASE_URL:-}" ]] \
  || die "FLEET_REPLICAS=$REPLICAS needs FLEET_DATABASE_URL=postgres://USER:PASS@HOST/DB (the replicas share it; a fresh schema is made there)"
((REPLICAS >= 2)) || die "FLEET_REPLICAS must be at least 2 here"
command -v psql >/dev/null || die "psql is needed to make the schema (Debian: postgresql-client)"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
# shellcheck source=tests/benches/fleet-lib.sh
source "$root/tests/benches/fleet-lib.sh"
fleet_prepare "$AGENTS"

work="$(mktemp -d /tmp/vigil-fleet-replicas.XXXXXX)"
schema="vigil_fleet_$$"
pids=()
fleet_pid=""
lb_pid=""
cleanup() {
  for pid in "$fleet_pid" "$lb_pid" "${pids[@]}"; do
    if [[ -n "$pid" ]]; then kill "$pid" 2>/dev/null || true; fi
  done
  wait 2>/dev/null || true
  psql "$FLEET_DATABASE_URL" -qc "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

psql "$FLEET_DATABASE_URL" -qc "CREATE SCHEMA $schema" || die "cannot make schema $schema"
sep='?'
[[ "$FLEET_DATABASE_URL" == *'?'* ]] && sep='&'
db_url="${FLEET_DATABASE_URL}${sep}options=-c%20search_path%3D$schema"
"$ctl" secrets init --dir "$work/secrets" >/dev/null

endpoints=""
for ((i = 0; i < REPLICAS; i++)); do
  endpoints+="${endpoints:+,}127.0.0.1:$((GRPC_PORT + i))"
done
echo "fleet: $AGENTS agents on $REPLICAS replicas; logs in $work"

start_replica() {
  local i="$1"
  RUST_LOG="${RUST_LOG:-info}" "$ctl" serve --data-dir "$work/data$i" \
    --secrets-dir "$work/secrets" --database-url "$db_url" \
    --http-listen "127.0.0.1:$((HTTP_PORT + i))" --grpc-listen "127.0.0.1:$((GRPC_PORT + i))" \
    --cluster-listen "127.0.0.1:$((CLUSTER_PORT + i))" --gateway-endpoints "$endpoints" \
    --rate-exec-per-s 0 >"$work/replica$i.log" 2>&1 &
  pids[i]=$!
  for _ in $(seq 300); do
    if curl -fsS "http://127.0.0.1:$((HTTP_PORT + i))/readyz" >/dev/null 2>&1; then return 0; fi
    kill -0 "${pids[i]}" 2>/dev/null || { tail -n 20 "$work/replica$i.log" >&2; die "replica $i exited"; }
    sleep 0.1
  done
  die "replica $i did not become ready"
}
for ((i = 0; i < REPLICAS; i++)); do start_replica "$i"; done
token="$("$ctl" apitoken create --role admin --name fleet-bench --data-dir "$work/data0" \
  --database-url "$db_url" 2>/dev/null | tail -n 1)"
sleep 2
rss_before="$(awk '/^VmRSS:/ { print $2 }' "/proc/${pids[0]}/status")"

url="http://127.0.0.1:$HTTP_PORT"
if command -v haproxy >/dev/null; then
  {
    printf 'global\n  maxconn 4096\ndefaults\n  mode http\n  timeout connect 2s\n'
    printf '  timeout client 120s\n  timeout server 120s\n  retries 3\n  option redispatch\n'
    printf 'frontend api\n  bind 127.0.0.1:%s\n  default_backend vigil\n' "$LB_PORT"
    printf 'backend vigil\n  balance roundrobin\n  option httpchk GET /readyz\n'
    for ((i = 0; i < REPLICAS; i++)); do
      printf '  server r%s 127.0.0.1:%s check inter 1s\n' "$i" "$((HTTP_PORT + i))"
    done
  } >"$work/haproxy.cfg"
  haproxy -db -f "$work/haproxy.cfg" >"$work/haproxy.log" 2>&1 &
  lb_pid=$!
  sleep 2
  url="http://127.0.0.1:$LB_PORT"
  echo "fleet: measuring through haproxy at $url"
else
  echo "fleet: haproxy is not installed; measuring through the first replica"
fi

gateways=()
for ((i = 0; i < REPLICAS; i++)); do gateways+=(--gateway "https://127.0.0.1:$((GRPC_PORT + i))"); done
: >"$work/fleet.out"
started="$(date +%s.%N)"
"$fleet" --url "http://127.0.0.1:$HTTP_PORT" --token "$token" --agents "$AGENTS" \
  --state-dir "$work/state" --concurrency "$CONCURRENCY" "${gateways[@]}" \
  >"$work/fleet.out" 2>"$work/fleet.log" &
fleet_pid=$!
wait_connected() {
  local deadline=$(($(date +%s) + CONNECT_TIMEOUT_S))
  until (($(grep -cx "connected $AGENTS/$AGENTS" "$work/fleet.out") >= $1)); do
    if ! kill -0 "$fleet_pid" 2>/dev/null || (($(date +%s) > deadline)); then
      tail -n 20 "$work/fleet.log" >&2
      die "the agents did not all connect"
    fi
    sleep 0.2
  done
}
wait_connected 1
total_s="$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')"
connect_s="$(grep -m1 'every stream is up' "$work/fleet.log" | sed 's/.*seconds=\([0-9.]*\).*/\1/' || true)"
echo "connected $AGENTS agents over $REPLICAS replicas: ${connect_s:-?} s of streams (${total_s} s with enrollment)"
sleep 5
for ((i = 0; i < REPLICAS; i++)); do
  rss="$(awk '/^VmRSS:/ { print $2 }' "/proc/${pids[i]}/status")"
  held="$(curl -fsS -H "Authorization: Bearer $token" "http://127.0.0.1:$((HTTP_PORT + i))/api/cluster" \
    | python3 -c 'import json,sys; v=json.load(sys.stdin); print(next(r["agents_held"] for r in v["replicas"] if r["id"]==v["replica"]))')"
  echo "replica $i: VmRSS $((rss / 1024)) MiB, holds $held agents"
done

"$fleet" measure --url "$url" --token "$token" --controller-pid "${pids[0]}" --fleet-pid "$fleet_pid" \
  --agents "$AGENTS" --rss-before-kib "$rss_before" --connect-s "${connect_s:-0}" --idle-s "$IDLE_S" \
  --list-requests "$LIST_REQUESTS" --fanouts "$FANOUTS" --json "$work/figures.json" \
  2>>"$work/fleet.log"

# A read on agent 0 (dialled replica 0 first) and on agent 1 (replica 1), both asked of
# replica 0: the second is forwarded.
read -r local_agent remote_agent < <(python3 -c '
import json,sys
ids=[i["agent_id"] for i in json.load(open(sys.argv[1]))["identities"]]
print(ids[0], ids[1])' "$work/state/fleet.json")
p50() {
  local agent="$1"
  for ((n = 0; n < EXEC_REQUESTS; n++)); do
    curl -fsS -o /dev/null -w '%{time_total}\n' -H "Authorization: Bearer $token" \
      -H 'content-type: application/json' -H 'accept: application/json' \
      -d "{\"agent\":\"$agent\",\"command\":\"uptime\"}" "http://127.0.0.1:$HTTP_PORT/api/exec"
  done | sort -n | awk '{ v[NR] = $1 } END { printf "%.3f", v[int((NR + 1) / 2)] * 1000 }'
}
local_ms="$(p50 "$local_agent")"
remote_ms="$(p50 "$remote_agent")"
echo "read p50 through replica 0 ($EXEC_REQUESTS each): agent held there $local_ms ms, agent held by replica 1 (forwarded) $remote_ms ms"

last=$((REPLICAS - 1))
held="$(curl -fsS -H "Authorization: Bearer $token" "http://127.0.0.1:$((HTTP_PORT + last))/api/cluster" \
  | python3 -c 'import json,sys; v=json.load(sys.stdin); print(next(r["agents_held"] for r in v["replicas"] if r["id"]==v["replica"]))')"
kill -KILL "${pids[last]}"
wait "${pids[last]}" 2>/dev/null || true
pids[last]=""
wait_connected 2
back_s="$(grep 'every stream is up' "$work/fleet.log" | tail -n 1 | sed 's/.*seconds=\([0-9.]*\).*/\1/')"
echo "after SIGKILL of replica $last (holding $held agents), every agent connected again in $(printf '%.1f' "$back_s") s (from the first lost stream)"
