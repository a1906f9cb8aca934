# xylem — the two commands of the quick start are `make demo` and `make test`.
# Open MPI builds into target/, MPICH into target/mpich/ (plain mpicc is Open MPI).

SHELL := /bin/bash
CARGO ?= cargo
MPICH_ENV := MPICC=mpicc.mpich CARGO_TARGET_DIR=target/mpich
PREFIX ?= /usr/local

.PHONY: deps build build-mpich demo test test-openmpi test-mpich lint bench clean-results

deps:
	@scripts/install-deps.sh

build: deps
	$(CARGO) build --release --workspace

build-mpich: deps
	$(MPICH_ENV) $(CARGO) build --release --workspace

## The main job on this machine: the benchmarks on local ranks, results under results/.
demo: build
	@scripts/demo.sh

## The whole suite: formatting, clippy, unit and MPI integration tests on both MPIs.
test: deps lint test-openmpi test-mpich

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

test-openmpi: deps
	XYLEM_MPI=openmpi $(CARGO) test --workspace

test-mpich: deps
	$(MPICH_ENV) XYLEM_MPI=mpich $(CARGO) test --workspace

## Benchmarks of the benchmarks (results in bench/out/, summary in BENCHMARKS.md).
bench: build build-mpich
	@scripts/bench-sqmr.sh
	@scripts/bench-sqmr-instructions.sh
	@PAIRS=5 T=120 scripts/bench-beffio.sh

## Binaries, man pages and shell completions under $(PREFIX) (DESTDIR=... for a staged install).
.PHONY: install
install: build
	PREFIX=$(PREFIX) scripts/install.sh
