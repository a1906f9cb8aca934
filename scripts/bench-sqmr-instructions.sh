#!/usr/bin/env bash
# What sqmr's own code costs per iteration, in instructions (valgrind's callgrind counts
# instructions, not seconds: the same count on a loaded machine). Both sqmr and the bare
# C loop (bench/sqmr_loop.c) run 1 core x 1 neighbour, window 10, 0-byte messages, over
# shared memory, once with N1 and once with N2 iterations; the difference of the
# instructions executed in each program's own code (not in the MPI library, whose
# polling depends on timing) divided by N2 - N1 is the cost of one iteration.
set -euo pipefail
cd "$(dirname "$0")/.."
n1=${N1:-1000}
n2=${N2:-3000}
out=bench/out/callgrind
mkdir -p "$out"
rm -f "$out"/cg.*
mpicc -O2 -o bench/out/sqmr_loop bench/sqmr_loop.c
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
sqmr=$PWD/target/release/sqmr
loop=$PWD/bench/out/sqmr_loop
mpi=(mpirun -n 2 --bind-to none --mca pml ob1 --mca btl self,vader)
vg=(valgrind -q --tool=callgrind)
for n in "$n1" "$n2"; do
  "${mpi[@]}" "${vg[@]}" --callgrind-out-file="$out/cg.sqmr.$n.%q{OMPI_COMM_WORLD_RANK}" \
    "$sqmr" --num_iters "$n" --max_msgsize 0 > /dev/null 2> "$out/valgrind.log"
  "${mpi[@]}" "${vg[@]}" --callgrind-out-file="$out/cg.c.$n.%q{OMPI_COMM_WORLD_RANK}" \
    "$loop" 1 1 "$n" 10 0 0 > /dev/null 2>> "$out/valgrind.log"
done
own() { # FILE OBJECT: instructions executed in OBJECT's own functions
  callgrind_annotate --threshold=100 --inclusive=no "$1" 2>/dev/null |
    awk -v obj="[$2]" '$NF == obj { gsub(",", "", $1); t += $1 } END { print t + 0 }'
}
{
  echo "Open MPI 4.1.4, btl self,vader, 2 ranks, win_size 10, 0-byte messages;"
  echo "instructions in each program's own code per iteration (20 Irecv/Isend, 2 Waitall),"
  echo "from the difference of a $n1- and a $n2-iteration run under callgrind."
  echo
  echo "| rank | C loop (gcc -O2) | sqmr | ratio C/sqmr |"
  echo "|---:|---:|---:|---:|"
  for r in 0 1; do
    c=$(( ($(own "$out/cg.c.$n2.$r" "$loop") - $(own "$out/cg.c.$n1.$r" "$loop")) / (n2 - n1) ))
    s=$(( ($(own "$out/cg.sqmr.$n2.$r" "$sqmr") - $(own "$out/cg.sqmr.$n1.$r" "$sqmr")) / (n2 - n1) ))
    echo "| $r | $c | $s | $(python3 -c "print(f'{$c / $s:.2f}')") |"
  done
} | tee bench/out/sqmr-instructions.md
