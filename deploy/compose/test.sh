#!/usr/bin/env bash
# The compose files for real, with Debian's docker-compose (CI runs it after `make images`):
# `config` validates both (and compose.yaml refuses to start without a PostgreSQL
# password); the SQLite variant runs from our image, answers /readyz, and its `agent`
# profile enrolls an agent for this engine that connects and reports its containers.
# (PostgreSQL's image cannot be pulled here; the controller's own tests cover PostgreSQL
# on Debian's server.) Everything it starts is removed at the end.
set -euo pipefail
TEST_NAME="compose test"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=deploy/testlib.sh
source deploy/testlib.sh

command -v docker-compose >/dev/null || die "docker-compose is not installed (Debian: apt-get install docker-compose)"
for image in vigil-controller:latest vigil-agent:latest; do
  docker image inspect "$image" >/dev/null 2>&1 || die "no image $image (make images)"
done
dir=deploy/compose
# An empty settings file, so that a developer's own deploy/compose/.env plays no part.
no_env="$(mktemp)"

step "config validates both files"
POSTGRES_PASSWORD=example docker-compose -f "$dir/compose.yaml" config -q
if out="$(env -u POSTGRES_PASSWORD docker-compose --env-file "$no_env" -f "$dir/compose.yaml" config -q 2>&1)"; then
  die "compose.yaml validated without POSTGRES_PASSWORD"
fi
grep -q POSTGRES_PASSWORD <<<"$out" || die "the missing password is not named: $out"
docker-compose -f "$dir/compose.sqlite.yaml" config -q
# The example .env is what the files expect.
POSTGRES_PASSWORD=example docker-compose --env-file "$dir/.env.example" -f "$dir/compose.yaml" config -q

step "the SQLite variant runs"
project="vigil-compose-test-$$"
export VIGIL_API_PORT VIGIL_GATEWAY_PORT VIGIL_GATEWAY_BIND=127.0.0.1
VIGIL_API_PORT="$(free_port)"
VIGIL_GATEWAY_PORT="$(free_port)"
compose() { docker-compose --env-file "$no_env" -p "$project" -f "$dir/compose.sqlite.yaml" "$@"; }
cleanup() {
  compose --profile agent down -v --remove-orphans >/dev/null 2>&1 || true
  rm -f "$no_env"
}
trap cleanup EXIT
compose up -d controller
BASE="http://127.0.0.1:$VIGIL_API_PORT"
wait_ready "$BASE" || { compose logs controller; die "the controller did not become ready"; }
controller="$(compose ps -q controller)"
ADMIN="$(docker cp "$controller:/var/lib/vigil/admin.token" - | tar -xO)"
[[ -n "$ADMIN" ]] || die "no admin token in the data volume"
curl -sf "$BASE/readyz" >/dev/null || die "/readyz does not answer"

step "the agent profile enrolls an agent for this engine"
export VIGIL_AGENT_JOIN_CA_FINGERPRINT VIGIL_AGENT_TOKEN VIGIL_AGENT_HOSTNAME="$project-agent"
VIGIL_AGENT_JOIN_CA_FINGERPRINT="$(compose exec -T controller vigil-controller ca show)"
VIGIL_AGENT_TOKEN="$(compose exec -T controller vigil-controller token create)"
compose --profile agent up -d agent
agent="$(wait_agent_named "$VIGIL_AGENT_HOSTNAME")"
[[ -n "$agent" ]] || { compose logs agent; die "the agent did not enroll"; }
wait_connected "$agent" || { compose logs agent; die "the agent did not connect"; }
controller_name="$(docker inspect --format '{{.Name}}' "$controller" | sed 's#^/##')"
for _ in $(seq 1 60); do reports_container "$agent" "$controller_name" && break; sleep 1; done
reports_container "$agent" "$controller_name" || { compose logs agent; die "the controller's container is not in the agent's inventory"; }
echo "compose test passed"
