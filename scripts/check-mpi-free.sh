#!/usr/bin/env bash
# Proves that the crates which only read, plot and place (analysis, place, xylem) need no
# MPI library: (1) their normal dependency graph holds no MPI crate, and (2) they build
# and pass their tests on a PATH without any MPI compiler wrapper or launcher and with
# pkg-config seeing no MPI, in a target directory of their own (nothing cached from the
# MPI builds). Fails naming what pulled MPI in.
set -euo pipefail
cd "$(dirname "$0")/.."
CARGO=${CARGO:-cargo}
crates=(analysis place xylem)

status=0
for c in "${crates[@]}"; do
  if found=$("$CARGO" tree -p "$c" -e normal --prefix none | grep -E '^(mpi|mpi-sys|mpiio) v'); then
    echo "check-mpi-free: $c depends on MPI through: $(echo "$found" | sort -u | tr '\n' ' ')" >&2
    echo "  (cargo tree -p $c -e normal -i mpi shows the path)" >&2
    status=1
  fi
done
[ $status -eq 0 ] || exit $status

# A PATH holding everything of the current PATH but MPI's programs.
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
IFS=: read -r -a dirs <<< "$PATH"
for d in "${dirs[@]}"; do
  [ -d "$d" ] || continue
  for f in "$d"/*; do
    name=${f##*/}
    case $name in
      mpicc*|mpicxx*|mpic++*|mpif*|mpiexec*|mpirun*|orterun|prterun|prte|hydra*|mpichversion|ompi_info) continue ;;
    esac
    [ -e "$bin/$name" ] || ln -s "$f" "$bin/$name"
  done
done
if PATH=$bin command -v mpicc >/dev/null; then
  echo "check-mpi-free: mpicc is still reachable on the reduced PATH" >&2
  exit 1
fi

args=()
for c in "${crates[@]}"; do args+=(-p "$c"); done
echo "check-mpi-free: building and testing ${crates[*]} with no MPI reachable" >&2
env -u MPICC -u MPI_PKG_CONFIG PATH="$bin" PKG_CONFIG_LIBDIR=/nonexistent PKG_CONFIG_PATH= \
  CARGO_TARGET_DIR=target/mpi-free "$CARGO" test "${args[@]}"
echo "check-mpi-free: ${crates[*]} build and pass without MPI" >&2
