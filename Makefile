# The commands developers run; CI (.ci/run) calls the same targets.
#
#   make build   build every crate (debug)
#   make run     build everything, then run the controller on ./.vigil with a local agent
#   make test    unit, integration, end-to-end and doc tests
#   make lint    rustfmt check, clippy -D warnings (also on the agent without its default
#                features), shellcheck on the shell scripts
#   make fmt     format the code
#   make bench   benchmarks (record figures in BENCHMARKS.md; the ones they replace go to
#                docs/benchmarks-history.md)
#   make eval    the assistant's scenario catalog (gates, approvals, prompt injections) against
#                the scripted model, or a real one with VIGIL_EVAL_LLM_*; writes target/eval.json
#   make fuzz    fuzz FUZZ_TARGET (default classify) for FUZZ_SECONDS (needs cargo-fuzz:
#                cargo install cargo-fuzz)
#   make fleet   FLEET_AGENTS simulated agents (default 1000, vigil-fleet) on a release
#                controller: connect time, memory per agent, idle CPU, GET /api/agents
#                latency, fan-out time and results lost; FLEET_REPLICAS=3 with
#                FLEET_DATABASE_URL: on replicas behind haproxy (docs/fleet.md)
#   make agent   the agent as it ships: target/release-agent/vigil-agent (fat LTO, linked
#                by lld in its hot-code order; fails without lld; README "Building the
#                agent")
#   make deb     the Debian packages vigil-controller and vigil-agent in target/debian
#                (needs cargo-deb; deploy/debian, docs/deploy.md)
#   make images  the container images vigil-controller and vigil-agent (FROM scratch, from
#                the release binaries; needs Docker; deploy/images, docs/deploy.md)
#   make agent-order  remake host-agent/link-order.txt, the agent's hot-code order, from
#                a run under valgrind (needs valgrind and lld; after dependency updates)
#   make soak    SOAK_AGENTS (10000) simulated agents for SOAK_MINUTES (30): repeated
#                fan-outs, reconnecting waves, one controller restart; memory and fds
#                sampled (not in CI)
#   make oracle  the write oracle on every read of the corpora: runs each command the
#                classifier accepts as a read in a throw-away overlay root and fails on any
#                write (needs root, overlayfs, util-linux; make test runs a sample of it)

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

