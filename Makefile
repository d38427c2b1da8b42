# mmpath: the two set-up commands of the README (`make demo`, `make test`) plus bench and lint.
# Everything installs into .venv; needs Python >= 3.11 and a Rust toolchain (cargo) on PATH.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.mmpath-built
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(abspath $(VENV))/bin:$(HOME)/.cargo/bin:$(PATH)

RUST_SRC := $(shell find crates -name '*.rs' -o -name Cargo.toml 2>/dev/null) Cargo.toml Cargo.lock
PY_SRC   := $(shell find python -name '*.py' -o -name '*.toml' 2>/dev/null) pyproject.toml

.PHONY: demo test test-rust test-py bench lint setup clean emu-tools

# The emulation engine's system tools (docs/emulate.md): installed from Debian when missing and we
# are root (the emulator needs root anyway); elsewhere the emulation tests skip, saying why.
# (iptables: the delay line's NFQUEUE rules; nft, from Debian's nftables: a drop outage's cut,
# docs/emulate.md.)
EMU_TOOLS := iperf3 tcpdump mptcpize ethtool iptables nft

demo: $(STAMP)
	$(VENV)/bin/mmpath run

test: $(STAMP) emu-tools
	cargo test --release --workspace --exclude mmpath-py
	$(VENV)/bin/lint-imports  # the package's layers and no import loops (pyproject.toml [tool.importlinter])
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) bench/run_bench.py
	$(PY) bench/mptcp_bench.py

lint: $(STAMP)
	cargo clippy --workspace --all-targets -- -D warnings
	cargo fmt --all -- --check
	RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps

setup: $(STAMP)

# The venv, Python dependencies, and the extension built in release mode into the venv (again when
# the Makefile changes: its pip line is the list of dependencies, e.g. the notebook test's nbclient).
$(STAMP): $(RUST_SRC) $(PY_SRC) Makefile
	@command -v cargo >/dev/null || { echo "mmpath: cargo not found; install a Rust toolchain (https://rustup.rs)"; exit 2; }
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "maturin>=1.5,<2" numpy pandas pyarrow matplotlib pytest dpkt hypothesis "dask[distributed]" nbclient nbformat ipykernel import-linter pyroute2
	$(VENV)/bin/maturin develop --release -q
	cargo build --release -q -p mmpath-delay
	install -m 755 target/release/mmpath-delay $(VENV)/bin/mmpath-delay
	@touch $(STAMP)

emu-tools:
	@missing=""; for t in $(EMU_TOOLS); do command -v $$t >/dev/null || \
		case $$t in nft) missing="$$missing nftables";; *) missing="$$missing $$t";; esac; done; \
	if [ -n "$$missing" ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "mmpath: installing the emulator's tools:$$missing"; \
		DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq$$missing iproute2 >/dev/null || \
		echo "mmpath: could not install$$missing; the emulation tests will skip"; \
	fi

clean:
	rm -rf $(VENV) target
