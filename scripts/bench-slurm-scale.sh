#!/usr/bin/env bash
# Scale runs of sqmr under srun on a local Slurm of 16 nodes (testing/slurmtest, as root):
# MPICH at 128 ranks (64 cores x 1 neighbour), Open MPI at 32 ranks (16 x 1), placed by the
# place crate, small sizes. Wall times go to bench/out/slurm-scale.txt (one line per run,
# with the command). Not part of `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
out=bench/out/slurm-scale.txt
mkdir -p bench/out
echo "# $(date -u +%FT%TZ) $(nproc) cores, $(uname -r); scripts/bench-slurm-scale.sh" >> "$out"
profile=${PROFILE:-release}
flag=(); [ "$profile" = release ] && flag=(--release)
run() { # MPI installation (scripts/with-mpi), built into target/NAME
  scripts/with-mpi "$1" -- cargo build "${flag[@]}" -p sqmr
  scripts/with-mpi "$1" -- cargo test "${flag[@]}" -p slurmtest --test scale -- --ignored --nocapture
}
for mpi in ${SCALE_MPIS:-mpich4 openmpi4}; do
  run "$mpi"
done
tail -n 3 "$out"
