#!/bin/sh
# Install the Vigil host agent from a Vigil controller. POSIX sh; needs curl and sha256sum.
#
#   curl -fsSL URL/install.sh | sh -s -- --controller URL --url GATEWAY --token vjt_... \
#        --ca-fingerprint sha256:... [--pinnedpubkey sha256//...] [--prefix DIR] [--no-systemd]
#   sh install.sh --uninstall [--purge] [--prefix DIR]
#
# The controller's POST /api/join-tokens prints the exact line. The script downloads the
# agent binary for this machine's architecture from the controller (with the same TLS key
# pin), checks its SHA-256 against the X-Vigil-Sha256 header, installs it to
# $PREFIX/usr/local/bin/vigil-agent, enrolls (vigil-agent join) and installs the systemd
# service (vigil-agent install) unless --no-systemd.
set -eu

controller=""
gateway=""
token=""
fingerprint=""
pin=""
http_ok=0
prefix=""
systemd=1
uninstall=0
purge=0

die() {
    printf 'vigil install: error: %s\n' "$*" >&2
    exit 1
}

usage() {
    sed -n '2,12p' "$0" 2>/dev/null | sed 's/^# \{0,1\}//' >&2 || true
    exit 2
}

need_value() {
    [ "$2" -ge 2 ] || die "$1 needs a value"
}

while [ "$#" -gt 0 ]; do
    case "$1" in
        --controller) need_value "$1" "$#"; controller=$2; shift 2 ;;
        --url) need_value "$1" "$#"; gateway=$2; shift 2 ;;
        --token) need_value "$1" "$#"; token=$2; shift 2 ;;
        --ca-fingerprint) need_value "$1" "$#"; fingerprint=$2; shift 2 ;;
        --pinnedpubkey) need_value "$1" "$#"; pin=$2; shift 2 ;;
        --insecure-http-ok) http_ok=1; shift ;;
        --prefix) need_value "$1" "$#"; prefix=${2%/}; shift 2 ;;
        --no-systemd) systemd=0; shift ;;
        --uninstall) uninstall=1; shift ;;
        --purge) purge=1; shift ;;
        -h|--help) usage ;;
        *) die "unknown option: $1 (see --help)" ;;
    esac
done

bin_dir="$prefix/usr/local/bin"
agent="$bin_dir/vigil-agent"
# The separate read launcher of earlier agents; the agent confines reads itself now, so a
# copy left by an earlier install is removed.
old_launcher="$bin_dir/vigil-sandbox"
state_dir="$prefix/var/lib/vigil-agent"

if [ "$uninstall" -eq 1 ]; then
    if [ -x "$agent" ]; then
        if [ "$systemd" -eq 1 ]; then
            "$agent" uninstall --state-dir "$state_dir" || die "vigil-agent uninstall failed"
        fi
    fi
    rm -f "$agent" "$old_launcher"
    if [ "$purge" -eq 1 ]; then
        rm -rf "$state_dir"
        echo "Removed $agent and $state_dir."
    else
        echo "Removed $agent (kept $state_dir; --purge removes it)."
    fi
    exit 0
fi

[ -n "$controller" ] || die "--controller URL is required (the controller's HTTP address)"
[ -n "$gateway" ] || die "--url is required (the controller's agent gateway, https://HOST:8641)"
[ -n "$token" ] || die "--token is required (a join token, vjt_...)"
[ -n "$fingerprint" ] || die "--ca-fingerprint is required (sha256:...)"
command -v curl >/dev/null 2>&1 || die "curl is not installed"
command -v sha256sum >/dev/null 2>&1 || die "sha256sum is not installed"
controller=${controller%/}

# How curl reaches the controller: pinned TLS, publicly trusted TLS, or loopback HTTP.
case "$controller" in
    https://*)
        if [ -n "$pin" ]; then
            # The pin authenticates the server: curl checks it even with --insecure, which
            # only lets it accept a certificate from the controller's own CA.
            set -- --insecure --pinnedpubkey "$pin"
        else
            set --
        fi
        ;;
    http://127.*|http://localhost|http://localhost:*|http://\[::1\]*)
        [ "$http_ok" -eq 1 ] || die "refusing plain HTTP without --insecure-http-ok"
        set --
        ;;
    http://*) die "refusing plain HTTP to a host other than loopback: $controller" ;;
    *) die "--controller must be an http(s):// URL: $controller" ;;
esac

case "$(uname -m)" in
    x86_64|amd64) arch=x86_64 ;;
    aarch64|arm64) arch=aarch64 ;;
    *) die "unsupported architecture: $(uname -m)" ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM

# fetch NAME CURL_OPTION...: download NAME into $work with its headers; fails when the
# download does.
fetch() {
    name=$1
    shift
    echo "Downloading $name for $arch from $controller ..."
    curl -fsS "$@" -D "$work/$name.headers" -o "$work/$name" \
        "$controller/download/$name?arch=$arch"
}

# verify NAME: the download's SHA-256 must be the one the controller announced.
verify() {
    expected=$(tr -d '\r' <"$work/$1.headers" | awk 'tolower($1) == "x-vigil-sha256:" { print tolower($2) }' | tail -n 1)
    [ -n "$expected" ] || die "the controller sent no X-Vigil-Sha256 header for $1; nothing was installed"
    actual=$(sha256sum "$work/$1" | awk '{ print $1 }')
    if [ "$actual" != "$expected" ]; then
        die "checksum mismatch: the download of $1 has SHA-256 $actual but the controller announced $expected; nothing was installed"
    fi
    echo "SHA-256 verified for $1: $actual"
}

# install_bin NAME: into $bin_dir, 0755, replacing any old copy in one rename.
install_bin() {
    chmod 0755 "$work/$1"
    mv "$work/$1" "$bin_dir/$1.new"
    mv "$bin_dir/$1.new" "$bin_dir/$1"
    echo "Installed $bin_dir/$1"
}

fetch vigil-agent "$@" || die "download failed"
verify vigil-agent

mkdir -p "$bin_dir"
install_bin vigil-agent
rm -f "$old_launcher"

"$agent" join --url "$gateway" --token "$token" --ca-fingerprint "$fingerprint" \
    --state-dir "$state_dir" || die "vigil-agent join failed"

if [ "$systemd" -eq 1 ]; then
    "$agent" install --state-dir "$state_dir" || die "vigil-agent install failed"
    echo "vigil-agent is running as the systemd service vigil-agent.service."
else
    echo "Not installing a systemd service (--no-systemd). Run the agent with:"
    echo "  $agent run --state-dir $state_dir"
fi
