#!/usr/bin/env bash
# b_eff_io measured against plain POSIX I/O and against itself:
#  (1) the separate-file write pattern with the largest chunk (pattern 18, type 2, l = MPART)
#      against the same bytes written by the same ranks with plain POSIX write + fsync,
#      each into a file of its own, right after the pattern in the same run and timed the
#      same way (b_eff_io --posix-baseline). Same moment, same memory state: on a VM whose
#      balloon takes freed memory back (this workplace's), writes into pages the host must
#      back anew run several times slower than into pages just freed, so a dd run before or
#      after the benchmark measures the VM rather than the benchmark;
#  (2) the termination protocol: global checks per pattern and the 1 kB patterns' bandwidth,
#      geometric schedule against --check-every-call, interleaved pairs;
#  (3) scheduled against measured wall time of every run.
# Raw JSON in bench/out/beffio/, the summary on stdout and in bench/out/beffio.md.
set -euo pipefail
cd "$(dirname "$0")/.."

pairs=${PAIRS:-5}
ranks=${RANKS:-2}
T=${T:-60}
mem=${MEM:-1G}
out=bench/out/beffio
scratch=${SCRATCH:-$(mktemp -d /var/tmp/xylem-bench.XXXXXX)}
mkdir -p "$out"
rm -f "$out"/*.json "$out"/walls.tsv
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
trap 'rm -rf "$scratch"' EXIT

beffio() { # NAME EXTRA...
  local name=$1; shift
  local t0 t1
  t0=$(date +%s.%N)
  mpirun -n "$ranks" --bind-to none target/release/b_eff_io -T "$T" -N "$ranks" -p "$scratch" \
    --memory-per-process "$mem" --json "$out/$name.json" "$@" > /dev/null
  t1=$(date +%s.%N)
  echo -e "$name\t$T\t$(echo "$t1 - $t0" | bc)" >> "$out/walls.tsv"
}

for ((i = 1; i <= pairs; i++)); do
  echo "bench-beffio: pair $i/$pairs" >&2
  if ((i % 2)); then
    beffio "geo-$i" --posix-baseline; beffio "every-$i" --check-every-call
  else
    beffio "every-$i" --check-every-call; beffio "geo-$i" --posix-baseline
  fi
done

python3 - "$out" "$ranks" "$T" "$mem" "$pairs" <<'PY' | tee bench/out/beffio.md
import json, statistics, sys, glob, os
out, ranks, T, mem, pairs = sys.argv[1:]
def load(kind):
    return [json.load(open(f)) for f in sorted(glob.glob(f"{out}/{kind}-*.json"))]
geo, every = load("geo"), load("every")
print(f"b_eff_io, Open MPI 4.1.4, {ranks} ranks, -T {T} -N {ranks}, --memory-per-process {mem}, "
      f"{pairs} interleaved pairs; medians.\n")
# (1) pattern 18 against plain POSIX writes of the same bytes, same run
p18 = [d["partitions"][0]["access"]["write"][18] for d in geo]
base = [d["partitions"][0]["posix_baseline"] for d in geo]
bw_b = statistics.median(p["bandwidth_mb_s"] for p in p18)
bw_p = statistics.median(b["bandwidth_mb_s"] for b in base)
ratios = [p["bandwidth_mb_s"] / b["bandwidth_mb_s"] for p, b in zip(p18, base)]
print("| (1) write, type 2, l = MPART, same run | MB/s (median) |")
print("|---|---:|")
print(f"| b_eff_io pattern 18 (chunk {p18[0]['chunk_bytes']} B, MPI_File_write, MPI_File_sync included) | {bw_b:,.1f} |")
print(f"| the same bytes, same ranks, plain write + fsync, right after it | {bw_p:,.1f} |")
print(f"| **ratio of medians** | **{bw_b / bw_p:.3f}** |")
print(f"| median of the {len(ratios)} per-run ratios (min {min(ratios):.3f}, max {max(ratios):.3f}) | {statistics.median(ratios):.3f} |\n")
# (2) termination protocol
def pats(ds):
    return [p for d in ds for a in ("write",) for p in d["partitions"][0]["access"][a]]
def kb(ds):
    return statistics.median(p["bandwidth_mb_s"] for p in pats(ds) if p["chunk_bytes"] == 1024)
def checks(ds):
    timed = [p for p in pats(ds) if p["u"] > 0]
    return (statistics.median(p["checks"] for p in timed), statistics.median(p["repeats"] for p in timed))
cg, rg = checks(geo); ce, re_ = checks(every)
print("| (2) termination protocol, write patterns with U > 0 | geometric | every call |")
print("|---|---:|---:|")
print(f"| checks per pattern (median) | {cg:.0f} | {ce:.0f} |")
print(f"| calls per pattern (median) | {rg:.0f} | {re_:.0f} |")
print(f"| 1 kB patterns' write bandwidth, MB/s (median) | {kb(geo):,.1f} | {kb(every):,.1f} |\n")
# (3) wall time
walls = [l.split("\t") for l in open(f"{out}/walls.tsv")]
ratios = [float(w) / float(t) for _, t, w in walls]
print(f"(3) wall time / scheduled time over all {len(walls)} runs (start-up included): "
      f"median {statistics.median(ratios):.3f}, max {max(ratios):.3f}")
PY
