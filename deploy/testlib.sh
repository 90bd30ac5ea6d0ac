# Shared by the install tests (deploy/debian/test.sh, deploy/images/test.sh,
# deploy/compose/test.sh): messages, waiting for a controller, and its HTTP API with the
# admin token. Source it after setting TEST_NAME; callers set ADMIN and BASE (the API's
# URL) before calling api and the waits.
# shellcheck shell=bash

die() { printf '%s: %s\n' "${TEST_NAME:-test}" "$*" >&2; exit 1; }
step() { printf '\n--- %s\n' "$*"; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Waits up to 60 s until GET $1/readyz answers 200.
wait_ready() {
  local _
  for _ in $(seq 1 120); do
    curl -sf "$1/readyz" >/dev/null && return 0
    sleep 0.5
  done
  return 1
}

# curl on the API with the admin token (JSON in and out); fails on a non-2xx answer.
api() { curl -sf -H "authorization: Bearer $ADMIN" -H 'content-type: application/json' "$@"; }

# Waits up to 60 s until the agent with id $1 is connected.
wait_connected() {
  local _
  for _ in $(seq 1 120); do
    api "$BASE/api/agents" | python3 -c '
import json, sys
sys.exit(0 if any(a["connected"] and a["id"] == sys.argv[1] for a in json.load(sys.stdin)) else 1)
' "$1" && return 0
    sleep 0.5
  done
  return 1
}

# The id of the agent whose host name is $1 (empty when none).
agent_named() {
  api "$BASE/api/agents" | python3 -c '
import json, sys
print(next((a["id"] for a in json.load(sys.stdin) if a["hostname"] == sys.argv[1]), ""))
' "$1"
}

# Whether agent $1 reports the container named $2: a resource of that name with a path
# through that agent (several agents on one engine give one resource several paths).
reports_container() {
  BASE="$BASE" ADMIN="$ADMIN" python3 -c '
import json, os, sys, urllib.parse, urllib.request
agent, name = sys.argv[1], sys.argv[2]
def get(path):
    request = urllib.request.Request(os.environ["BASE"] + path,
        headers={"authorization": "Bearer " + os.environ["ADMIN"]})
    with urllib.request.urlopen(request) as answer:
        return json.load(answer)
for found in get("/api/resources?q=" + urllib.parse.quote(name)):
    if found.get("name") != name:
        continue
    chain = get("/api/resources/" + urllib.parse.quote(found["id"], safe="")).get("chain", [])
    if any(step.get("agent") == agent for step in chain):
        sys.exit(0)
sys.exit(1)
' "$1" "$2"
}

# Waits up to 60 s until an agent with host name $1 has enrolled; prints its id (empty when
# none did).
wait_agent_named() {
  local _ id=""
  for _ in $(seq 1 60); do
    id="$(agent_named "$1")"
    [[ -n "$id" ]] && break
    sleep 1
  done
  printf '%s' "$id"
}

# Runs the read $2 on agent $1 and prints its output; fails unless it exited 0.
read_on() {
  api -X POST -H 'accept: application/json' "$BASE/api/exec" -d "{\"agent\":\"$1\",\"command\":\"$2\"}" | python3 -c '
import json, sys
out = json.load(sys.stdin)
print(out.get("stdout", ""), end="")
sys.exit(0 if out.get("exit_code") == 0 else 1)
'
}
