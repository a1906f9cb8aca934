#!/usr/bin/env bash
# What sqmr's own code costs per iteration of its window loop, in instructions, beside the
# C reference (sqmr 1.1.0 from LLNL's phloem, built here from the source folder the user
# points at), on each MPI installation. valgrind's callgrind counts instructions, not
# seconds: the same count on a loaded machine.
#
# Both programs run 1 core rank and 1 neighbour rank, window 10, over shared memory, once
# with N1 and once with N2 iterations of one message size (0 B and 1 KiB); the difference
# of the instructions executed in each program's own object (not in the MPI library,
# whose polling depends on timing) over the difference of the iterations each printed is
# the cost of one iteration. The MPI calls are the same (10 MPI_Irecv + 10 MPI_Isend + 2
# MPI_Waitall per iteration). Own code is counted per object from the callgrind file
# (scripts/callgrind-own.py): code inlined from other source files (Rust's core
# iterators, C headers) is counted with the object it runs in.
#
#   SQMR_SRC=/path/to/sqmr-1.1.0 MPIS="openmpi4 mpich4 openmpi5 mpich5 intelmpi" \
#     scripts/bench-sqmr-instructions.sh
#
# xylem's sqmr: target/NAME/release/sqmr (built if missing). Not part of the test suite: a
# measurement. Callgrind files in bench/out/callgrind/, the table on stdout and in
# bench/out/sqmr-instructions.md.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
n1=${N1:-1000}
n2=${N2:-3000}
mpis=${MPIS:-openmpi4 mpich4 openmpi5 mpich5 intelmpi}
sizes=${SIZES:-0 1024}
src=${SQMR_SRC:-}
if [ -z "$src" ] || [ ! -f "$src/sqmr.c" ]; then
  echo "bench-sqmr-instructions: set SQMR_SRC to the folder of the C sqmr 1.1.0 (its sqmr.c; LLNL phloem, sqmr-1.1.0/)" >&2
  exit 2
fi
out=$root/bench/out/callgrind
mkdir -p "$out"
rm -f "$out"/cg.* "$out"/*.txt
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

launch() { # MPI: two ranks over shared memory, then the command
  local mpi=$1
  shift
  case $mpi in
    openmpi4) scripts/with-mpi "$mpi" -- mpirun -n 2 --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader "$@" ;;
    openmpi5) scripts/with-mpi "$mpi" -- mpirun -n 2 --oversubscribe --bind-to none --mca pml ob1 --mca btl self,sm "$@" ;;
    mpich4) scripts/with-mpi "$mpi" -- mpiexec.mpich -n 2 "$@" ;;
    intelmpi) I_MPI_FABRICS=shm scripts/with-mpi "$mpi" -- mpiexec -n 2 "$@" ;;
    *) scripts/with-mpi "$mpi" -- mpiexec -n 2 "$@" ;;
  esac
}
rank_var() { # the launcher's rank variable, for callgrind's %q{}
  case $1 in openmpi*) echo OMPI_COMM_WORLD_RANK ;; *) echo PMI_RANK ;; esac
}

# The iterations a run printed for SIZE (the second column of its row).
iters_of() { # FILE SIZE
  awk -v s="$2" '$1 == s && $2 ~ /^[0-9]+$/ { print $2; exit }' "$1"
}

{
  echo "Instructions per iteration in each program's own object (window 10, 1 core rank +"
  echo "1 neighbour, shared memory), from the difference of an N1 = $n1 and an N2 = $n2"
  echo "iteration run under callgrind; C: sqmr 1.1.0 built with the installation's mpicc -O2."
  echo
  echo "| MPI | size | rank | C sqmr 1.1.0 | xylem sqmr | xylem / C |"
  echo "|---|---:|---|---:|---:|---:|"
} > "$out/table.txt"

for mpi in $mpis; do
  xylem=$root/target/$mpi/release/sqmr
  [ -x "$xylem" ] || scripts/with-mpi "$mpi" -- cargo build --release -p sqmr >&2
  ref=$out/sqmr-c-$mpi
  (eval "$(scripts/with-mpi "$mpi" --print)" && "$MPICC" -O2 -o "$ref" "$src/sqmr.c")
  var=$(rank_var "$mpi")
  for size in $sizes; do
    for n in "$n1" "$n2"; do
      for prog in c xylem; do
        exe=$ref
        [ "$prog" = xylem ] && exe=$xylem
        launch "$mpi" valgrind -q --tool=callgrind \
          --callgrind-out-file="$out/cg.$mpi.$size.$n.$prog.%q{$var}" \
          "$exe" --num_cores=1 --num_nbors=1 --num_iters="$n" \
          --min_msgsize="$size" --max_msgsize="$size" > "$out/$mpi.$size.$n.$prog.txt" 2>> "$out/valgrind.log"
      done
    done
    for r in 0 1; do
      role=core
      [ "$r" = 1 ] && role=neighbour
      per=()
      for prog in c xylem; do
        exe=$ref
        [ "$prog" = xylem ] && exe=$xylem
        a=$(scripts/callgrind-own.py "$out/cg.$mpi.$size.$n1.$prog.$r" "$exe")
        b=$(scripts/callgrind-own.py "$out/cg.$mpi.$size.$n2.$prog.$r" "$exe")
        i1=$(iters_of "$out/$mpi.$size.$n1.$prog.txt" "$size")
        i2=$(iters_of "$out/$mpi.$size.$n2.$prog.txt" "$size")
        per+=("$(( (b - a) / (i2 - i1) ))")
      done
      ratio=$(python3 -c "print(f'{${per[1]} / ${per[0]}:.2f}')")
      echo "| $mpi | $size | $r ($role) | ${per[0]} | ${per[1]} | $ratio |" >> "$out/table.txt"
    done
  done
done
tee "$root/bench/out/sqmr-instructions.md" < "$out/table.txt"
