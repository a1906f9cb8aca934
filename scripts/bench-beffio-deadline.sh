#!/usr/bin/env bash
# Does a b_eff_io run end on time on a loaded machine, and what do its global termination
# checks and the steps between patterns cost there? RUNS runs of
#   mpirun -n 4 --oversubscribe b_eff_io -MB 64 -T $T -N 4 -p SCRATCH --json …
# (4 ranks on this machine's cores, one partition of 4, so the scheduled time is T), each
# beside a competing CPU load: one busy process per core (`yes > /dev/null`), started
# before the run and stopped after it. Wall time is mpirun's, start-up included. From
# each run's JSON: every pattern's share of its time spent in termination checks
# (check_s / time_s), per access method, and the partition's time outside the patterns'
# timed windows (wall_time_s − Σ time_s).
#
# OLD_BEFFIO=path adds a second variant, that binary run the same way, interleaved with
# the first (the order alternates), so a build from before a change is measured in the
# same moments. BEFFIO overrides target/release/b_eff_io.
# Raw rows in bench/out/beffio-deadline.tsv and the runs' JSON beside it, the summary on
# stdout and in bench/out/beffio-deadline.md (quoted in BENCHMARKS.md), every pattern's
# share in bench/out/beffio-deadline-patterns.md.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${RUNS:-10}
T=${T:-30}
beffio=${BEFFIO:-target/release/b_eff_io}
old=${OLD_BEFFIO:-}
out=bench/out
mkdir -p "$out"
raw="$out/beffio-deadline.tsv"
: > "$raw"
rm -f "$out"/beffio-deadline-*.json
scratch=$(mktemp -d /var/tmp/xylem-deadline.XXXXXX)
hogs=()
stop_hogs() {
  for pid in "${hogs[@]}"; do kill "$pid" 2> /dev/null || true; done
  for pid in "${hogs[@]}"; do wait "$pid" 2> /dev/null || true; done
  hogs=()
}
trap 'stop_hogs; rm -rf "$scratch"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# run VARIANT RUN BINARY: one loaded run, its wall time appended.
run() {
  local variant=$1 i=$2 binary=$3 t0 t1 code=0
  for ((c = 0; c < $(nproc); c++)); do
    yes > /dev/null &
    hogs+=($!)
  done
  t0=$(date +%s.%N)
  mpirun -n 4 --oversubscribe --bind-to none "$binary" -MB 64 -T "$T" -N 4 -p "$scratch" \
    -f "$scratch/b_eff_io" --json "$out/beffio-deadline-$variant-$i.json" \
    > "$out/beffio-deadline-$variant-$i.txt" 2>&1 || code=$?
  t1=$(date +%s.%N)
  stop_hogs
  if ((code != 0)); then
    echo "bench-beffio-deadline: $variant run $i exited with $code (see $out/beffio-deadline-$variant-$i.txt)" >&2
    exit 1
  fi
  echo -e "$variant\t$i\t$T\t$(echo "$t1 - $t0" | bc)" >> "$raw"
}

for ((i = 1; i <= runs; i++)); do
  echo "bench-beffio-deadline: run $i/$runs" >&2
  if [ -z "$old" ] || ((i % 2)); then
    run new "$i" "$beffio"
    [ -z "$old" ] || run old "$i" "$old"
  else
    run old "$i" "$old"
    run new "$i" "$beffio"
  fi
done

python3 - "$raw" "$runs" "$T" "$(nproc)" "$out" <<'PY' | tee "$out/beffio-deadline.md"
import collections, json, statistics, sys
raw, runs, T, cores, out = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
walls = collections.defaultdict(list)
for line in open(raw):
    variant, _, t, wall = line.split("\t")
    walls[variant].append(float(wall) / float(t))
print(f"mpirun -n 4 b_eff_io -MB 64 -T {T:g} -N 4, {runs} runs, each beside {cores} busy "
      f"processes (one per core), wall time (start-up included) over T:\n")
