# shellcheck shell=bash
# Sourced by the agent's bench scripts (idle-rss.sh, link-order.sh): a scratch directory
# `work`, the `pids` killed on exit, and start_controller CONTROLLER, which serves a
# controller on HTTP_PORT and GRPC_PORT with its state in $work/ctl and sets `token` (a
# join token) and `fingerprint` (the CA pin).
work="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

start_controller() {
  "$1" serve --data-dir "$work/ctl" --http-listen "127.0.0.1:$HTTP_PORT" \
    --grpc-listen "127.0.0.1:$GRPC_PORT" --local-agent=false 2>"$work/ctl.log" &
  pids+=("$!")
  for _ in $(seq 150); do
    [[ -s "$work/ctl/admin.token" ]] && curl -fs "http://127.0.0.1:$HTTP_PORT/healthz" >/dev/null && break
    sleep 0.2
  done
  # shellcheck disable=SC2034  # used by the scripts that source this one
  token="$("$1" token create --data-dir "$work/ctl" | tail -n 1)"
  # shellcheck disable=SC2034
  fingerprint="$("$1" ca show --data-dir "$work/ctl" | tail -n 1)"
}
