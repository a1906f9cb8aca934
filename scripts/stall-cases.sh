#!/usr/bin/env bash
# scripts/stall-cases.sh [NAME]
#
# Runs the stall, time-limit and overrun cases of sqmr and b_eff_io on this machine as an
# operator would meet them (2 ranks; 64 for the overrun), on one MPI installation (NAME:
# openmpi4, the default, or mpich4), and writes a table of each case's exit code, seconds
# to exit, the line that says what happened and what the JSON holds to
# bench/out/stall-cases-NAME.md. A case whose outcome is not the documented one fails the
# script (exit 1) after the table is written. Needs the debug binaries of
# `scripts/with-mpi NAME -- cargo build --workspace --bins` (BIN=DIR overrides where).
# The same cases are tests of `make test` (crates/sqmr/tests/stalls*.rs,
# crates/beffio/tests/stalls.rs); the cases across namespace hosts (a link cut) are in
# crates/sqmr/tests/stalls_across_hosts.rs only.
set -uo pipefail

name=${1:-openmpi4}
root=$(cd "$(dirname "$0")/.." && pwd)
case "$name" in
  # Open MPI's mpirun passes a rank's exit code 6 on; hydra may report the kill of the
  # other rank instead (docs/sqmr.md, "Exit codes").
  openmpi4) launcher=(mpirun --allow-run-as-root --oversubscribe --bind-to none) stalled=6 ;;
  mpich4) launcher=(mpiexec.mpich) stalled=non-zero ;;
  *) echo "stall-cases: NAME is openmpi4 or mpich4, not $name" >&2; exit 2 ;;
esac
bin=${BIN:-$root/target/$name/debug}
for b in sqmr b_eff_io; do
  [ -x "$bin/$b" ] || { echo "stall-cases: $bin/$b is missing; build first" >&2; exit 2; }
done
eval "$("$root/scripts/with-mpi" "$name" --print)"

work=$(mktemp -d /tmp/xylem-stalls.XXXXXX)
trap 'pkill -CONT -f "$work" 2>/dev/null; pkill -KILL -f "$work" 2>/dev/null; rm -rf "$work"' EXIT
out=$root/bench/out/stall-cases-$name.md
mkdir -p "$root/bench/out"
rows=()
failed=0

# record CASE EXPECTED CODE SECONDS SAID JSON
record() {
  local mark=ok
  if [ "$2" = non-zero ]; then
    if [ "$3" = 0 ]; then mark="**expected non-zero**"; failed=1; fi
  elif [ "$3" != "$2" ]; then
    mark="**expected $2**"; failed=1
  fi
  rows+=("| $1 | $3 | $4 | $mark | $5 | $6 |")
  printf 'stall-cases: %-40s exit %-3s %6s s  %s\n' "$1" "$3" "$4" "$6" >&2
}

# ranks PROGRAM DIR: the process ids of PROGRAM's ranks whose command line names DIR.
ranks() { pgrep -f "^$bin/$1 .*$2" | sort -n; }

# wait_for DIR PROGRAM COUNT: until COUNT ranks run (at most 60 s).
wait_for() {
  for _ in $(seq 600); do
    [ "$(ranks "$2" "$1" | wc -l)" -ge "$3" ] && return 0
    sleep 0.1
  done
  return 1
}

# start LOG PROGRAM NP ARGS...: the job in the background; sets job and started.
start() {
  local log=$1 prog=$2 np=$3
  shift 3
  started=$(date +%s.%N)
  "${launcher[@]}" -n "$np" "$bin/$prog" "$@" >"$log.out" 2>"$log.err" &
  job=$!
}

# finish LOG: waits for the job; sets code and seconds.
finish() {
  wait "$job"
  code=$?
  seconds=$(printf '%.1f' "$(echo "$(date +%s.%N) - $started" | bc)")
}

# said LOG PATTERN: the first stderr line matching PATTERN, cut to 200 characters.
said() {
  local l none="(no such line reached the launcher's standard error)"
  l=$(grep -m1 -E "$2" "$1.err" | cut -c1-200 | sed 's/|/\\|/g')
  echo "${l:-$none}"
}

# summary JSON: complete, stopped, warnings and what was kept, in a few words.
summary() {
  python3 - "$1" <<'EOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"no JSON ({type(e).__name__})"); sys.exit()
w = [x.get("kind") for x in d.get("warnings", [])]
if d.get("benchmark") == "sqmr":
    kept = f"{len(d.get('sizes', []))} sizes"
else:
    pats = lambda p: sum(len(p.get("access", {}).get(a, [])) for a in ("write", "rewrite", "read"))
    parts = d.get("partitions", [])
    kept = f"{len(parts)} partitions ({sum(pats(p) for p in parts)} patterns)"
    if d.get("unfinished"):
        kept += f" + {pats(d['unfinished'])} patterns of n={d['unfinished']['processes']}"
stopped = d.get("stopped")
print(f"complete {str(d.get('complete')).lower()}; {kept}; warnings {w or 'none'}"
      + (f"; stopped: {stopped[:60]}" if stopped else ""))
EOF
}

sq=(--num_iters 400000 --max_msgsize 64)

