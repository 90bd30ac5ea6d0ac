#!/usr/bin/env bash
# make fleet: a release controller holding FLEET_AGENTS simulated agents (vigil-fleet), and
# what it costs. Starts the controller on a temporary data directory (SQLite, its own CA),
# mints an admin API token with `vigil-controller apitoken create`, raises the open-file
# limit, runs the simulator until it prints `connected N/N`, then `vigil-fleet measure`:
# time to connect, controller VmRSS before and after (per agent), CPU while idle,
# GET /api/agents latency, fan-out time and results lost, the simulator's own CPU and RSS.
#
# Environment: FLEET_AGENTS (1000), FLEET_CONCURRENCY (64), FLEET_IDLE_S (30),
# FLEET_LIST_REQUESTS (100), FLEET_FANOUTS (3), FLEET_CONNECT_TIMEOUT_S (900),
# FLEET_HTTP_PORT (18640), FLEET_GRPC_PORT (18641), FLEET_DIR (keep the controller's data
# and the identities there, so a rerun skips enrollment; default: a temporary directory),
# FLEET_NO_BUILD=1 (use the binaries in target/release as they are), FLEET_RESTART=1 (then
# restart the controller and time until every agent is back), RUST_LOG (controller).
# FLEET_PATROL=1 leaves patrol on (its default checks every 300 s) and then measures it for
# FLEET_PATROL_S (300) seconds: runs per second, controller CPU and VmRSS; by default the
# controller runs with --patrol=false so the idle figures stay comparable.
# FLEET_REPLICAS=N (N > 1) runs tests/benches/fleet-replicas.sh instead: N replicas on one
# PostgreSQL (it says what it needs).
set -euo pipefail

AGENTS="${FLEET_AGENTS:-1000}"
CONCURRENCY="${FLEET_CONCURRENCY:-64}"
IDLE_S="${FLEET_IDLE_S:-30}"
LIST_REQUESTS="${FLEET_LIST_REQUESTS:-100}"
FANOUTS="${FLEET_FANOUTS:-3}"
CONNECT_TIMEOUT_S="${FLEET_CONNECT_TIMEOUT_S:-900}"
HTTP_PORT="${FLEET_HTTP_PORT:-18640}"
GRPC_PORT="${FLEET_GRPC_PORT:-18641}"
CARGO="${CARGO:-cargo}"
PATROL="${FLEET_PATROL:-0}"
PATROL_S="${FLEET_PATROL_S:-300}"
patrol_args=(--patrol=false)
if [[ "$PATROL" == 1 ]]; then patrol_args=(--patrol=true); fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
if ((${FLEET_REPLICAS:-1} > 1)); then
  exec "$root/tests/benches/fleet-replicas.sh"
fi
# shellcheck source=tests/benches/fleet-lib.sh
source "$root/tests/benches/fleet-lib.sh"
fleet_prepare "$AGENTS"

if [[ -n "${FLEET_DIR:-}" ]]; then
  work="$FLEET_DIR"
  mkdir -p "$work"
  keep=1
else
  work="$(mktemp -d /tmp/vigil-fleet.XXXXXX)"
  keep=0
fi
ctl_pid=""
fleet_pid=""
cleanup() {
  if [[ -n "$fleet_pid" ]]; then kill "$fleet_pid" 2>/dev/null || true; fi
  if [[ -n "$ctl_pid" ]]; then kill "$ctl_pid" 2>/dev/null || true; fi
  wait 2>/dev/null || true
  if [[ "$keep" == 0 ]]; then rm -rf "$work"; fi
}
trap cleanup EXIT

echo "fleet: $AGENTS agents; controller data and logs in $work"
url="http://127.0.0.1:$HTTP_PORT"
# Starts the controller (log: $work/controller$1.log) and waits for /healthz.
start_controller() {
  RUST_LOG="${RUST_LOG:-info}" "$ctl" serve --data-dir "$work/data" \
    --http-listen "127.0.0.1:$HTTP_PORT" --grpc-listen "127.0.0.1:$GRPC_PORT" \
    "${patrol_args[@]}" >"$work/controller$1.log" 2>&1 &
  ctl_pid=$!
  for _ in $(seq 300); do
    if curl -fsS "$url/healthz" >/dev/null 2>&1; then return 0; fi
    if ! kill -0 "$ctl_pid" 2>/dev/null; then
      echo "fleet: the controller exited:" >&2
      tail -n 20 "$work/controller$1.log" >&2
      exit 1
    fi
    sleep 0.1
  done
}
start_controller ""
token="$("$ctl" apitoken create --role admin --name fleet-bench --data-dir "$work/data" 2>/dev/null | tail -n 1)"
sleep 2
rss_before="$(awk '/^VmRSS:/ { print $2 }' "/proc/$ctl_pid/status")"

