#!/usr/bin/env bash
# make agent-order: writes host-agent/link-order.txt, the hot-code order the release agent
# is linked with (host-agent/build.rs; BENCHMARKS.md, "Agent size and idle memory"). It
# links the release agent with its symbols kept (the same profile, so the same symbol names), runs it under valgrind's callgrind against a debug controller (start, enrol, connect,
# discover, heartbeat for IDLE seconds while a container starts and stops every CHURN_S
# seconds (so the Docker events path and rediscovery are in the order; needs the Docker
# engine and /bin/busybox for a `FROM scratch` image, skipped without them), run READS
# host reads and one fan-out), and lists
# every function of the agent's own binary that ran, most-run first. lld then lays those
# sections out together at the start of `.text`. Needs valgrind and lld (Debian packages).
#
#   IDLE=420 READS=3 CHURN_S=60 host-agent/benches/link-order.sh
#
# Rerun it after a dependency or toolchain change (symbol hashes change with them); a
# stale file only costs idle memory, never correctness.
set -euo pipefail

IDLE="${IDLE:-420}"
READS="${READS:-3}"
CHURN_S="${CHURN_S:-60}"
HTTP_PORT="${HTTP_PORT:-18660}"
GRPC_PORT="${GRPC_PORT:-18661}"
cd "$(dirname "$0")/../.."
out="host-agent/link-order.txt"

for tool in valgrind ld.lld nm; do
  command -v "$tool" >/dev/null || { echo "link-order: $tool is needed" >&2; exit 1; }
done

echo "link-order: building the profiling agent (release, symbols kept) and a debug controller"
# shellcheck source=host-agent/benches/controller.sh
source host-agent/benches/controller.sh
VIGIL_AGENT_KEEP_SYMBOLS=1 VIGIL_AGENT_LINK_ORDER=0 \
  cargo build --profile release-agent -p vigil-agent --bin vigil-agent
cp target/release-agent/vigil-agent "$work/vigil-agent"
cargo build -p vigil-controller --bin vigil-controller
agent_bin="$work/vigil-agent"
ctl="target/debug/vigil-controller"

start_controller "$ctl"
admin="$(cat "$work/ctl/admin.token")"

echo "link-order: enrolling and running the agent under callgrind"
valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/join.cg" \
  "$agent_bin" join --url "https://127.0.0.1:$GRPC_PORT" --token "$token" \
  --ca-fingerprint "$fingerprint" --state-dir "$work/agent" >/dev/null 2>"$work/join.log"
# Valgrind knows no Landlock (nor seccomp) system calls, so under it the agent finds no
# read sandbox: --allow-unsandboxed-reads lets its reads run all the same, through the
# same code (base thread, read thread, spawn).
valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/run.cg" \
  "$agent_bin" run --state-dir "$work/agent" --allow-unsandboxed-reads 2>"$work/agent.log" &
agent="$!"
pids+=("$agent")

api() { curl -fsS -H "Authorization: Bearer $admin" "$@"; }
id=""
for _ in $(seq 300); do
  id="$(api "http://127.0.0.1:$HTTP_PORT/api/agents" 2>/dev/null |
    grep -o '"id":"[^"]*"[^}]*"connected":true' | head -n 1 | cut -d'"' -f4 || true)"
  [[ -n "$id" ]] && break
  sleep 1
done
[[ -n "$id" ]] || { echo "link-order: the agent did not connect" >&2; tail "$work/agent.log" >&2; exit 1; }
echo "link-order: agent $id connected; idle for ${IDLE}s, then $READS reads"
# A container that starts and stops now and then, as on a busy Docker host.
churn_image="vigil-order-churn:1"
churn=0
if docker info >/dev/null 2>&1 && [[ -x /bin/busybox ]]; then
  mkdir -p "$work/image/bin"
  cp /bin/busybox "$work/image/bin/busybox"
  ln -s busybox "$work/image/bin/sleep"
  printf 'FROM scratch\nCOPY . /\nCMD ["/bin/sleep", "3600"]\n' >"$work/image/Dockerfile"
  docker build -q -t "$churn_image" "$work/image" >/dev/null 2>"$work/docker-build.log" && churn=1
fi
[[ "$churn" == 1 ]] || echo "link-order: no Docker engine or busybox; the order misses container events" >&2
end=$((SECONDS + IDLE))
while ((SECONDS < end)); do
  # It stops by itself after 5 s and is removed (--rm): create, start, die, destroy.
  if [[ "$churn" == 1 ]]; then
    docker run -d --rm "$churn_image" /bin/sleep 5 >/dev/null
  fi
  left=$((end - SECONDS))
  if ((left > 0)); then sleep $((left < CHURN_S ? left : CHURN_S)); fi
done
for _ in $(seq "$READS"); do
  api -X POST -H 'Content-Type: application/json' -H 'Accept: application/json' \
    -d "{\"agent\":\"$id\",\"command\":\"uptime\"}" "http://127.0.0.1:$HTTP_PORT/api/exec" >/dev/null
done
api -X POST -H 'Content-Type: application/json' -H 'Accept: application/json' \
  -d '{"all":true,"command":"df -h /"}' "http://127.0.0.1:$HTTP_PORT/api/exec/fanout" >/dev/null
kill -TERM "$agent"
wait "$agent" || true

# Every function of the agent's binary that ran (fn= and cfn= name the functions with
# cost and the ones called), most instructions first.
nm --defined-only "$agent_bin" | awk '$2 ~ /^[tTwW]$/ {print $3}' | sort -u >"$work/defined"
for cg in "$work/join.cg" "$work/run.cg"; do
  awk '
    /^c?fn=\([0-9]+\) / { id = $1; sub(/^c?fn=/, "", id); name = $0; sub(/^c?fn=\([0-9]+\) /, "", name); names[id] = name }
    /^fn=/ { id = $1; sub(/^fn=/, "", id); cur = names[id]; next }
    /^[0-9+-]/ && cur != "" { split($0, f, " "); cost[cur] += f[2] }
    END { for (n in names) printf "%d %s\n", cost[names[n]], names[n] }
  ' "$cg"
done | sort -k2,2 | awk '{c[$2] += $1} END {for (n in c) print c[n], n}' | sort -k1,1nr |
  awk '{print $2}' | grep -Fxf "$work/defined" >"$work/order"

{
  echo "# The release agent's hot-code order (host-agent/build.rs); made by"
  echo "# host-agent/benches/link-order.sh on $(date -u +%Y-%m-%d): $(wc -l <"$work/order") functions."
  cat "$work/order"
} >"$out"
echo "link-order: wrote $out ($(wc -l <"$work/order") functions of $(wc -l <"$work/defined"))"
echo "link-order: relinking the release agent with it"
cargo build --profile release-agent -p vigil-agent --bin vigil-agent
