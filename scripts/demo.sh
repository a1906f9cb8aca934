#!/usr/bin/env bash
# The main job on this machine: sqmr on local ranks over a short size range, with the
# table on the terminal and the JSON result in a fresh folder under results/.
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
echo "results in $out/ (results/latest points there):" >&2
ls -1 "$out" | sed 's/^/  /' >&2
