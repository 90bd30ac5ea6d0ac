#!/usr/bin/env bash
# make soak: a release controller holding SOAK_AGENTS simulated agents for SOAK_MINUTES,
# in SOAK_GROUPS vigil-fleet processes. Every SOAK_FANOUT_S a fan-out of `uname -s` goes
# to all of them; every SOAK_WAVE_S one group is killed and started again (a reconnecting
# wave of a tenth of the fleet); halfway through the controller is restarted once. Every
# SOAK_SAMPLE_S the controller's VmRSS, open file descriptors and connected agents are
# sampled. Prints the samples (samples.tsv), every fan-out (fanouts.tsv), how long each
# wave and the restart took to be all back, and a summary: memory and descriptors at the
# start, end and peak, results lost (targets without a result), fan-outs with failures.
#
# Environment: SOAK_AGENTS (10000), SOAK_GROUPS (10), SOAK_MINUTES (30), SOAK_FANOUT_S (30),
# SOAK_WAVE_S (120), SOAK_SAMPLE_S (10), SOAK_HTTP_PORT (18740), SOAK_GRPC_PORT (18741),
# SOAK_DIR (keep data, identities and logs there; default: a temporary directory),
# SOAK_NO_BUILD=1 (use target/release as it is).
set -euo pipefail

AGENTS="${SOAK_AGENTS:-10000}"
GROUP_COUNT="${SOAK_GROUPS:-10}"
MINUTES="${SOAK_MINUTES:-30}"
FANOUT_S="${SOAK_FANOUT_S:-30}"
WAVE_S="${SOAK_WAVE_S:-120}"
SAMPLE_S="${SOAK_SAMPLE_S:-10}"
HTTP_PORT="${SOAK_HTTP_PORT:-18740}"
GRPC_PORT="${SOAK_GRPC_PORT:-18741}"
PER=$((AGENTS / GROUP_COUNT))
cd "$(dirname "$0")/../.."

if [[ "${SOAK_NO_BUILD:-0}" != 1 ]]; then
  cargo build --release -p vigil-controller -p vigil-tests --bin vigil-controller --bin vigil-fleet
fi
ctl="$PWD/target/release/vigil-controller"
fleet="$PWD/target/release/vigil-fleet"
ulimit -n "$(ulimit -Hn)"
need=$((AGENTS + 1024))
if (($(ulimit -n) < need)); then
  echo "soak: the open-file limit $(ulimit -n) is below $need" >&2
  exit 1
fi

work="${SOAK_DIR:-$(mktemp -d /tmp/vigil-soak.XXXXXX)}"
mkdir -p "$work"
url="http://127.0.0.1:$HTTP_PORT"
ctl_pid=""
declare -a pids
cleanup() {
  for pid in "${pids[@]}" "$ctl_pid"; do
    if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid" 2>/dev/null || true; fi
  done
  wait 2>/dev/null || true
}
trap cleanup EXIT

start_controller() {
  RUST_LOG=warn "$ctl" serve --data-dir "$work/data" \
    --http-listen "127.0.0.1:$HTTP_PORT" --grpc-listen "127.0.0.1:$GRPC_PORT" \
    --rate-fanout-per-s 0 >>"$work/controller.log" 2>&1 &
  ctl_pid=$!
  for _ in $(seq 300); do
    if curl -fsS "$url/healthz" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  echo "soak: the controller did not start" >&2
  exit 1
}

# Starts group $1 (its output file is emptied first).
start_group() {
  : >"$work/fleet-$1.out"
  "$fleet" --url "$url" --token "$token" --agents "$PER" --state-dir "$work/state-$1" \
    --hostname-prefix "soak$1" >"$work/fleet-$1.out" 2>>"$work/fleet-$1.log" &
  pids[$1]=$!
}

# How many times group $1 printed `connected PER/PER`.
connected_lines() { grep -cx "connected $PER/$PER" "$work/fleet-$1.out" || true; }

# Waits until every group has printed the line more times than in the array named $1.
wait_all_back() {
  local -n before=$1
  local deadline=$(($(date +%s) + 600))
  for g in $(seq 0 $((GROUP_COUNT - 1))); do
    until (($(connected_lines "$g") > before[g])); do
      if (($(date +%s) > deadline)); then
        echo "soak: group $g did not come back" >&2
        return 1
      fi
      sleep 0.2
    done
  done
}

start_controller
token="$("$ctl" apitoken create --role admin --name soak --data-dir "$work/data" 2>/dev/null | tail -n 1)"
declare -a zero
for g in $(seq 0 $((GROUP_COUNT - 1))); do
  # shellcheck disable=SC2034 # read through a nameref in wait_all_back
  zero[g]=0
  start_group "$g"
