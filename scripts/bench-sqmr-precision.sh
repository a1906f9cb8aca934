#!/usr/bin/env bash
# What `sqmr --precision P` costs against fixed iteration counts that give the same
# run-to-run spread. RUNS rounds; each round runs, one after the other (so that the
# machine's slow and fast moments fall on every configuration alike):
#   - sqmr --precision P (each size repeated until the 95 % interval of its median is
#     within P % of the median, or the time cap),
#   - plain sqmr (one loop per size) at each iteration count of LADDER.
# 2 ranks (1 core x 1 neighbour), window 10, MIN..MAX bytes, Open MPI over shared memory
# (pml ob1, btl self,vader), --bind-to none.
#
# Per configuration: the seconds spent measuring (the JSON's per-size wall_s, summed;
# start-up excluded) and the wall time of the whole mpirun, medians over the rounds; the
# run-to-run spread per size, (max - min) / median of the row's average msgs/s over the
# rounds, summarised by its median and worst size. The fixed count that reaches the
# precision runs' median spread is then named, with what it costs.
# JSON of every run in bench/out/sqmr-precision/, the summary on stdout and in
# bench/out/sqmr-precision.md (quoted in BENCHMARKS.md).
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${RUNS:-5}
precision=${PRECISION:-2}
cap=${MAX_TIME_PER_SIZE:-10}
ladder=${LADDER:-"4096 16384 65536 262144 1048576"}
min=${MIN_MSGSIZE:-8}
max=${MAX_MSGSIZE:-1024}
sqmr=${SQMR:-target/release/sqmr}
out=bench/out
dir="$out/sqmr-precision"
rm -rf "$dir"
mkdir -p "$dir"
walls="$dir/walls.tsv"
: > "$walls"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# run NAME ROUND ARGS...: one run, its JSON kept, its wall time appended.
run() {
  local name=$1 round=$2
  shift 2
  local t0 t1
  t0=$(date +%s.%N)
  mpirun -n 2 --bind-to none --mca pml ob1 --mca btl self,vader "$sqmr" \
    --min_msgsize "$min" --max_msgsize "$max" --json "$dir/$name-$round.json" "$@" > /dev/null
  t1=$(date +%s.%N)
  awk -v n="$name" -v r="$round" -v a="$t0" -v b="$t1" 'BEGIN { print n "\t" r "\t" b - a }' >> "$walls"
}

start=$(date +%s)
for ((r = 1; r <= runs; r++)); do
  echo "bench: precision round $r/$runs" >&2
  run "precision-$precision" "$r" --precision "$precision" --max-time-per-size "$cap"
  for n in $ladder; do
    run "fixed-$n" "$r" --num_iters "$n"
  done
done
took=$(($(date +%s) - start))

python3 - "$dir" "$walls" "$runs" "$precision" "$cap" "$min" "$max" "$took" "$ladder" <<'PY' | tee "$out/sqmr-precision.md"
import collections, glob, json, os, statistics, sys
d, walls, runs, precision, cap, lo, hi, took, ladder = sys.argv[1:]
wall = collections.defaultdict(list)
for line in open(walls):
    name, _, seconds = line.split("\t")
    wall[name].append(float(seconds))
configs = [f"precision-{precision}"] + [f"fixed-{n}" for n in ladder.split()]
rows = {}
for name in configs:
    docs = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(d, f"{name}-*.json")))]
    measuring = statistics.median(sum(s["wall_s"] for s in doc["sizes"]) for doc in docs)
    by_size = collections.defaultdict(list)
    samples = []
    stops = collections.Counter()
    for doc in docs:
        for s in doc["sizes"]:
            by_size[s["msgsize"]].append(s["rates"]["average"]["msgs_per_s"])
            samples.append(len(s["samples"]))
            stops[s["stopped_by"]] += 1
    spread = {size: (max(v) - min(v)) / statistics.median(v) for size, v in by_size.items()}
    rows[name] = dict(
        measuring=measuring,
        wall=statistics.median(wall[name]),
        spread=statistics.median(spread.values()),
        worst=max(spread.items(), key=lambda kv: kv[1]),
        samples=statistics.median(samples),
        stops=stops,
        iters=docs[0]["config"]["num_iters"],
    )
print(f"Open MPI 4.1.4 over shared memory, 2 ranks (1 core x 1 neighbour), win_size 10, "
      f"{lo}..{hi} B, {runs} rounds (configurations interleaved), {took} s in all. Spread: "
      f"per size (max - min) / median of the row's average msgs/s over the rounds.\n")
print("| configuration | num_iters | loops per size (median) | measuring s (median) "
      "| mpirun wall s (median) | spread, median over sizes | worst size |")
print("|---|---:|---:|---:|---:|---:|---:|")
for name in configs:
    r = rows[name]
    label = (f"`--precision {precision}` (cap {cap} s/size; "
             + ", ".join(f"{k}: {v}" for k, v in sorted(r["stops"].items())) + ")"
             if name.startswith("precision") else "fixed, 1 loop per size")
    print(f"| {label} | {r['iters']} | {r['samples']:g} | {r['measuring']:.2f} | "
          f"{r['wall']:.2f} | {100 * r['spread']:.1f} % | "
          f"{100 * r['worst'][1]:.1f} % ({r['worst'][0]} B) |")
p = rows[configs[0]]
match = next((n for n in configs[1:] if rows[n]["spread"] <= p["spread"]), None)
print()
if match:
    m = rows[match]
    print(f"Fixed iterations reach the spread of `--precision {precision}` "
          f"({100 * p['spread']:.1f} %) at num_iters {m['iters']} ({100 * m['spread']:.1f} %): "
          f"{m['measuring']:.2f} s of measuring against {p['measuring']:.2f} s "
          f"(ratio {m['measuring'] / p['measuring']:.2f}), mpirun wall {m['wall']:.2f} s "
          f"against {p['wall']:.2f} s.")
else:
    best = min(configs[1:], key=lambda n: rows[n]["spread"])
    b = rows[best]
    print(f"No fixed count of the ladder reaches the spread of `--precision {precision}` "
          f"({100 * p['spread']:.1f} %); the closest, num_iters {b['iters']}, gives "
          f"{100 * b['spread']:.1f} % in {b['measuring']:.2f} s of measuring against "
          f"{p['measuring']:.2f} s.")
PY
