# tcplab — set-up, demo, tests and benchmarks. Each target installs what it needs into
# a local virtualenv (.venv), so both quick-start commands work on a fresh machine.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: all install browser tools demo dashboard-screenshot test test-rust test-python bench clean

all: install

$(BIN)/maturin:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q "maturin>=1.7,<2"

# Builds the Rust extension (release profile) and installs the package with its
# dependencies (and the dev extras: pytest, hypothesis, and nbclient + ipykernel, which
# execute docs/tutorial.ipynb in the tests) into the virtualenv.
install: $(BIN)/maturin
	$(BIN)/maturin develop --release -E dev -q
	cargo build --profile ci -p tcplab-emu -q
	install -m 755 target/ci/tcplab-emu $(BIN)/tcplab-emu

# Every bundled study at its reduced `demo` size (under 5 minutes on 2 cores once built;
# docs/studies/all.md has the measured time), then results/demo/index.html, the dashboard
# of every finding; re-running resumes.
demo: install
	$(BIN)/tcplab study all --preset demo --out results/demo

# The README's picture of the dashboard, taken by the same headless-Chromium check the
# tests run (tcplab.chromium): it fails if an embedded figure does not render.
dashboard-screenshot: browser
	@[ -f results/demo/index.html ] || $(MAKE) demo
	$(BIN)/python -m tcplab.chromium results/demo/index.html docs/img/dashboard.png

test: install browser tools test-rust test-python

# The report test renders report.html in headless Chromium; install Debian's package
# where the machine allows (root + apt), otherwise that one test skips with a reason.
browser:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) ; } || \
	  echo "chromium not installed: the report rendering test will be skipped"

# Taplo's CLI (the TOML toolkit behind Even Better TOML) checks examples/ against the
# published JSON Schema (tests/test_schema.py); installed from npm into .tools where
# npm exists, otherwise that test skips with the reason.
TAPLO_VERSION := 0.7.0
tools:
	@if command -v npm >/dev/null 2>&1; then \
	  [ -x .tools/node_modules/.bin/taplo ] || npm install --silent --no-audit --no-fund --prefix .tools @taplo/cli@$(TAPLO_VERSION) >/dev/null || \
	  echo "npm could not install @taplo/cli: the schema check with Taplo will be skipped"; \
	else echo "npm not found: the schema check with Taplo will be skipped"; fi

test-rust:
	cargo test -p tcplab-core --profile ci
	cargo test -p tcplab-emu --profile ci

test-python: install
	$(BIN)/python -m pytest -q

bench: install
	cargo bench -p tcplab-core --bench engine
	$(BIN)/tcplab bench

clean:
	rm -rf $(VENV) target .tools