done
wait_all_back zero
echo "soak: $AGENTS agents connected in $GROUP_COUNT groups; running $MINUTES min in $work"

printf 'seconds\trss_kib\tfds\tconnected\n' >"$work/samples.tsv"
printf 'seconds\tduration_ms\ttargets\tresults\tok\tfailed\trefused\toffline\n' >"$work/fanouts.tsv"
: >"$work/events.txt"
start=$(date +%s)
end=$((start + MINUTES * 60))
next_sample=$start next_fanout=$start next_wave=$((start + WAVE_S)) restart_at=$((start + MINUTES * 30))
restarted=0 wave=0
while (($(date +%s) < end)); do
  now=$(date +%s)
  if ((now >= next_sample)); then
    rss="$(awk '/^VmRSS:/ { print $2 }' "/proc/$ctl_pid/status")"
    fds="$(find "/proc/$ctl_pid/fd" -mindepth 1 -maxdepth 1 | wc -l)"
    conn="$(curl -fsS -H "authorization: Bearer $token" "$url/api/agents" \
      | python3 -c 'import json,sys; print(sum(a["connected"] for a in json.load(sys.stdin)))' || echo -1)"
    printf '%s\t%s\t%s\t%s\n' $((now - start)) "$rss" "$fds" "$conn" >>"$work/samples.tsv"
    next_sample=$((now + SAMPLE_S))
  fi
  if ((now >= next_fanout)); then
    curl -fsS -H "authorization: Bearer $token" -H 'accept: application/json' \
      -H 'content-type: application/json' -d '{"all":true,"command":"uname -s","timeout_s":20}' \
      "$url/api/exec/fanout" \
      | python3 -c 'import json,sys
a=json.load(sys.stdin); s=a["summary"]
print("\t".join(str(x) for x in [s["duration_ms"], s["targets"], len(a["results"]), s["ok"], s["failed"], s["refused"], s["offline"]]))' \
      | sed "s/^/$((now - start))\t/" >>"$work/fanouts.tsv" || echo "$((now - start)) fan-out failed" >>"$work/events.txt"
    next_fanout=$((now + FANOUT_S))
  fi
  if ((now >= next_wave)); then
    g=$((wave % GROUP_COUNT))
    kill -TERM "${pids[g]}"
    wait "${pids[g]}" 2>/dev/null || true
    t0=$(date +%s.%N)
    start_group "$g"
    until (($(connected_lines "$g") >= 1)); do sleep 0.2; done
    echo "$((now - start)) wave $wave: group $g ($PER agents) back in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s" >>"$work/events.txt"
    wave=$((wave + 1))
    next_wave=$(($(date +%s) + WAVE_S))
  fi
  if ((restarted == 0 && now >= restart_at)); then
    declare -a counts
    for g2 in $(seq 0 $((GROUP_COUNT - 1))); do
      # shellcheck disable=SC2034 # read through a nameref in wait_all_back
      counts[g2]=$(connected_lines "$g2")
    done
    t0=$(date +%s.%N)
    kill -TERM "$ctl_pid"
    wait "$ctl_pid" 2>/dev/null || true
    start_controller
    wait_all_back counts
    echo "$((now - start)) controller restarted: all $AGENTS agents back in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s" >>"$work/events.txt"
    restarted=1
  fi
  sleep 1
done

echo "== samples (seconds, controller VmRSS KiB, open fds, connected agents)"
cat "$work/samples.tsv"
echo "== fan-outs"
cat "$work/fanouts.tsv"
echo "== events"
cat "$work/events.txt"
python3 - "$work" <<'EOF'
import csv, sys
work = sys.argv[1]
rows = list(csv.DictReader(open(f"{work}/samples.tsv"), delimiter="\t"))
fans = list(csv.DictReader(open(f"{work}/fanouts.tsv"), delimiter="\t"))
rss = [int(r["rss_kib"]) for r in rows]
fds = [int(r["fds"]) for r in rows]
lost = sum(int(f["targets"]) - int(f["results"]) for f in fans)
failed = sum(int(f["failed"]) + int(f["refused"]) for f in fans)
print(f"== summary: {len(rows)} samples, {len(fans)} fan-outs")
print(f"controller RSS: first {rss[0]/1024:.1f} MiB, last {rss[-1]/1024:.1f} MiB, peak {max(rss)/1024:.1f} MiB")
print(f"controller fds: first {fds[0]}, last {fds[-1]}, peak {max(fds)}")
print(f"results lost over all fan-outs: {lost}; failed or refused: {failed}")
EOF