print("| binary | runs | median wall/T | largest wall/T |")
print("|---|---|---|---|")
names = {"new": "this build", "old": "before (OLD_BEFFIO)"}
variants = [v for v in ["new", "old"] if walls[v]]
for variant in variants:
    w = walls[variant]
    print(f"| {names[variant]} | {len(w)} | {statistics.median(w):.3f} | {max(w):.3f} |")

# Per pattern and access method: check_s / time_s in every run; per partition the time
# outside the timed windows.
share = {v: collections.defaultdict(list) for v in variants}
checks = {v: collections.defaultdict(list) for v in variants}
checks_of = {v: collections.defaultdict(list) for v in variants}
untimed = {v: [] for v in variants}
for variant in variants:
    for i in range(1, runs + 1):
        doc = json.load(open(f"{out}/beffio-deadline-{variant}-{i}.json"))
        for part in doc["partitions"]:
            timed = 0.0
            for access, patterns in part["access"].items():
                for p in patterns:
                    timed += p["time_s"]
                    checks[variant][access].append(p["checks"])
                    checks_of[variant][(access, p["number"])].append(p["checks"])
                    if p["time_s"] > 0:
                        share[variant][(access, p["number"])].append(p["check_s"] / p["time_s"])
            untimed[variant].append((part["wall_time_s"] - timed, part["wall_time_s"]))
print("\nTermination checks' share of each pattern's time (check_s / time_s), per access "
      "method: the median over all patterns and runs, the largest of the patterns' "
      "medians over the runs (and its pattern), the patterns whose median is above 5 %:\n")
print("| binary | access | checks per pattern (median) | median share | largest pattern median | patterns > 5 % |")
print("|---|---|---|---|---|---|")
for variant in variants:
    for access in ["write", "rewrite", "read"]:
        rows = {n: s for (a, n), s in share[variant].items() if a == access}
        every = [x for s in rows.values() for x in s]
        medians = {n: statistics.median(s) for n, s in rows.items()}
        worst = max(medians, key=medians.get)
        over = sorted(n for n, m in medians.items() if m > 0.05)
        print(f"| {names[variant]} | {access} | {statistics.median(checks[variant][access]):g} | "
              f"{100 * statistics.median(every):.1f} % | {100 * medians[worst]:.1f} % (pattern {worst}) | "
              f"{len(over)}{': ' + ', '.join(map(str, over)) if over else ''} |")
# Every pattern's median share, per access method and binary, in a file of its own.
with open(f"{out}/beffio-deadline-patterns.md", "w") as f:
    f.write("Termination checks' share of each pattern's time (check_s / time_s), the median "
            "over the runs, and the checks per pattern (median), per access method:\n\n")
    head = " | ".join(f"{names[v]} {a}" for a in ["write", "rewrite", "read"] for v in variants)
    f.write(f"| pattern | {head} |\n|---|" + "---|" * (3 * len(variants)) + "\n")
    numbers = sorted({n for v in variants for (_, n) in share[v]})
    for n in numbers:
        cells = []
        for access in ["write", "rewrite", "read"]:
            for v in variants:
                s = share[v].get((access, n))
                k = checks_of[v].get((access, n), [])
                cells.append(f"{100 * statistics.median(s):.1f} % ({statistics.median(k):g})" if s else "–")
        f.write(f"| {n} | " + " | ".join(cells) + " |\n")
print(f"\nEvery pattern's share: {out}/beffio-deadline-patterns.md")
print("\nTime outside the patterns' timed windows (opens, closes, views, agreements), per run:\n")
print("| binary | median s | largest s | median share of the partition's wall time |")
print("|---|---|---|---|")
for variant in variants:
    u = untimed[variant]
    print(f"| {names[variant]} | {statistics.median(x for x, _ in u):.2f} | "
          f"{max(x for x, _ in u):.2f} | {100 * statistics.median(x / w for x, w in u):.1f} % |")
PY
