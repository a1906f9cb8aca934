#!/usr/bin/env bash
# The time of `sqmr --scan` per node count: healthy namespace fabrics (netns::switch) of 4, 8
# and 16 hosts (SCAN_NODES), one rank each, Open MPI 4 with waiting ranks yielding, as root.
# One line per run goes to bench/out/scan.txt. Not part of `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
out=bench/out/scan.txt
mkdir -p bench/out
echo "# $(date -u +%FT%TZ) $(nproc) cores, $(uname -r); scripts/bench-scan.sh, SCAN_NODES=${SCAN_NODES:-4 8 16}" >> "$out"
profile=${PROFILE:-release}
flag=(); [ "$profile" = release ] && flag=(--release)
scripts/with-mpi openmpi4 -- cargo test "${flag[@]}" -p sqmr --test scan -- --ignored --nocapture scan_time_per_node_count
tail -n 4 "$out"