# Emptied here, before the simulator starts: a reused FLEET_DIR holds the last run's output.
: >"$work/fleet.out"
: >"$work/fleet.log"
started="$(date +%s.%N)"
"$fleet" --url "$url" --token "$token" --agents "$AGENTS" --state-dir "$work/state" \
  --concurrency "$CONCURRENCY" >"$work/fleet.out" 2>"$work/fleet.log" &
fleet_pid=$!
# Waits until the simulator has printed `connected N/N` $1 times.
wait_connected() {
  local deadline=$(($(date +%s) + CONNECT_TIMEOUT_S))
  until (($(grep -cx "connected $AGENTS/$AGENTS" "$work/fleet.out") >= $1)); do
    if ! kill -0 "$fleet_pid" 2>/dev/null || ! kill -0 "$ctl_pid" 2>/dev/null || (($(date +%s) > deadline)); then
      echo "fleet: the agents did not all connect; last simulator log lines:" >&2
      tail -n 20 "$work/fleet.log" >&2
      echo "controller:" >&2
      tail -n 20 "$work/controller"*.log >&2
      exit 1
    fi
    sleep 0.2
  done
}
wait_connected 1
total_s="$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')"
enroll_s="$(grep -m1 -o 'enrolled=[0-9]* seconds=[0-9.]*' "$work/fleet.log" | sed 's/.*seconds=//' || true)"
if [[ -n "$enroll_s" ]]; then enroll_s="$(printf '%.1f' "$enroll_s")"; fi
connect_s="$(grep -m1 'every stream is up' "$work/fleet.log" | sed 's/.*seconds=\([0-9.]*\).*/\1/' || true)"

"$fleet" measure --url "$url" --token "$token" --controller-pid "$ctl_pid" --fleet-pid "$fleet_pid" \
  --agents "$AGENTS" --rss-before-kib "$rss_before" --connect-s "$connect_s" --idle-s "$IDLE_S" \
  --list-requests "$LIST_REQUESTS" --fanouts "$FANOUTS" --json "$work/figures.json" \
  2>>"$work/fleet.log" | tee "$work/summary.txt"
if [[ -n "$enroll_s" ]]; then enrolled="$enroll_s s"; else enrolled="skipped (identities reused)"; fi
echo "enrollment: $enrolled; from start to connected $AGENTS/$AGENTS: $total_s s"
failed="$(grep -c 'streams failed or ended' "$work/fleet.log" || true)"
echo "simulator seconds with failed or ended streams: $failed"

# Patrol on an idle fleet: every agent's host gets the default checks every 300 s (their
# first runs spread over a minute), each a read through the exec service and the audit log.
if [[ "$PATROL" == 1 ]]; then
  patrol_runs() { curl -fsS "$url/metrics" | awk '/^vigil_patrol_runs_total/ { s += $NF } END { printf "%d", s }'; }
  cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$ctl_pid/stat"; }
  echo "patrol: letting the first runs spread (60 s), then measuring for $PATROL_S s"
  sleep 60
  runs0="$(patrol_runs)"
  ticks0="$(cpu_ticks)"
  t0="$(date +%s.%N)"
  sleep "$PATROL_S"
  runs1="$(patrol_runs)"
  ticks1="$(cpu_ticks)"
  t1="$(date +%s.%N)"
  hz="$(getconf CLK_TCK)"
  rss="$(awk '/^VmRSS:/ { print $2 }' "/proc/$ctl_pid/status")"
  awk -v r0="$runs0" -v r1="$runs1" -v c0="$ticks0" -v c1="$ticks1" -v t0="$t0" -v t1="$t1" \
    -v hz="$hz" -v rss="$rss" -v agents="$AGENTS" 'BEGIN {
      s = t1 - t0
      printf "patrol: %d check runs in %.0f s = %.1f runs/s on %d agents; controller CPU %.1f%% of one core; VmRSS %.1f MiB\n",
        r1 - r0, s, (r1 - r0) / s, agents, 100 * (c1 - c0) / hz / s, rss / 1024 }' | tee -a "$work/summary.txt"
fi

if [[ "${FLEET_RESTART:-0}" == 1 ]]; then
  kill -TERM "$ctl_pid"
  wait "$ctl_pid" || true
  start_controller "-restarted"
  wait_connected 2
  back_s="$(grep 'every stream is up' "$work/fleet.log" | tail -n 1 | sed 's/.*seconds=\([0-9.]*\).*/\1/')"
  echo "after a controller restart, every agent back in $(printf '%.1f' "$back_s") s (from the first lost stream)"
fi
