#!/usr/bin/env bash
# sqmr --validate against plain sqmr: interleaved pairs of runs (the order alternates),
# 0..4096 B, 2 ranks (1 core x 1 neighbour), window 10, Open MPI over shared memory
# (pml ob1, btl self,vader), --bind-to core (BIND=none lets the kernel move the ranks; runs
# here then fall into a fast and a slow mode). Each run reports per size the median of
# REPEAT timed loops (--repeat), so one slow loop does not decide a pair. The summary per
# size: the median average msgs/s of each variant over the pairs, the ratio of the
# medians, and the median and minimum of the per-pair ratios (goal: >= 0.9 up to 4 KiB).
#
# OLD_SQMR=path adds a third variant, that binary with --validate (a build from before a
# change, without --repeat: one loop per size). SQMR overrides target/release/sqmr.
# Raw rows go to bench/out/sqmr-validate.tsv, the summary to stdout and
# bench/out/sqmr-validate.md (quoted in BENCHMARKS.md).
set -euo pipefail
cd "$(dirname "$0")/.."

pairs=${PAIRS:-7}
iters=${ITERS:-100000}
repeat=${REPEAT:-3}
max=${MAX_MSGSIZE:-4096}
sqmr=${SQMR:-target/release/sqmr}
old=${OLD_SQMR:-}
out=bench/out
mkdir -p "$out"
raw="$out/sqmr-validate.tsv"
: > "$raw"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# run VARIANT PAIR BINARY ARGS...: one run, its rows appended as
# variant, pair, msgsize, average msgs/s.
run() {
  local variant=$1 pair=$2 binary=$3
  shift 3
  mpirun -n 2 --bind-to "${BIND:-core}" --mca pml ob1 --mca btl self,vader "$binary" \
    --num_iters "$iters" --max_msgsize "$max" "$@" |
    awk -v v="$variant" -v p="$pair" '!/^#/ && NF == 8 { print v "\t" p "\t" $1 "\t" $3 }' >> "$raw"
}
plain() { run plain "$1" "$sqmr" --repeat "$repeat"; }
validate() { run validate "$1" "$sqmr" --repeat "$repeat" --validate; }
before() { [ -z "$old" ] || run before "$1" "$old" --validate; }

start=$(date +%s)
for ((i = 1; i <= pairs; i++)); do
  echo "bench: validate pair $i/$pairs" >&2
  if ((i % 2)); then plain "$i"; validate "$i"; before "$i"
  else before "$i"; validate "$i"; plain "$i"; fi
done
took=$(($(date +%s) - start))

python3 - "$raw" "$pairs" "$iters" "$repeat" "$took" <<'PY' | tee "$out/sqmr-validate.md"
import collections, statistics, sys
raw, pairs, iters, repeat, took = sys.argv[1:]
rate = collections.defaultdict(dict)  # (variant, size) -> pair -> msgs/s
for line in open(raw):
    variant, pair, size, r = line.split("\t")
    rate[(variant, int(size))][int(pair)] = float(r)
sizes = sorted({s for (_, s) in rate})
before = any(v == "before" for (v, _) in rate)
print(f"Open MPI 4.1.4 over shared memory, 2 ranks (1 core x 1 neighbour), win_size 10, "
      f"num_iters {iters}, --repeat {repeat} (each row the median of {repeat} loops), "
      f"{pairs} interleaved pairs, {took} s; median average msgs/s per size.\n")
head = "| msgsize | plain | --validate | ratio of medians | median pair ratio | min pair ratio |"
rule = "|---:|---:|---:|---:|---:|---:|"
if before:
    head += " before the change, --validate | its ratio |"
    rule += "---:|---:|"
print(head)
print(rule)
short = []
for size in sizes:
    p, v = rate[("plain", size)], rate[("validate", size)]
    mp, mv = statistics.median(p.values()), statistics.median(v.values())
    ratios = [v[k] / p[k] for k in p if k in v]
    row = (f"| {size} | {mp:,.0f} | {mv:,.0f} | {mv / mp:.3f} | "
           f"{statistics.median(ratios):.3f} | {min(ratios):.3f} |")
    if before:
        b = statistics.median(rate[("before", size)].values())
        row += f" {b:,.0f} | {b / mp:.3f} |"
    print(row)
    if mv / mp < 0.9:
        short.append(size)
print()
print("Goal (ratio of medians >= 0.9 at every size): "
      + ("met." if not short else f"not met at {', '.join(map(str, short))} B."))
PY
