#!/usr/bin/env bash
# The container images for real, with the Docker engine (CI runs it after `make images`):
# the controller image runs as 65532 on a read-only root filesystem with its state in a
# named volume and becomes healthy through its own health check; an agent on this machine
# enrolls to it and runs a read; a restart of the container keeps the CA, the admin token
# and the agent's enrollment; the agent image, given this engine's socket read-only and a
# join token, enrolls on first start and reports this engine's containers, and keeps its
# identity when its container is recreated; and run as the Kubernetes DaemonSet runs it
# (this machine's / at /host, VIGIL_HOST_ROOT), its host reads see this machine's files and
# not its shadow file. Everything it makes is removed at the end.
set -euo pipefail
TEST_NAME="images test"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=deploy/testlib.sh
source deploy/testlib.sh

agent_bin=target/release-agent/vigil-agent
[[ -x "$agent_bin" ]] || die "$agent_bin is missing (make images)"
for image in vigil-controller:latest vigil-agent:latest; do
  docker image inspect "$image" >/dev/null 2>&1 || die "no image $image (make images)"
done

run_id="vigil-images-test-$$"
ctrl="$run_id-controller"
docker_agent="$run_id-agent"
node_agent="$run_id-node"
work="$(mktemp -d)"
host_agent_pid=""
cleanup() {
  [[ -z "$host_agent_pid" ]] || kill "$host_agent_pid" 2>/dev/null || true
  docker rm -f "$ctrl" "$docker_agent" "$node_agent" >/dev/null 2>&1 || true
  docker volume rm "$run_id-data" "$run_id-agent-state" "$run_id-node-state" >/dev/null 2>&1 || true
  [[ -z "${marker_file:-}" ]] || rm -f "$marker_file"
  docker network rm "$run_id" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

step "what the images are"
for image in vigil-controller vigil-agent; do
  printf '%s: %s bytes\n' "$image" "$(docker image inspect --format '{{.Size}}' "$image:latest")"
done
[[ "$(docker image inspect --format '{{.Config.User}}' vigil-controller:latest)" == "65532:65532" ]] \
  || die "the controller image does not run as 65532:65532"
docker image inspect --format '{{json .Config.Healthcheck.Test}}' vigil-controller:latest | grep -q readyz \
  || docker image inspect --format '{{json .Config.Healthcheck.Test}}' vigil-controller:latest | grep -q '"ready"' \
  || die "the controller image has no health check"
if docker run --rm --entrypoint /bin/sh vigil-controller:latest -c true >/dev/null 2>&1; then
  die "the controller image has a shell"
fi

step "the controller image: read-only root, state in a volume"
docker network create "$run_id" >/dev/null
docker volume create "$run_id-data" >/dev/null
start_controller() {
  docker run -d --name "$ctrl" --network "$run_id" --network-alias vigil-gateway \
    --read-only --tmpfs /tmp -v "$run_id-data:/var/lib/vigil" \
    -p 127.0.0.1::8640 -p 127.0.0.1::8641 vigil-controller:latest >/dev/null
}
start_controller
published() { docker port "$ctrl" "$1/tcp" | head -n1 | sed 's/.*://'; }
BASE="http://127.0.0.1:$(published 8640)"
wait_ready "$BASE" || { docker logs "$ctrl"; die "the controller did not become ready"; }
for _ in $(seq 1 60); do
  [[ "$(docker inspect --format '{{.State.Health.Status}}' "$ctrl")" == healthy ]] && break
  sleep 1
done
[[ "$(docker inspect --format '{{.State.Health.Status}}' "$ctrl")" == healthy ]] \
  || die "the container's health check never passed: $(docker inspect --format '{{json .State.Health}}' "$ctrl")"
[[ "$(docker exec "$ctrl" vigil-controller --version)" == vigil-controller* ]] || die "no version"
admin_token() { docker cp "$ctrl:/var/lib/vigil/admin.token" - | tar -xO; }
ADMIN="$(admin_token)"
[[ -n "$ADMIN" ]] || die "no admin token in the volume"
fingerprint="$(docker exec "$ctrl" vigil-controller ca show)"
if docker exec "$ctrl" sh -c true >/dev/null 2>&1; then die "a shell runs in the controller container"; fi

step "an agent on this machine enrolls to the container and runs a read"
gateway="https://127.0.0.1:$(published 8641)"
"$agent_bin" join --url "$gateway" --state-dir "$work/agent" \
  --token "$(docker exec "$ctrl" vigil-controller token create)" --ca-fingerprint "$fingerprint"
"$agent_bin" run --state-dir "$work/agent" >"$work/agent.log" 2>&1 &
host_agent_pid=$!
host_agent="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["agent_id"])' "$work/agent/identity.json")"
wait_connected "$host_agent" || { cat "$work/agent.log"; die "the host's agent did not connect"; }
[[ "$(read_on "$host_agent" 'uname -s')" == Linux* ]] || die "the read did not run"

step "restart: the state stays in the volume"
docker stop "$ctrl" >/dev/null
docker rm "$ctrl" >/dev/null
start_controller
BASE="http://127.0.0.1:$(published 8640)"
wait_ready "$BASE" || { docker logs "$ctrl"; die "the controller did not come back"; }
[[ "$(admin_token)" == "$ADMIN" ]] || die "the admin token changed"
[[ "$(docker exec "$ctrl" vigil-controller ca show)" == "$fingerprint" ]] || die "the CA changed"
# The gateway's port is published anew; the agent is restarted on it with the same identity.
kill "$host_agent_pid"
wait "$host_agent_pid" 2>/dev/null || true
sed -i "s#$gateway#https://127.0.0.1:$(published 8641)#" "$work/agent/identity.json"
"$agent_bin" run --state-dir "$work/agent" >"$work/agent2.log" 2>&1 &
host_agent_pid=$!
wait_connected "$host_agent" || { cat "$work/agent2.log"; die "the enrolled agent was not known after the restart"; }
[[ "$(read_on "$host_agent" 'uname -s')" == Linux* ]] || die "the read did not run after the restart"

step "the agent image on this engine's socket"
docker volume create "$run_id-agent-state" >/dev/null
start_docker_agent() {
  docker run -d --name "$docker_agent" --hostname "$docker_agent" --network "$run_id" \
    -v /var/run/docker.sock:/var/run/docker.sock:ro -v "$run_id-agent-state:/var/lib/vigil-agent" \
    -e VIGIL_AGENT_JOIN_URL=https://vigil-gateway:8641 \
    -e VIGIL_AGENT_JOIN_CA_FINGERPRINT="$fingerprint" \
    -e VIGIL_AGENT_TOKEN="$1" vigil-agent:latest >/dev/null
}
start_docker_agent "$(docker exec "$ctrl" vigil-controller token create --uses 1)"
container_agent="$(wait_agent_named "$docker_agent")"
[[ -n "$container_agent" ]] || { docker logs "$docker_agent"; die "the agent container did not enroll"; }
wait_connected "$container_agent" || { docker logs "$docker_agent"; die "the agent container did not connect"; }
for _ in $(seq 1 60); do reports_container "$container_agent" "$ctrl" && break; sleep 1; done
reports_container "$container_agent" "$ctrl" || { api "$BASE/api/resources"; docker logs "$docker_agent"; die "the controller's container is not in the inventory"; }
echo "the agent container reports this engine's containers"

step "the agent container, recreated, keeps its identity (its token had one use)"
docker rm -f "$docker_agent" >/dev/null
start_docker_agent "spent-token-is-not-used"
wait_connected "$container_agent" || { docker logs "$docker_agent"; die "the recreated agent container did not reconnect"; }
[[ "$(agent_named "$docker_agent")" == "$container_agent" ]] || die "a second agent enrolled"

step "the agent image as the DaemonSet runs it: host reads in the host's root (/host)"
# This machine's / is mounted read-only at /host, with the host's processes and the
# capabilities the read sandbox needs (deploy/kubernetes/base/agent-daemonset.yaml).
marker_file="$(mktemp -p /var/tmp vigil-host-root-XXXXXX)"
marker="host root marker $$"
printf '%s' "$marker" >"$marker_file"
docker run -d --name "$node_agent" --hostname "$node_agent" --network "$run_id" --pid host \
  --cap-drop ALL --cap-add SYS_ADMIN --cap-add SETPCAP --cap-add SYS_CHROOT --cap-add CHOWN \
  --cap-add DAC_READ_SEARCH \
  --security-opt apparmor=unconfined --read-only --tmpfs /tmp --tmpfs /run/vigil-agent \
  -v /:/host:ro -v "$run_id-node-state:/var/lib/vigil-agent" -e VIGIL_HOST_ROOT=/host \
  -e VIGIL_AGENT_JOIN_URL=https://vigil-gateway:8641 \
  -e VIGIL_AGENT_JOIN_CA_FINGERPRINT="$fingerprint" \
  -e VIGIL_AGENT_TOKEN="$(docker exec "$ctrl" vigil-controller token create --uses 1)" \
  vigil-agent:latest >/dev/null
node_agent_id="$(wait_agent_named "$node_agent")"
[[ -n "$node_agent_id" ]] || { docker logs "$node_agent"; die "the node agent did not enroll"; }
wait_connected "$node_agent_id" || { docker logs "$node_agent"; die "the node agent did not connect"; }
out="$(read_on "$node_agent_id" "cat $marker_file")" \
  || { docker logs "$node_agent"; die "a host read in the host's root failed: $out"; }
[[ "$out" == "$marker" ]] || die "the host read printed '$out', not the host's file"
if out="$(read_on "$node_agent_id" "cat /etc/shadow")" && [[ -n "$out" ]]; then
  die "the host's /etc/shadow was readable through the node agent"
fi
host_os="$(sed -n 's/^PRETTY_NAME=//p' /etc/os-release | tr -d '"')"
reported_os=""
for _ in $(seq 1 30); do
  reported_os="$(api "$BASE/api/agents/$node_agent_id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["facts"].get("os_release", ""))')"
  [[ "$reported_os" == "$host_os" ]] && break
  sleep 1
done
[[ "$reported_os" == "$host_os" ]] || die "the node agent reports OS '$reported_os', not this machine's '$host_os'"
echo "a host read through the agent image saw the host's file and not its shadow file; it reports the host's OS ($host_os)"
echo "images test passed"
