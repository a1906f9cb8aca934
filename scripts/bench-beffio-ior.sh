#!/usr/bin/env bash
# b_eff_io's patterns side by side with IOR on the same bytes, through the same MPI-IO
# library: each round runs b_eff_io, reads from its JSON how many calls each compared
# pattern made, and runs IOR (API MPIIO) with exactly those calls right after, on the same
# scratch folder. Rounds alternate the two tools, so a drift of the machine shows on both.
#
# Compared (l = L: one contiguous chunk per call, which IOR can express):
#   separate files (b_eff_io type 2, patterns 18 l=MPART, 19 l=1 MB, 20 l=32 kB)
#     ior -a MPIIO -F -t l -b calls*l                  (file per process, independent I/O)
#   strided shared file (type 0, patterns 1 l=MPART and 3 l=1 MB)
#     ior -a MPIIO -c -t l -b l -s calls               (one block per rank per segment,
#                                                       collective: each call writes one l
#                                                       per rank, interleaved, as type 0)
# Writes with fsync at their end (-e; b_eff_io syncs each write pattern too), then reads
# of the calls b_eff_io read (a second IOR run on the kept file).
#
# Two switches test where a gap comes from: KEEP=1 runs IOR beside b_eff_io's files, kept
# (`--keep`) until the round's IOR runs are done, so IOR meets the page cache as b_eff_io
# left it; OUTPUTS=DIR puts b_eff_io's JSON, .sum and .prot (rewritten, with fsync, as the
# run goes) in DIR instead of bench/out/beffio-ior, e.g. on another file system.
#
# IOR: $IOR, else `ior` on PATH, else built from the source folder $IOR_SRC (autoconf,
# automake and libtool needed: ./bootstrap; ./configure; make) with the MPI of $MPI.
# Not part of the test suite: a measurement. Raw results in bench/out/beffio-ior/, the
# summary (medians of per-round ratios b_eff_io/IOR) on stdout and in
# bench/out/beffio-ior.md.
#
#   MPI=openmpi4 RANKS=2 ROUNDS=5 T=60 MEM=512M SETTLE=0 IOR_SRC=/path/to/ior scripts/bench-beffio-ior.sh
set -euo pipefail
cd "$(dirname "$0")/.."

