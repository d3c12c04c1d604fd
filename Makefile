# rove: one entry point for set-up, the demo, the tests and the benchmark.
#
#   make demo    set up, run scenarios/demo.toml, write results/demo/report.html
#   make test    set up, run the Rust tests and the Python tests
#   make bench   set up, print wall time, events/s and peak memory of bench/*.toml
#   make bench-scale  print the cost per simulated packet from 1 to 1000 flows, 10 Mbit/s to 10 Gbit/s
#   make zoo     set up, run every algorithm on the same paths, write docs/zoo/README.md
#
# Every target first does all set-up on a fresh Debian machine (as root), idempotently:
#   1. system packages, only if something is missing (python3 venv support, a C toolchain, cargo);
#   2. a virtualenv .venv with maturin and the Python dependencies (stamp: .venv/.deps-stamp);
#   3. the native extension rove._core built in release mode into the venv, rebuilt when any
#      Rust source or manifest changes (stamp: .venv/.build-stamp);
#   4. the kernel backend's binaries in target/release (stamp: .venv/.emu-stamp);
#   5. the eBPF congestion controls in target/bpf (stamp: target/bpf/.stamp), and their host
#      replay in target/bpf/host (stamp: target/bpf/host/.stamp).
# When everything is in place the set-up costs well under a second.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# cargo is normally installed by rustup into ~/.cargo/bin.
export PATH := $(HOME)/.cargo/bin:$(PATH)

PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
ROVE := $(VENV)/bin/rove
# pyo3's build script must see the venv's interpreter, whoever calls cargo.
export PYO3_PYTHON := $(abspath $(VPY))

# Keep in step with pyproject.toml ([project] dependencies and the `test` and `learn` extras).
PY_DEPS := 'maturin>=1.5,<2' numpy scipy pandas pyarrow matplotlib tqdm tomli-w 'tomli>=1.1; python_version < "3.11"' pytest hypothesis ray scikit-learn xgboost-cpu
PIP := $(VPY) -m pip --disable-pip-version-check -q

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

RUST_SRCS := Cargo.toml $(wildcard Cargo.lock) \
	$(shell find crates \( -name '*.rs' -o -name Cargo.toml -o -name '*.toml' \) -type f 2>/dev/null)
DEPS_STAMP := $(VENV)/.deps-stamp
BUILD_STAMP := $(VENV)/.build-stamp

.PHONY: help setup sysdeps build-emu build-bpf build-bpf-replay demo zoo test test-rust test-python bench bench-scale clean

help:
	@echo "make demo    set up, run scenarios/demo.toml and write results/demo/report.html"
	@echo "make test    set up, run cargo test and pytest"
	@echo "make bench   set up, print wall time, events/s and peak RSS of bench/*.toml"
	@echo "make bench-scale  print the cost per simulated packet from 1 to 1000 flows, 10 Mbit/s to 10 Gbit/s"
	@echo "make zoo     set up, run every algorithm on the zoo's paths, write docs/zoo/README.md"
	@echo "make clean   remove build products (keeps .venv)"

# (a) System packages, installed only when something is actually missing.
sysdeps:
	@missing=""; \
	command -v $(PYTHON) >/dev/null 2>&1 || missing="$$missing python3"; \
	$(PYTHON) -c 'import venv, ensurepip' >/dev/null 2>&1 || missing="$$missing python3-venv"; \
	command -v cc >/dev/null 2>&1 || missing="$$missing build-essential"; \
	command -v cargo >/dev/null 2>&1 || missing="$$missing cargo rustc"; \
	command -v ip >/dev/null 2>&1 || missing="$$missing iproute2"; \
	command -v tshark >/dev/null 2>&1 || missing="$$missing tshark"; \
	command -v clang >/dev/null 2>&1 || missing="$$missing clang"; \
	command -v bpftool >/dev/null 2>&1 || missing="$$missing bpftool"; \
	[ -f /usr/include/bpf/bpf_helpers.h ] || missing="$$missing libbpf-dev"; \
	if [ -n "$$missing" ]; then \
		echo "rove: installing system packages:$$missing"; \
		$(SUDO) apt-get update -qq; \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

# (b) The virtualenv with maturin and the Python dependencies.
$(DEPS_STAMP): pyproject.toml | sysdeps
	@[ -x $(VPY) ] || { echo "rove: creating $(VENV)"; $(PYTHON) -m venv $(VENV); }
	@echo "rove: installing Python dependencies into $(VENV)"
	$(PIP) install --upgrade pip
	$(PIP) install $(PY_DEPS)
	@touch $@

# (c) The native extension, in release mode, installed editable into the venv.
$(BUILD_STAMP): $(DEPS_STAMP) $(RUST_SRCS)
	@echo "rove: building the native extension (release)"
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --release --quiet
	@touch $@

