#!/usr/bin/env bash
# `make images`: the container images vigil-controller and vigil-agent, built FROM scratch
# (no base image can be pulled) from the release binaries `make images` builds first, with
# exactly the shared libraries each binary loads (ldd), the system's CA bundle for TLS to
# model APIs and Kubernetes, and minimal /etc files. Each image is tagged with the
# workspace version and `latest`. The layout each Dockerfile expects is assembled under
# target/images/<image>/ (the build context); docs/deploy.md describes the images.
set -euo pipefail

die() { printf 'make images: %s\n' "$*" >&2; exit 1; }

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
controller_bin=target/release/vigil-controller
agent_bin=target/release-agent/vigil-agent
for bin in "$controller_bin" "$agent_bin"; do
  [[ -x "$bin" ]] || die "$bin is missing (make images builds it first)"
done
command -v docker >/dev/null || die "the docker CLI is not installed"
docker version --format '{{.Server.Version}}' >/dev/null 2>&1 || die "no Docker engine answers (docker version)"
version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)"
[[ -n "$version" ]] || die "no version in Cargo.toml's [workspace.package]"
ca_bundle=/etc/ssl/certs/ca-certificates.crt
[[ -f "$ca_bundle" ]] || die "$ca_bundle is missing (Debian: apt-get install ca-certificates)"

# Copies BINARY to DEST in ROOT with every shared library it loads, at the same paths.
with_libraries() {
  local root="$1" binary="$2" dest="$3" lib
  install -D -m 0755 "$binary" "$root$dest"
  # ldd prints `name => /path (addr)` for libraries and `/path (addr)` for the loader;
  # linux-vdso has no file.
  while read -r lib; do
    [[ -n "$lib" ]] || continue
    [[ -f "$lib" ]] || die "ldd names $lib for $binary, which is not a file"
    install -D -m 0755 "$(readlink -f "$lib")" "$root$lib"
  done < <(ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
}

# The files both images share: the CA bundle, users and groups (so the numeric ids have
# names), and how host names resolve (files, then DNS; glibc's resolver is in libc).
common_files() {
  local root="$1"
  install -D -m 0644 "$ca_bundle" "$root/etc/ssl/certs/ca-certificates.crt"
  printf 'root:x:0:0:root:/:/nonexistent\nvigil:x:65532:65532:Vigil:/var/lib/vigil:/nonexistent\n' \
    > "$root/etc/passwd"
  printf 'root:x:0:\nvigil:x:65532:\n' > "$root/etc/group"
  printf 'hosts: files dns\n' > "$root/etc/nsswitch.conf"
  chmod 0644 "$root/etc/passwd" "$root/etc/group" "$root/etc/nsswitch.conf"
  install -d -m 1777 "$root/tmp"
}

build() {
  local image="$1" context="$2"
  printf 'building %s:%s\n' "$image" "$version"
  docker build --quiet --build-arg "VERSION=$version" \
    -f "deploy/images/$image.Dockerfile" -t "$image:$version" -t "$image:latest" "$context" >/dev/null
  printf '%s:%s  %s bytes\n' "$image" "$version" \
    "$(docker image inspect --format '{{.Size}}' "$image:$version")"
}

# The controller, with the agent it serves to install lines (GET /download/vigil-agent).
ctx=target/images/vigil-controller
rm -rf "$ctx" && mkdir -p "$ctx/rootfs"
with_libraries "$ctx/rootfs" "$controller_bin" /usr/bin/vigil-controller
install -D -m 0755 "$agent_bin" "$ctx/rootfs/usr/lib/vigil/agent/vigil-agent"
common_files "$ctx/rootfs"
# The data directory's mount point, owned by the controller's user so that a new named
# volume starts with that owner and mode.
install -d -m 0700 "$ctx/data"
build vigil-controller "$ctx"

ctx=target/images/vigil-agent
rm -rf "$ctx" && mkdir -p "$ctx/rootfs"
with_libraries "$ctx/rootfs" "$agent_bin" /usr/bin/vigil-agent
common_files "$ctx/rootfs"
install -d -m 0700 "$ctx/rootfs/var/lib/vigil-agent"
build vigil-agent "$ctx"
