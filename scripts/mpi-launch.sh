#!/usr/bin/env bash
# scripts/mpi-launch.sh MPI RANKS CMD [ARGS...]
#
# Runs CMD on RANKS ranks of this machine with the launcher of installation MPI (a name of
# scripts/with-mpi), as the bench scripts start their jobs: Open MPI's mpirun
# oversubscribed and unbound, MPICH 4's mpiexec.mpich (Debian's `mpiexec` may be Open
# MPI's), the others' mpiexec. The working directory is the caller's.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: scripts/mpi-launch.sh MPI RANKS CMD [ARGS...]" >&2; exit 2; }
with_mpi=$(dirname "$0")/with-mpi
mpi=$1 ranks=$2
shift 2
case $mpi in
  openmpi*) exec "$with_mpi" "$mpi" -- mpirun -n "$ranks" --oversubscribe --bind-to none "$@" ;;
  mpich4) exec "$with_mpi" "$mpi" -- mpiexec.mpich -n "$ranks" "$@" ;;
  *) exec "$with_mpi" "$mpi" -- mpiexec -n "$ranks" "$@" ;;
esac