# (d) The kernel backend's binaries (rove-kernel, rove-emu, rove-traffic) in target/release, where python/rove/kernel.py finds them.
EMU_STAMP := $(VENV)/.emu-stamp
$(EMU_STAMP): $(RUST_SRCS) | sysdeps
	@echo "rove: building the kernel backend's binaries (release)"
	cargo build --release -p rove-emu
	@mkdir -p $(VENV) && touch $@

build-emu: $(EMU_STAMP)

# (e) The eBPF congestion controls (crates/emu/bpf/NAME.bpf.c -> target/bpf/NAME.bpf.o), compiled
#     against a vmlinux.h dumped from the running kernel's BTF; the kernel backend loads them
#     (crates/emu/src/bpf_cc.rs). Without kernel BTF they are not built, and the run says so.
BPF_SRCS := $(wildcard crates/emu/bpf/*.bpf.c crates/emu/bpf/*.h)
BPF_STAMP := target/bpf/.stamp
$(BPF_STAMP): $(BPF_SRCS) | sysdeps
	@if [ ! -r /sys/kernel/btf/vmlinux ]; then \
		echo "rove: no kernel BTF (/sys/kernel/btf/vmlinux): the eBPF congestion controls are not built"; \
		exit 0; \
	fi; \
	echo "rove: building the eBPF congestion controls"; \
	mkdir -p target/bpf; \
	bpftool btf dump file /sys/kernel/btf/vmlinux format c > target/bpf/vmlinux.h.tmp; \
	mv target/bpf/vmlinux.h.tmp target/bpf/vmlinux.h; \
	for src in crates/emu/bpf/*.bpf.c; do \
		obj=target/bpf/$$(basename $$src .c).o; \
		clang -g -O2 -target bpf -mcpu=v3 -Wall -Werror -Itarget/bpf -c $$src -o $$obj.tmp; \
		mv $$obj.tmp $$obj; \
	done; \
	touch $@

build-bpf: $(BPF_STAMP)

# (f) The host replay of the eBPF ports (crates/emu/bpf/host/build.sh -> target/bpf/host/
#     replay-NAME): each port compiled for x86_64 against fake BPF headers, checked by
#     tests/test_bpf_replay.py against the simulator's recorded hook calls. Not built without
#     clang or vmlinux.h (the test then skips and says so).
BPF_REPLAY_STAMP := target/bpf/host/.stamp
$(BPF_REPLAY_STAMP): $(BPF_STAMP) $(wildcard crates/emu/bpf/host/*.c crates/emu/bpf/host/*.h crates/emu/bpf/host/*.sh crates/emu/bpf/host/include/bpf/*.h)
	crates/emu/bpf/host/build.sh
	@mkdir -p $(dir $@) && touch $@

build-bpf-replay: $(BPF_REPLAY_STAMP)

setup: $(BUILD_STAMP) $(EMU_STAMP) $(BPF_STAMP) $(BPF_REPLAY_STAMP)

demo: $(BUILD_STAMP) $(EMU_STAMP)
	$(ROVE) run scenarios/demo.toml -o results/demo --force
	$(ROVE) report results/demo
	@echo
	@echo "report: $(CURDIR)/results/demo/report.html"

# The congestion-control zoo page, docs/zoo/README.md: every algorithm on the same paths
# (scenarios/sweeps/zoo.toml; a fresh sweep, so that no point comes from an older build).
zoo: $(BUILD_STAMP)
	rm -rf results/zoo
	$(ROVE) sweep scenarios/sweeps/zoo.toml -o results/zoo
	$(ROVE) report results/zoo -o docs/zoo --markdown --force
	@echo "page: $(CURDIR)/docs/zoo/README.md"

test: test-rust test-python

# Release mode: the extension build above already compiled the crates in release, and the
# scenario tests run whole simulations, which are several times faster optimised.
# rove-py (the PyO3 cdylib) is left out: a test harness for it would have to link libpython,
# which Debian ships only in python3-dev; the Python tests exercise it instead.
test-rust: $(BUILD_STAMP)
	cargo test --workspace --release --exclude rove-py

test-python: $(BUILD_STAMP) $(EMU_STAMP) $(BPF_STAMP) $(BPF_REPLAY_STAMP)
	$(VPY) -m pytest -q -rsx tests

bench: $(BUILD_STAMP)
	cargo build --release -p rove-world --bin rove-bench
	$(VPY) bench/run_bench.py

# The scale sweep (bench/run_bench.py --scale): several minutes, so not part of `make bench`.
bench-scale:
	cargo build --release -p rove-world --bin rove-bench
	$(PYTHON) bench/run_bench.py --scale

clean:
	rm -rf build results target/wheels python/rove/_core*.so $(BUILD_STAMP)
