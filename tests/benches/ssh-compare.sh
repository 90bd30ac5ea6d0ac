#!/usr/bin/env bash
# The OpenSSH side of the agent-link benchmark: a fresh `ssh localhost true` (p50/p99 over
# RUNS connections) and `ssh localhost 'head -c 1G /dev/zero' > /dev/null` (MB/s).
# Installs openssh-server from Debian's packages when missing and runs a private sshd on
# 127.0.0.1:PORT with a throw-away key; nothing in /etc/ssh is changed.
set -euo pipefail

RUNS="${RUNS:-1000}"
PORT="${PORT:-2222}"
BYTES="${BYTES:-1073741824}"

if ! command -v sshd >/dev/null 2>&1 && [[ ! -x /usr/sbin/sshd ]]; then
  echo "installing openssh-server" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends openssh-server openssh-client >/dev/null \
    || { apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends openssh-server openssh-client >/dev/null; }
fi

work="$(mktemp -d)"
cleanup() {
  if [[ -f "$work/sshd.pid" ]]; then kill "$(cat "$work/sshd.pid")" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

ssh-keygen -q -t ed25519 -N '' -f "$work/host_key"
ssh-keygen -q -t ed25519 -N '' -f "$work/client_key"
mkdir -p "$work/home"
cp "$work/client_key.pub" "$work/authorized_keys"
chmod 600 "$work/authorized_keys"
mkdir -p /run/sshd
cat >"$work/sshd_config" <<CONF
Port $PORT
ListenAddress 127.0.0.1
HostKey $work/host_key
PidFile $work/sshd.pid
AuthorizedKeysFile $work/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
CONF
/usr/sbin/sshd -f "$work/sshd_config"
sleep 0.5

ssh_cmd=(ssh -q -p "$PORT" -i "$work/client_key" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes 127.0.0.1)
"${ssh_cmd[@]}" true

: >"$work/times"
for _ in $(seq "$RUNS"); do
  start=$(date +%s%N)
  "${ssh_cmd[@]}" true
  end=$(date +%s%N)
  echo $(((end - start) / 1000)) >>"$work/times"
done
sort -n "$work/times" >"$work/sorted"
p50=$(awk -v n="$RUNS" 'NR == int((n - 1) * 0.5 + 1.5) { print $1 / 1000 }' "$work/sorted")
p99=$(awk -v n="$RUNS" 'NR == int((n - 1) * 0.99 + 1.5) { print $1 / 1000 }' "$work/sorted")
echo "ssh localhost true (fresh connection, $RUNS runs): p50 ${p50} ms, p99 ${p99} ms"

start=$(date +%s%N)
"${ssh_cmd[@]}" "head -c $BYTES /dev/zero" >/dev/null
end=$(date +%s%N)
awk -v b="$BYTES" -v ns="$((end - start))" 'BEGIN { printf "ssh stream %d MiB: %.1f s, %.0f MB/s\n", b / 1048576, ns / 1e9, b / (ns / 1e9) / 1e6 }'