CARGO ?= cargo
# Arguments for `make run`, e.g. make run RUN_ARGS="policy check --human 'journalctl -f'".
# The default serves the API on 127.0.0.1:8640 with state in ./.vigil and enrolls and
# supervises one agent for this machine (--local-agent).
RUN_ARGS ?= serve --data-dir ./.vigil --local-agent
FUZZ_SECONDS ?= 60
# The fuzz target: classify (the command classifier), ids (resource ids and exec targets),
# door (the read-only door's policy),
# grant (grant verification) or redact (secret redaction).
FUZZ_TARGET ?= classify
SHELL_SCRIPTS := .ci/run $(wildcard deploy/*.sh) $(wildcard tests/benches/*.sh) \
	deploy/debian/test.sh $(wildcard deploy/debian/*/postinst) $(wildcard deploy/debian/*/postrm) \
	deploy/images/build.sh deploy/images/test.sh deploy/compose/test.sh \
	$(wildcard host-agent/benches/*.sh) \
	$(wildcard tests/fixtures/proxmox/bin/*) tests/fixtures/proxmox/lib/pve-fixture \
	shared/tests/oracle/jail.sh

.PHONY: all build run test lint fmt bench fuzz eval oracle fleet soak agent agent-order deb images

all: build

build:
	$(CARGO) build --workspace

run: build
	./target/debug/vigil-controller $(RUN_ARGS)

test:
	$(CARGO) test --workspace

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) clippy -p vigil-agent --all-targets --no-default-features -- -D warnings
	@if command -v shellcheck >/dev/null 2>&1; then \
		echo "shellcheck $(SHELL_SCRIPTS)"; \
		shellcheck -x $(SHELL_SCRIPTS); \
	else \
		echo "shellcheck not installed: skipping the shell scripts (.ci/run installs it)"; \
	fi

fmt:
	$(CARGO) fmt --all

# The write oracle over every read of the corpora (make test runs a sample of it).
oracle:
	VIGIL_ORACLE=full $(CARGO) test -p vigil-shared --test all oracle:: -- --nocapture

# The evaluation harness: every scenario must pass with the scripted model. It runs the
# binaries `cargo test --workspace` builds (after `make test`, nothing is rebuilt): a plain
# `cargo build` would rebuild the workspace without the tests' dependency features.
eval:
	$(CARGO) test --workspace --no-run
	./target/debug/vigil-eval --out target/eval.json

# The fleet benchmark: a release controller and FLEET_AGENTS simulated agents (docs/fleet.md).
fleet:
	CARGO=$(CARGO) tests/benches/fleet.sh

# The agent that ships, and the hot-code order it is linked with (host-agent/build.rs).
agent:
	@command -v ld.lld >/dev/null 2>&1 || { \
		echo "make agent: ld.lld is not installed (Debian: apt-get install lld). The shipped agent is linked by lld in its hot-code order; without it an idle agent keeps about 2 MiB more resident." >&2; \
		exit 1; }
	$(CARGO) build --profile release-agent -p vigil-agent

agent-order:
	host-agent/benches/link-order.sh

# Debian packages of the controller and the agent in target/debian (deploy/debian; needs
# cargo-deb, which .ci/run installs). The agent's unit is the one `vigil-agent install`
# writes, rendered by the shipped binary itself.
deb: agent
	@command -v cargo-deb >/dev/null 2>&1 || { \
		echo "make deb: cargo-deb is not installed (cargo install --locked cargo-deb)" >&2; \
		exit 1; }
	$(CARGO) build --release -p vigil-controller
	mkdir -p target/debian-units
	./target/release-agent/vigil-agent install --print --exe /usr/bin/vigil-agent \
		> target/debian-units/vigil-agent.service
	$(CARGO) deb -p vigil-controller --no-build
	$(CARGO) deb -p vigil-agent --no-build --profile release-agent

# The container images vigil-controller and vigil-agent, tagged with the version and
# latest, built FROM scratch with the release binaries and the libraries they load.
images: agent
	$(CARGO) build --release -p vigil-controller
	deploy/images/build.sh

# The soak of the fleet (tests/benches/soak.sh); not part of CI.
soak:
	tests/benches/soak.sh

# Benchmarks: the classifier; the controller's agent list and inventory graph; the link,
# chat and queue benches with release binaries; the read sandbox; ssh for comparison.
# The fan-out bench runs on its own (cargo bench -p vigil-tests --bench fanout), like
# make fleet and make soak. Write the figures (machine, date, numbers) into BENCHMARKS.md
# and move the figures they replace to docs/benchmarks-history.md.
bench:
	$(CARGO) bench -p vigil-shared --bench classify
	$(CARGO) build --release -p vigil-controller -p vigil-agent
	$(CARGO) bench -p vigil-controller --bench agents_list
	$(CARGO) bench -p vigil-controller --bench inventory
	$(CARGO) bench -p vigil-tests --bench link
	$(CARGO) bench -p vigil-tests --bench chat
	$(CARGO) bench -p vigil-tests --bench mcp
	$(CARGO) bench -p vigil-tests --bench queue
	$(CARGO) bench -p vigil-agent --bench sandbox
	tests/benches/ssh-compare.sh

# Optional: coverage-guided fuzzing of FUZZ_TARGET with cargo-fuzz (libFuzzer), which
# needs nightly features; RUSTC_BOOTSTRAP=1 unlocks them on the pinned stable toolchain.
fuzz:
	@if ! $(CARGO) fuzz --version >/dev/null 2>&1; then \
		echo "cargo-fuzz is not installed (cargo install cargo-fuzz); not fuzzing" >&2; exit 1; \
	fi
	@if [ ! -d fuzz ]; then \
		echo "there is no fuzz/ crate yet; not fuzzing" >&2; exit 1; \
	fi
	cd fuzz && RUSTC_BOOTSTRAP=1 $(CARGO) fuzz run $(FUZZ_TARGET) -- -max_total_time=$(FUZZ_SECONDS)
