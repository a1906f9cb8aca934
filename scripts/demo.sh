#!/usr/bin/env bash
# The main job on this machine: sqmr on local ranks over a short size range, then a
# one-minute b_eff_io on the local disk, tables on the terminal and the results in a
# fresh folder under results/ (results/latest points there).
set -euo pipefail
cd "$(dirname "$0")/.."

stamp=$(date +%Y%m%d-%H%M%S)
out="results/$stamp"
mkdir -p "$out"
ln -sfn "$stamp" results/latest

launcher=(mpirun -n 2)
if [ "$(id -u)" -eq 0 ]; then
  launcher+=(--allow-run-as-root)
fi
launcher+=(--oversubscribe --bind-to none)

echo "== sqmr: 1 core rank x 1 neighbour on this machine, 0 B .. 64 KiB" >&2
"${launcher[@]}" target/release/sqmr --num_iters 2000 --max_msgsize 64K --json "$out/sqmr.json" \
  | tee "$out/sqmr.txt"

echo >&2
echo "== b_eff_io: 2 ranks, partitions 2 and 1, one minute in all, files under $out/" >&2
"${launcher[@]}" target/release/b_eff_io -T 40 -p "$out" --memory-per-process 256M \
  --json "$out/b_eff_io.json" --prefix "$out/b_eff_io" | tee "$out/b_eff_io.txt"

echo >&2
echo "results in $out/ (results/latest points there):" >&2
ls -1 "$out" | sed 's/^/  /' >&2
