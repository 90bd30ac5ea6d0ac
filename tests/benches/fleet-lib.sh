# shellcheck shell=bash
# Shared by make fleet's scripts (fleet.sh, fleet-replicas.sh); sourced, not run. The
# caller sets $root (the repository) and uses $ctl and $fleet.
# shellcheck disable=SC2034,SC2154

# Builds the release controller and simulator unless FLEET_NO_BUILD=1, and raises the soft
# open-file limit to the hard one, failing when that is too low for $1 agents (each
# process needs a socket per agent). Sets $ctl and $fleet to the binaries.
fleet_prepare() {
  local agents="$1"
  if [[ "${FLEET_NO_BUILD:-0}" != 1 ]]; then
    "${CARGO:-cargo}" build --release -p vigil-controller -p vigil-tests --bin vigil-controller --bin vigil-fleet
  fi
  ctl="$root/target/release/vigil-controller"
  fleet="$root/target/release/vigil-fleet"
  local hard
  hard="$(ulimit -Hn)"
  if [[ "$hard" != unlimited ]]; then
    ulimit -Sn "$hard"
    if ((hard < agents + 256)); then
      echo "fleet: the hard open-file limit is $hard, too low for $agents agents (each process needs one socket per agent); raise it as root (ulimit -Hn) or lower FLEET_AGENTS" >&2
      exit 1
    fi
  else
    ulimit -Sn 1048576 2>/dev/null || true
  fi
}
