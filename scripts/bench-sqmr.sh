#!/usr/bin/env bash
# sqmr against a bare C loop doing the same Irecv/Isend/Waitall sequence on the same MPI:
# interleaved pairs (the order alternates), 0..1024 B, 1 core x 1 neighbour, Open MPI over
# shared memory (btl self,vader) and over TCP (btl self,tcp). Then peak memory per rank of
# a default sqmr run. Raw numbers go to bench/out/, the summary to stdout and
# bench/out/sqmr-vs-c.md (quoted in BENCHMARKS.md).
set -euo pipefail
cd "$(dirname "$0")/.."

pairs=${PAIRS:-7}
# Enough iterations that every size runs for tens of milliseconds at least (the default
# 4096 gives the 1 KiB size about 2 ms over shared memory: noise, not a measurement).
shm_iters=${SHM_ITERS:-200000}
tcp_iters=${TCP_ITERS:-20000}
out=bench/out
mkdir -p "$out"
raw="$out/sqmr-vs-c.tsv"
: > "$raw"

mpicc -O2 -o "$out/sqmr_loop" bench/sqmr_loop.c
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

run_c() {
  mpirun -n 2 --bind-to none --mca pml ob1 --mca btl "$1" "$out/sqmr_loop" 1 1 "$iters" 10 0 1024 |
    awk -v t="$2" -v p="$3" '{ print t "\tc\t" p "\t" $1 "\t" $3 }' >> "$raw"
}
run_rust() {
  mpirun -n 2 --bind-to none --mca pml ob1 --mca btl "$1" target/release/sqmr \
    --num_iters "$iters" --max_msgsize 1024 |
    awk -v t="$2" -v p="$3" '!/^#/ { print t "\tsqmr\t" p "\t" $1 "\t" $3 }' >> "$raw"
}

for transport in shm tcp; do
  btl=self,vader iters=$shm_iters
  [ "$transport" = tcp ] && btl=self,tcp iters=$tcp_iters
  for ((i = 1; i <= pairs; i++)); do
    echo "bench: $transport pair $i/$pairs" >&2
    if ((i % 2)); then run_c "$btl" "$transport" "$i"; run_rust "$btl" "$transport" "$i"
    else run_rust "$btl" "$transport" "$i"; run_c "$btl" "$transport" "$i"; fi
  done
done

echo "bench: peak memory of a default run" >&2
mem="$out/sqmr-memory.txt"
mpirun -n 2 --bind-to none /usr/bin/time -f "maxrss_kib %M" target/release/sqmr \
  > /dev/null 2> "$mem.err"
grep maxrss_kib "$mem.err" > "$mem"

python3 - "$raw" "$mem" "$pairs" "$shm_iters/$tcp_iters" <<'PY' | tee "$out/sqmr-vs-c.md"
import math, statistics, sys, collections
raw, mem, pairs, iters = sys.argv[1:]
rates = collections.defaultdict(list)
for line in open(raw):
    transport, impl, _pair, size, rate = line.split("\t")
    rates[(transport, impl, int(size))].append(float(rate))
print(f"Open MPI 4.1.4, 2 ranks (1 core x 1 neighbour), win_size 10, num_iters {iters} (shm/tcp), "
      f"{pairs} interleaved pairs; median average msgs/s per size.\n")
for transport in ("shm", "tcp"):
    print(f"| {transport} msgsize | C loop | sqmr | ratio |")
    print("|---:|---:|---:|---:|")
    ratios = []
    for size in sorted({s for (t, _, s) in rates if t == transport}):
        c = statistics.median(rates[(transport, "c", size)])
        r = statistics.median(rates[(transport, "sqmr", size)])
        ratios.append(r / c)
        print(f"| {size} | {c:,.0f} | {r:,.0f} | {r / c:.3f} |")
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
    print(f"| **geometric mean** | | | **{geo:.3f}** |\n")
kib = [int(l.split()[1]) for l in open(mem)]
print(f"Peak resident memory per rank, default run (0 B .. 4 MiB): "
      f"{', '.join(f'{k / 1024:.1f} MiB' for k in kib)}")
PY
