# xylem — the two commands of the quick start are `make demo` and `make test`.
#
# Five MPI installations, one name each (scripts/with-mpi NAME -- CMD runs CMD with its
# environment): openmpi4 and mpich4 from Debian, openmpi5, mpich5 and intelmpi from the
# Python registry (under .mpi/, installed by scripts/install-deps.sh).
# `make build` builds against Open MPI 4 into target/release/; `make build MPI=NAME`
# builds against NAME into target/NAME/release/.

SHELL := /bin/bash
CARGO ?= cargo
PREFIX ?= /usr/local
MPIS := openmpi4 mpich4 openmpi5 mpich5 intelmpi
MPI ?=
# make install MODULEFILE=PATH [MPI_MODULE=NAME]: an Lmod module file too (scripts/install.sh).
MODULEFILE ?=
MPI_MODULE ?=
# The crates whose tests launch MPI jobs; the rest does not depend on the MPI in use and
# is tested once, with Open MPI 4.
MPI_CRATES := -p benchkit -p mpiio -p sqmr -p beffio -p netns -p slurmtest
# The cargo target folder that the tests' release builds of the whole workspace share
# (EasyBuild's, in test-packaging; ReFrame's build fixture, in test-openmpi4): the second
# compiles only xylem's own crates.
export XYLEM_TEST_RELEASE_TARGET ?= $(CURDIR)/target/test-release

.PHONY: install deps build demo demo-gluster bench-gluster test test-mpi-free test-packaging lint book bench reframe $(addprefix test-,$(MPIS)) $(addprefix build-,$(MPIS))

deps:
	@scripts/install-deps.sh

build: deps
ifeq ($(MPI),)
	$(CARGO) build --release --workspace
else
	scripts/with-mpi $(MPI) -- $(CARGO) build --release --workspace
endif

$(addprefix build-,$(MPIS)): build-%: deps
	scripts/with-mpi $* -- $(CARGO) build --release --workspace

## The main job on this machine: the benchmarks on local ranks, results under results/.
demo: build
	@scripts/demo.sh

## b_eff_io on a small distributed file system on this machine (root): a GlusterFS volume
## over two network-namespace hosts, one rank on each, through each host's FUSE client;
## MPI=NAME picks the library (default openmpi4). JSON in results/gluster/.
GLUSTER_MPI = $(if $(MPI),$(MPI),openmpi4)
# with-mpi builds into target/NAME/, Open MPI 4 too: what is built here is what runs.
GLUSTER_BIN = target/$(GLUSTER_MPI)/release
demo-gluster: deps
	scripts/with-mpi $(GLUSTER_MPI) -- $(CARGO) build --release -p beffio
	$(CARGO) build -q -p netns --example on_gluster
	@mkdir -p results/gluster
	@json=results/gluster/b_eff_io-$(GLUSTER_MPI)-$$(date +%Y%m%dT%H%M%S).json; \
	target/debug/examples/on_gluster --mpi $(GLUSTER_MPI) -o direct-io-mode=enable \
	  --set performance.write-behind=off -- $(CURDIR)/$(GLUSTER_BIN)/b_eff_io -T 30 -p @MNT \
	  --memory-per-process 64M --json $(CURDIR)/$$json && echo "demo-gluster: $$json" >&2

## The distributed-volume figures of BENCHMARKS.md (root; Open MPI 4 and MPICH 4).
bench-gluster: build build-mpich4
	@scripts/bench-beffio-gluster.sh

## The whole suite: formatting, clippy, the MPI-free crates without MPI, every crate's
## tests with Open MPI 4, then the MPI
## crates' tests (runs, network-selection proofs, Slurm) on each of the other four MPIs.
## The ReFrame checks under reframe/ run inside it, through ReFrame, on the local system
## and the local Slurm, for the MPIs of XYLEM_REFRAME_MPIS (default openmpi4 mpich4):
## testing/slurmtest/tests/reframe.rs, part of slurmtest's tests in each part.
## Each part prints its wall time (BENCHMARKS.md quotes them).
test: deps lint test-mpi-free test-packaging $(addprefix test-,$(MPIS))

## analysis, place and xylem without MPI: no MPI crate in their graph, and their build and
## tests with no MPI compiler or launcher reachable.
test-mpi-free: deps
	@scripts/check-mpi-free.sh