mpi=${MPI:-openmpi4}
ranks=${RANKS:-2}
rounds=${ROUNDS:-5}
T=${T:-60}
mem=${MEM:-512M}
# Seconds to wait before each IOR write: on a VM whose balloon takes freed memory back,
# writes into pages just freed (b_eff_io's files, removed a moment before) run several
# times faster than after a pause (BENCHMARKS.md, b_eff_io (1)).
settle=${SETTLE:-0}
keep=${KEEP:-0}
out=bench/out/beffio-ior
outputs=${OUTPUTS:-$out}
scratch=${SCRATCH:-$(mktemp -d /var/tmp/xylem-ior.XXXXXX)}
mkdir -p "$out"
rm -f "$out"/*.json "$out"/*.txt "$out"/*.sum* "$out"/*.prot* "$out"/rows.tsv
trap 'rm -rf "$scratch"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

ior=${IOR:-$(command -v ior || true)}
if [ -z "$ior" ]; then
  if [ -z "${IOR_SRC:-}" ]; then
    echo "bench-beffio-ior: no IOR: set IOR=/path/to/ior, put ior on PATH, or IOR_SRC=/path/to/ior-source to build it" >&2
    exit 2
  fi
  for tool in autoreconf automake libtoolize; do
    command -v "$tool" >/dev/null || {
      echo "bench-beffio-ior: building IOR from $IOR_SRC needs $tool (Debian: apt-get install autoconf automake libtool)" >&2
      exit 2
    }
  done
  build=$(pwd)/$out/ior-build
  if [ ! -x "$build/bin/ior" ]; then
    echo "bench-beffio-ior: building IOR from $IOR_SRC into $build" >&2
    root=$(pwd)
    work=$(mktemp -d)
    cp -a "$IOR_SRC"/. "$work"/
    (cd "$work" && ./bootstrap >/dev/null && eval "$("$root"/scripts/with-mpi "$mpi" --print)" &&
      ./configure --prefix="$build" CC="$MPICC" >/dev/null && make -j2 >/dev/null && make install >/dev/null)
    rm -rf "$work"
  fi
  ior=$build/bin/ior
fi

beffio=target/$mpi/release/b_eff_io
[ -x "$beffio" ] || scripts/with-mpi "$mpi" -- cargo build --release -p beffio >&2

launch() { # the MPI launcher of $mpi for $ranks ranks, then the program
  scripts/mpi-launch.sh "$mpi" "$ranks" "$@"
}

ior_mb_s() { # FILE ACCESS (write|read): the Max(MiB) of IOR's summary line, in MB/s (1e6 B)
  awk -v op="$2" '/^Summary of all tests/ {s = 1; next} s && $1 == op {printf "%.1f", $2 * 1.048576; exit}' "$1"
}

# pattern, b_eff_io type, IOR options of the layout (with CHUNK and CALLS filled in)
compared=(
  "18 separate"
  "19 separate"
  "20 separate"
  "1 strided"
  "3 strided"
)

for ((round = 1; round <= rounds; round++)); do
  echo "bench-beffio-ior: round $round/$rounds" >&2
  json=$out/beffio-$round.json
  kept=()
  [ "$keep" = 1 ] && kept=(--keep)
  mkdir -p "$outputs"
  launch "$beffio" -T "$T" -N "$ranks" -p "$scratch" --memory-per-process "$mem" \
    --json "$outputs/beffio-$round.json" -f "$outputs/beffio-$round" "${kept[@]}" >/dev/null
  [ "$outputs" = "$out" ] || mv "$outputs/beffio-$round".* "$out"/
  for entry in "${compared[@]}"; do
    read -r number layout <<<"$entry"
    read -r chunk wcalls rcalls wbw rbw < <(python3 - "$json" "$number" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
part = doc["partitions"][0]["access"]
w, r = part["write"][n], part["read"][n]
print(w["chunk_bytes"], w["repeats"], r["repeats"], w["bandwidth_mb_s"], r["bandwidth_mb_s"])
PY
)
    file=$scratch/ior-$number
    case $layout in
      separate) wshape=(-F -t "$chunk" -b $((wcalls * chunk))); rshape=(-F -t "$chunk" -b $((rcalls * chunk))) ;;
      strided) wshape=(-c -t "$chunk" -b "$chunk" -s "$wcalls"); rshape=(-c -t "$chunk" -b "$chunk" -s "$rcalls") ;;
    esac
    wlog=$out/ior-$round-$number-write.txt
    rlog=$out/ior-$round-$number-read.txt
    sleep "$settle"
    launch "$ior" -a MPIIO -w -e -k -i 1 -o "$file" "${wshape[@]}" >"$wlog"
    launch "$ior" -a MPIIO -r -i 1 -o "$file" "${rshape[@]}" >"$rlog"
    rm -f "$file" "$file".*
    printf '%s\t%s\t%s\t%s\twrite\t%s\t%s\t%s\n' "$round" "$number" "$layout" "$chunk" "$wcalls" "$wbw" "$(ior_mb_s "$wlog" write)" >>"$out/rows.tsv"
    printf '%s\t%s\t%s\t%s\tread\t%s\t%s\t%s\n' "$round" "$number" "$layout" "$chunk" "$rcalls" "$rbw" "$(ior_mb_s "$rlog" read)" >>"$out/rows.tsv"
  done
  # The kept run directory goes once the round's IOR runs are done.
  [ "$keep" = 1 ] && rm -rf "$scratch"/b_eff_io.*
done

python3 - "$out/rows.tsv" "$mpi" "$ranks" "$rounds" "$T" "$mem" <<'PY' | tee bench/out/beffio-ior.md
import statistics, sys
rows_file, mpi, ranks, rounds, T, mem = sys.argv[1:]
rows = [l.rstrip("\n").split("\t") for l in open(rows_file)]
import os
print(f"b_eff_io against IOR (API MPIIO) on the same calls, {mpi}, {ranks} ranks, "
      f"b_eff_io -T {T} --memory-per-process {mem}, {rounds} rounds, IOR writes after "
      f"{os.environ.get('SETTLE', '0')} s"
      f"{', beside its kept files' if os.environ.get('KEEP') == '1' else ''}"
      f"{', its outputs in ' + os.environ['OUTPUTS'] if os.environ.get('OUTPUTS') else ''}"
      f"; medians of the per-round values.\n")
print("| pattern | layout | chunk | access | calls per rank (median) | b_eff_io MB/s | IOR MB/s | ratio b_eff_io/IOR |")
print("|---:|---|---:|---|---:|---:|---:|---:|")
keys = []
for r in rows:
    k = (r[1], r[2], r[3], r[4])
    if k not in keys:
        keys.append(k)
for k in keys:
    sel = [r for r in rows if (r[1], r[2], r[3], r[4]) == k]
    calls = statistics.median(int(r[5]) for r in sel)
    b = [float(r[6]) for r in sel]
    i = [float(r[7]) for r in sel if r[7]]
    ratios = [float(r[6]) / float(r[7]) for r in sel if r[7] and float(r[7]) > 0]
    ratio = statistics.median(ratios) if ratios else float("nan")
    print(f"| {k[0]} | {k[1]} | {int(k[2]):,} | {k[3]} | {calls:,.0f} | "
          f"{statistics.median(b):,.1f} | {statistics.median(i) if i else float('nan'):,.1f} | {ratio:.2f} |")
PY
