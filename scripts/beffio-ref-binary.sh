#!/usr/bin/env bash
# scripts/beffio-ref-binary.sh MPI DIR
#
# Prints the path of the b_eff_io 2.1 reference binary that the bench scripts measure
# beside xylem's: $REF when set (a built binary), else b_eff_io.c revision 2.1 from
# $REF_SRC, built with MPI's mpicc -O2 into DIR/b_eff_io-2.1. xylem does not ship the
# reference; without either variable it says so and exits with 2.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || { echo "usage: scripts/beffio-ref-binary.sh MPI DIR" >&2; exit 2; }
mpi=$1 dir=$2
if [ -n "${REF:-}" ]; then
  echo "$REF"
  exit 0
fi
if [ -z "${REF_SRC:-}" ]; then
  echo "no b_eff_io 2.1 reference: set REF=/path/to/b_eff_io (built) or REF_SRC=/path/to/b_eff_io.c" >&2
  exit 2
fi
(eval "$(scripts/with-mpi "$mpi" --print)" && "$MPICC" -O2 -o "$dir/b_eff_io-2.1" "$REF_SRC" -lm 2>/dev/null)
echo "$dir/b_eff_io-2.1"