## xylem's ReFrame checks (reframe/) with release binaries, on both systems of
## reframe/settings.py (xylem-local, and xylem-slurm: a local two-node Slurm started for
## the run), for each MPI of REFRAME_MPIS. ReFrame's performance log is appended to
## results/reframe/perflogs/ (`xylem perflog` reads it), each session's stage, output
## (with the benchmarks' JSON) and report.json in results/reframe/<stamp>-<system>-<mpi>/.
## Small sizes (scripts/reframe-run.sh); XYLEM_REFRAME_FULL=1 for the checks' defaults.
REFRAME_MPIS ?= openmpi4 mpich4
reframe: deps
	@set -e; for mpi in $(REFRAME_MPIS); do \
	  scripts/with-mpi $$mpi -- $(CARGO) build --release -p sqmr -p beffio --bins; \
	  XYLEM_BIN_DIR=$(CURDIR)/target/$$mpi/release XYLEM_REFRAME_MPIS=$$mpi \
	  XYLEM_REFRAME_RESULTS=$(CURDIR)/results/reframe \
	    scripts/with-mpi $$mpi -- $(CARGO) test -p slurmtest --test reframe -- --test-threads 1; \
	done; \
	echo "make reframe: performance log in results/reframe/perflogs/" >&2

## Formatting, clippy, the MSRV (scripts/check-msrv.sh), the documents' links, and the
## manual built with its links checked.
lint: book
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	@scripts/check-msrv.sh
	@scripts/check-links.py
	@scripts/check-book-links.py target/book

## The manual (docs/, an mdBook) into target/book, with mdBook built first if need be
## (scripts/install-mdbook.sh: pinned, into .tools/).
book:
	@scripts/install-mdbook.sh
	.tools/bin/mdbook build docs

## The packages: the Spack package's checks without Spack, and an EasyBuild build from a
## source tarball with an external MPI module, its module loaded and sqmr run from it.
# What a part's line says of the disk when it ends: its test jobs write gigabytes into
# the temporary folder, and a full disk fails them.
DISK_FREE = $$(df -h --output=avail . | tail -n 1 | tr -d ' ') free on the disk of target/
# Under CI (XYLEM_PRUNE_TARGETS=1, which .ci/run sets) a part's build folder goes once its
# tests ran: no later part reads it, and the tests of the later parts write on that disk.
PRUNE = if [ -n "$$XYLEM_PRUNE_TARGETS" ]; then rm -rf target/$(1); fi;

test-packaging: deps
	@start=$$(date +%s); \
	python3 -m unittest discover -s packaging/spack && \
	packaging/easybuild/test.sh; \
	status=$$?; \
	echo "make test: packaging part took $$(( $$(date +%s) - start )) s, $(DISK_FREE)" >&2; \
	exit $$status

test-openmpi4: deps
	@start=$$(date +%s); \
	scripts/with-mpi openmpi4 -- $(CARGO) build --workspace --bins && \
	scripts/with-mpi openmpi4 -- $(CARGO) test --workspace $(MPI_FREE_EXCLUDED); \
	status=$$?; \
	$(call PRUNE,openmpi4) \
	echo "make test: openmpi4 part took $$(( $$(date +%s) - start )) s, $(DISK_FREE)" >&2; \
	exit $$status

# The crates test-mpi-free tests with no MPI reachable (their tests need none): the
# openmpi4 part builds their binaries, which the MPI crates' tests run, and does not test
# them twice.
MPI_FREE_EXCLUDED := --exclude analysis --exclude place --exclude xylem
# Tests of xylem's own logic that no MPI library or launcher changes (the output-file
# layer and its refusals, planted links, --clean, option checks, the judgement of slow
# sizes and patterns, the watchdog's patience with healthy waits): they run against Open
# MPI 4, and are skipped (by name, `--skip`) against the other four, whose parts keep
# every test of what a library or launcher does differently (runs, MPI-IO, faults,
# signals, stalls that end a job, network selection, GlusterFS, Slurm, ReFrame).
OWN_LOGIC_TESTS := a_partition_longer_than_the_timeout_is_no_stall \
  a_pause_that_recovered_is_flagged every_pattern_is_kept_as_soon_as_it_is_measured \
  a_run_directory_removed_under_the_run_is_a_clear_error \
  a_healthy_run_under_load_flags_nothing many_more_ranks_than_cores_are_said \
  a_size_longer_than_the_timeout_is_no_stall links_planted_at_pid_derived_names \
  created_exclusively clean_never_removes_the_folder a_run_directory_swapped_for_a_link \
  clean_removes_only_what_it_examined planted_links_and_a_fifo through_a_planted_link \
  bad_options_are_rejected a_bad_hints_file_line a_hints_file_that_is_not_a_small_regular_file \
  a_killed_run_leaves_no_empty_files an_existing_output_file_refuses_the_run \
  a_refused_run_leaves_an_earlier_sum an_output_name_that_is_not_a_new_file \
  a_stale_reservation_is_replaced a_live_reservation_refuses_the_run \
  a_leftover_run_directory_is_reported clean_keeps_what_b_eff_io_did_not_make \
  a_size_that_overflows_is_refused
