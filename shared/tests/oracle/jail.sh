#!/bin/sh
# Runs one command in a throw-away root; called by the write oracle (main.rs) inside
# `unshare --mount --pid --net --uts --ipc --fork`, so every mount below vanishes with the
# namespace. Arguments: RUN_DIR SECONDS COMMAND. RUN_DIR is a fresh host directory; the
# results land in it: status, stderr, upper (the overlay's upper layer, which must stay
# empty), scratch (what appeared in the tmpfs /dev, /run and /tmp), hostname, and net
# (every connect(2) the command and its children made, traced by strace).
set -eu
run=$1 seconds=$2 command=$3
layer=$run/layer
root=$layer/root

mount --make-rprivate /
# The overlay's layers live on a tmpfs of this namespace: the host never sees them.
mount -t tmpfs -o mode=700,size=512m oracle-layer "$layer"
mkdir "$layer/upper" "$layer/work" "$root"
mount -t overlay oracle -o "lowerdir=/,upperdir=$layer/upper,workdir=$layer/work" "$root"

# Kernel interfaces read-only: a write there fails with EROFS, which the oracle reports.
mount -t proc -o ro,nosuid,nodev,noexec proc "$root/proc"
mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$root/sys"

# A minimal /dev: no block devices, nothing that reaches the host but the harmless ones.
mount -t tmpfs -o mode=755,size=1m oracle-dev "$root/dev"
for node in null zero full random urandom tty; do
  : >"$root/dev/$node"
  mount --bind "/dev/$node" "$root/dev/$node"
done
ln -s /proc/self/fd "$root/dev/fd"
ln -s /proc/self/fd/0 "$root/dev/stdin"
ln -s /proc/self/fd/1 "$root/dev/stdout"
ln -s /proc/self/fd/2 "$root/dev/stderr"

# /run and /tmp hold the host's unix sockets (docker, containerd, PostgreSQL, browsers),
# which no namespace would keep a command from: cover them with empty tmpfs.
mount -t tmpfs -o mode=755,size=64m oracle-run "$root/run"
mount -t tmpfs -o mode=1777,size=64m oracle-tmp "$root/tmp"

status=0
timeout -s KILL "$seconds" \
  setpriv --bounding-set -sys_time,-sys_module \
  strace -f -qq -e trace=connect -e signal=none -o "$run/net" \
  chroot "$root" /usr/bin/env -i \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  LANG=C.UTF-8 PAGER=cat SYSTEMD_PAGER= GIT_PAGER=cat TERM=dumb \
  bash -c "$command" </dev/null >/dev/null 2>"$run/stderr" || status=$?
echo "$status" >"$run/status"
# Stop what the command left running before looking (this shell is the namespace's init,
# so -1 reaches only the namespace's own processes; the guard makes sure of that).
if [ "$$" = 1 ]; then kill -KILL -1 2>/dev/null || true; fi

uname -n >"$run/hostname"
(cd "$layer/upper" && find . -mindepth 1 -printf '%y %p\n') >"$run/upper"
(cd "$root" && find dev run tmp -mindepth 1 -printf '%y %p\n' | sort) >"$run/scratch"
