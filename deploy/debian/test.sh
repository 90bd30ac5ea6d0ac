#!/usr/bin/env bash
# The Debian packages for real, on this machine (as root; CI runs it after `make deb`):
# lintian, install with dpkg, check the files, the user, permissions and units, start the
# installed controller as the vigil user with the installed configuration (without
# systemd when this machine has none), enroll the installed agent to it and run a read,
# then purge both and check that nothing is left. Refuses to run where either package is
# already installed, or where the `vigil` user exists without it.
set -euo pipefail
TEST_NAME="deb test"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=deploy/testlib.sh
source deploy/testlib.sh
((EUID == 0)) || die "must run as root (it installs and purges the packages)"
newest() { find target/debian -maxdepth 1 -name "$1" -printf '%T@ %p\n' 2>/dev/null | sort -n | tail -n1 | cut -d' ' -f2-; }
controller_deb="$(newest 'vigil-controller_*.deb')"
agent_deb="$(newest 'vigil-agent_*.deb')"
[[ -n "$controller_deb" && -n "$agent_deb" ]] || die "no packages in target/debian (make deb)"
for pkg in vigil-controller vigil-agent; do
  if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'ok installed'; then
    die "$pkg is installed on this machine; the test installs and purges its own"
  fi
done
getent passwd vigil >/dev/null && die "a vigil user exists already"

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  dpkg --purge vigil-agent vigil-controller >/dev/null 2>&1 || true
}
trap cleanup EXIT

step "lintian"
lintian --fail-on error,warning --suppress-tags-from-file deploy/debian/lintian-suppressed \
  "$controller_deb" "$agent_deb"

step "install"
dpkg -i "$controller_deb" "$agent_deb"

step "files, user, permissions, units"
getent passwd vigil >/dev/null || die "no vigil user"
[[ "$(getent passwd vigil | cut -d: -f7)" == */nologin || "$(getent passwd vigil | cut -d: -f7)" == /bin/false ]] \
  || die "the vigil user has a login shell"
[[ "$(stat -c '%U:%G %a' /var/lib/vigil)" == "vigil:vigil 700" ]] \
  || die "/var/lib/vigil is $(stat -c '%U:%G %a' /var/lib/vigil), not vigil:vigil 700"
[[ "$(stat -c '%U:%G %a' /etc/vigil/controller.toml)" == "root:vigil 640" ]] \
  || die "/etc/vigil/controller.toml is $(stat -c '%U:%G %a' /etc/vigil/controller.toml)"
dpkg-query -W -f='${Conffiles}\n' vigil-controller | grep -q '/etc/vigil/controller.toml' \
  || die "/etc/vigil/controller.toml is not a conffile"
for bin in /usr/bin/vigil-controller /usr/bin/vigil-agent; do
  [[ -x "$bin" ]] || die "$bin is missing"
done
units=()
for unit in vigil-controller.service vigil-agent.service; do
  path="$(dpkg -L "${unit%.service}" | grep "/systemd/system/$unit\$" || true)"
  [[ -n "$path" ]] || die "$unit is not in its package"
  units+=("$path")
done
for setting in NoNewPrivileges=yes ProtectSystem=strict ReadWritePaths=/var/lib/vigil PrivateTmp=yes User=vigil; do
  grep -qx "$setting" "${units[0]}" || die "the controller's unit lacks $setting"
done
diff <(/usr/bin/vigil-agent install --print --exe /usr/bin/vigil-agent) "${units[1]}" \
  || die "the agent's unit is not the one \`vigil-agent install\` renders"
if command -v systemd-analyze >/dev/null; then
  SYSTEMD_LOG_LEVEL=err systemd-analyze verify --man=no "${units[@]}" \
    || die "systemd-analyze verify found problems in the units"
else
  echo "systemd-analyze is not installed: units not verified"
fi

step "the installed controller, as vigil, with the installed configuration"
http_port="$(free_port)"
grpc_port="$(free_port)"
log="$(mktemp)"
runuser -u vigil -- /usr/bin/vigil-controller serve --config /etc/vigil/controller.toml \
  --http-listen "127.0.0.1:$http_port" --grpc-listen "127.0.0.1:$grpc_port" >"$log" 2>&1 &
pids+=($!)
BASE="http://127.0.0.1:$http_port"
wait_ready "$BASE" || { cat "$log"; die "the controller did not become ready"; }
[[ -s /var/lib/vigil/admin.token ]] || die "no admin token in /var/lib/vigil"
[[ "$(stat -c '%U %a' /var/lib/vigil/admin.token)" == "vigil 600" ]] || die "admin.token is not vigil 600"
ADMIN="$(cat /var/lib/vigil/admin.token)"

step "enroll the installed agent and run a read"
join_token="$(runuser -u vigil -- /usr/bin/vigil-controller token create --data-dir /var/lib/vigil 2>/dev/null)"
fingerprint="$(runuser -u vigil -- /usr/bin/vigil-controller ca show --data-dir /var/lib/vigil)"
/usr/bin/vigil-agent join --url "https://127.0.0.1:$grpc_port" --token "$join_token" \
  --ca-fingerprint "$fingerprint"
agent_log="$(mktemp)"
/usr/bin/vigil-agent run >"$agent_log" 2>&1 &
pids+=($!)
agent="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["agent_id"])' /var/lib/vigil-agent/identity.json)"
wait_connected "$agent" || { cat "$agent_log"; die "the agent did not connect"; }
out="$(read_on "$agent" 'uname -s')" || die "the read did not run: $out"
[[ "$out" == Linux* ]] || die "the read printed $out"
echo "read through the installed packages: $out"
for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
pids=()

step "purge"
dpkg --purge vigil-agent vigil-controller
for path in /usr/bin/vigil-controller /usr/bin/vigil-agent /etc/vigil /var/lib/vigil \
  /var/lib/vigil-agent "${units[@]}"; do
  [[ ! -e "$path" ]] || die "$path is left after purge"
done
getent passwd vigil >/dev/null && die "the vigil user is left after purge"
getent group vigil >/dev/null && die "the vigil group is left after purge"
echo "deb test passed"
