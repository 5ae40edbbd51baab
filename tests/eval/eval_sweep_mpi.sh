#!/usr/bin/env bash
# `mpirun -np 2 mooncake eval --sweep ...` spreads the points over two ranks and gathers the same
# sweep.csv as the serial command (all columns but the wall time).
# Usage: eval_sweep_mpi.sh MOONCAKE MPIRUN [mpirun args...]
set -u
mooncake=$1
shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sweep=(--synthetic.requests 120 --plots=false --sweep "conductor.policy=random,load_balance,cache_aware")
"$mooncake" eval "${sweep[@]}" --out "$dir/serial" >"$dir/serial.log" 2>&1 || {
  cat "$dir/serial.log"; echo "FAIL: the serial sweep"; exit 1; }
"$@" -np 2 "$mooncake" eval "${sweep[@]}" --out "$dir/mpi" >"$dir/mpi.log" 2>&1 || {
  cat "$dir/mpi.log"; echo "FAIL: the sweep under mpirun -np 2"; exit 1; }
grep -q "rank 1:" "$dir/mpi.log" || { cat "$dir/mpi.log"; echo "FAIL: rank 1 ran no point"; exit 1; }
strip() { awk -F, -v OFS=, '{ NF = NF - 1; print }' "$1"; }  # drop the wall_s column
if [[ $(wc -l <"$dir/serial/sweep.csv") -ne 4 ]] || ! diff <(strip "$dir/serial/sweep.csv") <(strip "$dir/mpi/sweep.csv"); then
  echo "FAIL: the gathered sweep.csv differs from the serial one"
  exit 1
fi
echo "PASS: 3 points over 2 ranks, sweep.csv as the serial one"