# 1. sqmr, one rank stopped for good.
d=$work/sqmr-stop; mkdir -p "$d"
start "$d/log" sqmr 2 "${sq[@]}" --stall-timeout 10 --json "$d/r.json"
wait_for "$d" sqmr 2 && sleep 3 && kill -STOP "$(ranks sqmr "$d" | tail -1)"
finish "$d/log"; kill -KILL $(ranks sqmr "$d") 2>/dev/null
record "sqmr, a rank stopped for good" "$stalled" "$code" "$seconds" \
  "$(said "$d/log" 'STALL')" "$(summary "$d/r.json")"

# 2. sqmr, one rank stopped 10 s, then continued.
d=$work/sqmr-pause; mkdir -p "$d"
start "$d/log" sqmr 2 "${sq[@]}" --json "$d/r.json"
wait_for "$d" sqmr 2 && sleep 3 && r=$(ranks sqmr "$d" | tail -1) && kill -STOP "$r" && sleep 10 && kill -CONT "$r"
finish "$d/log"
record "sqmr, a rank stopped 10 s" 0 "$code" "$seconds" \
  "$(said "$d/log" 'WARNING')" "$(summary "$d/r.json")"

bf=(--memory-per-process 64M)

# 3. b_eff_io, one rank stopped 20 s in the first partition.
d=$work/beffio-pause; mkdir -p "$d/p"
start "$d/log" b_eff_io 2 -T 30 -p "$d/p" "${bf[@]}" --json "$d/r.json"
wait_for "$d" b_eff_io 2 && sleep 4 && r=$(ranks b_eff_io "$d" | tail -1) && kill -STOP "$r" && sleep 20 && kill -CONT "$r"
finish "$d/log"
record "b_eff_io, a rank stopped 20 s (-T 30)" 0 "$code" "$seconds" \
  "$(said "$d/log" 'WARNING')" "$(summary "$d/r.json")"

# 4. b_eff_io, one rank stopped for good.
d=$work/beffio-stop; mkdir -p "$d/p"
start "$d/log" b_eff_io 2 -T 30 -p "$d/p" "${bf[@]}" --stall-timeout 10 --json "$d/r.json"
wait_for "$d" b_eff_io 2 && sleep 12 && kill -STOP "$(ranks b_eff_io "$d" | tail -1)"
finish "$d/log"; kill -KILL $(ranks b_eff_io "$d") 2>/dev/null
record "b_eff_io, a rank stopped for good" "$stalled" "$code" "$seconds" \
  "$(said "$d/log" 'STALL')" "$(summary "$d/r.json")"

# 5. b_eff_io, SIGTERM to the launcher and the ranks after 25 s (a time limit).
d=$work/beffio-term; mkdir -p "$d/p"
start "$d/log" b_eff_io 2 -T 60 -p "$d/p" "${bf[@]}" --json "$d/r.json" --prefix "$d/r"
wait_for "$d" b_eff_io 2 && sleep 25 && kill -TERM "$job" $(ranks b_eff_io "$d")
finish "$d/log"
record "b_eff_io, SIGTERM after 25 s" non-zero "$code" "$seconds" \
  "$(said "$d/log" 'signal|interrupt')" "$(summary "$d/r.json"); .sum $(wc -l <"$d/r.sum" 2>/dev/null || echo 0) lines, .prot $(grep -c '^n=' "$d/r.prot" 2>/dev/null || echo 0) pattern lines"

# 6. b_eff_io, its run directory removed by another process.
d=$work/beffio-rm; mkdir -p "$d/p"
start "$d/log" b_eff_io 2 -T 20 -p "$d/p" "${bf[@]}" --json "$d/r.json"
# Within a type's patterns (three measured, by the version on disk), not inside an open.
for _ in $(seq 600); do
  python3 -c "import json,sys; u=json.load(open('$d/r.json')).get('unfinished') or {}; sys.exit(len(u.get('access',{}).get('write',[]))<3)" 2>/dev/null && break
  sleep 0.1
done
run=$(ls -d "$d"/p/b_eff_io.* 2>/dev/null | head -1)
rm -rf "$run"
finish "$d/log"
record "b_eff_io, run directory removed" 1 "$code" "$seconds" \
  "$(said "$d/log" 'removed')" "$(summary "$d/r.json")"

# 7. b_eff_io, 64 ranks on this machine's cores.
d=$work/beffio-over; mkdir -p "$d/p"
start "$d/log" b_eff_io 64 -T 2 -p "$d/p" --json "$d/r.json"
finish "$d/log"
record "b_eff_io, 64 ranks on $(nproc) cores (-T 2)" 0 "$code" "$seconds" \
  "$(said "$d/log" 'WARNING')" "$(summary "$d/r.json")"

{
  echo "# Stall cases, $name, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores"
  echo
  echo "Written by \`scripts/stall-cases.sh $name\`."
  echo
  echo "| case | exit | seconds | | what it said | the JSON |"
  echo "|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
} >"$out" || { echo "stall-cases: cannot write $out" >&2; exit 1; }
echo "stall-cases: table in $out" >&2
exit "$failed"