# Tests of what a launcher and ROMIO do that MPICH 5 shares with MPICH 4 (the same hydra
# and ROMIO, a version later): stalls that end a job, and GlusterFS across namespace
# hosts. They run against MPICH 4 (and Intel MPI, whose hydra and ROMIO are its own) and
# are skipped against MPICH 5.
MPICH4_COVERED_TESTS := a_rank_stopped_for_good_ends_the_job_keeping_what_was_measured \
  rank_0_stopped_in_a_partition_is_named_by_the_rank_waiting_outside_it \
  sigterm_keeps_every_finished_partition one_rank_signalled_in_a_known_count_stops_every_rank \
  a_neighbour_stopped_for_good_ends_the_job_and_is_named \
  rank_0_stopped_for_good_is_noticed_by_the_others a_pause_that_recovered_is_flagged_not_folded_in \
  a_rank_frozen_before_mpi_init_ends_the_job_within_the_timeout \
  a_rank_stopped_at_the_end_is_named_and_the_job_does_not_end_with_0 \
  a_data_link_cut_for_good_ends_the_job_within_the_stall_timeout \
  a_data_link_cut_and_restored_is_flagged \
  every_pattern_type_runs_across_hosts_with_its_bytes_checked_and_spread_over_both_bricks \
  the_shared_file_pointer_on_a_caching_mount_works_under_open_mpi_and_under_romio \
  a_chunk_corrupted_on_the_volume_between_write_and_read_is_found \
  a_replicated_volume_holds_every_byte_on_both_hosts a_collective_buffering_hint_reaches_romio \
  a_distributed_volume_spreads_files_over_both_hosts_and_leaves_nothing \
  a_replicated_volume_holds_every_file_on_both_hosts
# The test filters of part NAME: none for the one that runs everything.
part_skips = $(OWN_LOGIC_TESTS) $(if $(filter mpich5,$(1)),$(MPICH4_COVERED_TESTS))
part_filters = $(if $(filter openmpi4,$(1)),,-- $(addprefix --skip ,$(call part_skips,$(1))))
$(addprefix test-,$(filter-out openmpi4,$(MPIS))): test-%: deps
	@start=$$(date +%s); \
	scripts/with-mpi $* -- $(CARGO) build --workspace --bins && \
	scripts/with-mpi $* -- $(CARGO) test $(MPI_CRATES) $(call part_filters,$*); \
	status=$$?; \
	$(call PRUNE,$*) \
	echo "make test: $* part took $$(( $$(date +%s) - start )) s, $(DISK_FREE)" >&2; \
	exit $$status

## Benchmarks of the benchmarks (results in bench/out/, summary in BENCHMARKS.md).
## The comparisons with the C references need their sources, which xylem does not ship:
## SQMR_SRC=DIR (sqmr 1.1.0's folder, LLNL phloem) and BEFFIO_REF_SRC=FILE (b_eff_io.c
## revision 2.1); each is skipped, said, without.
bench: build build-mpich4
	@scripts/bench-sqmr.sh
	@if [ -n "$(SQMR_SRC)" ]; then SQMR_SRC="$(SQMR_SRC)" scripts/bench-sqmr-instructions.sh; \
	  else echo "make bench: SQMR_SRC not set: the instructions beside C sqmr 1.1.0 are skipped" >&2; fi
	@scripts/bench-sqmr-validate.sh
	@scripts/bench-sqmr-precision.sh
	@PAIRS=5 T=120 scripts/bench-beffio.sh
	@scripts/bench-beffio-deadline.sh
	@if [ -n "$(BEFFIO_REF_SRC)" ]; then REF_SRC="$(BEFFIO_REF_SRC)" STRACE=1 scripts/bench-beffio-ref.sh; \
	  else echo "make bench: BEFFIO_REF_SRC not set: b_eff_io beside 2.1 is skipped" >&2; fi

## Binaries, man pages and shell completions under $(PREFIX) (DESTDIR=... for a staged install).
.PHONY: install
## Builds and installs into PREFIX without installing anything on the machine: against
## MPI=NAME (one of MPIS, installed by scripts/install-deps.sh), else against the MPI whose
## mpicc is on PATH (a module-loaded one; MPICC names another). See README, "Install".
install:
ifeq ($(MPI),)
	$(CARGO) build --release --workspace
	PREFIX="$(PREFIX)" MODULEFILE="$(MODULEFILE)" MPI_MODULE="$(MPI_MODULE)" scripts/install.sh
else
	scripts/with-mpi $(MPI) -- $(CARGO) build --release --workspace
	PREFIX="$(PREFIX)" MODULEFILE="$(MODULEFILE)" MPI_MODULE="$(MPI_MODULE)" XYLEM_BIN_DIR=target/$(MPI)/release scripts/install.sh
endif
