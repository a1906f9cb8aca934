#!/usr/bin/env bash
# scripts/mpi-rpath.sh: prints the RUSTFLAGS that put the library folders of the MPI of
# $MPICC (else mpicc on PATH) into the binaries' RPATH, as the compiler wrapper would have
# (the mpi crate links libmpi without the wrapper's rpath). For builds whose binaries must
# find their MPI without LD_LIBRARY_PATH, e.g. EasyBuild's RPATH policy:
#
#   RUSTFLAGS="$RUSTFLAGS $(scripts/mpi-rpath.sh)" cargo build --release --workspace
#
# The wrapper's link line is read with `-show` (Open MPI, MPICH, Intel MPI, Cray's cc
# wrappers print it the same way). DT_RPATH, not DT_RUNPATH, so that it also holds for
# the libraries libmpi loads and cannot be overridden by accident.
set -euo pipefail
mpicc=${MPICC:-mpicc}
if ! line=$("$mpicc" -show 2>/dev/null); then
  echo "mpi-rpath: '$mpicc -show' failed: set MPICC to the MPI's C compiler wrapper" >&2
  exit 1
fi
dirs=()
set -f
for word in $line; do
  case $word in
    -L?*) dirs+=("${word#-L}") ;;
    -Wl,-rpath,?*) dirs+=("${word#-Wl,-rpath,}") ;;
  esac
done
if [ ${#dirs[@]} -eq 0 ]; then
  echo "mpi-rpath: '$mpicc -show' names no library folder (-L): $line" >&2
  exit 1
fi
flags="-C link-arg=-Wl,--disable-new-dtags"
declare -A seen=()
for d in "${dirs[@]}"; do
  [ -n "${seen[$d]:-}" ] && continue
  seen[$d]=1
  flags+=" -C link-arg=-Wl,-rpath,$d"
done
echo "$flags"
