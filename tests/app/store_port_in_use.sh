#!/usr/bin/env bash
# --store.port naming a port that another process holds (docs/CLIENT.md, store.port): the store
# job exits 2 with one error that says "address already in use" and names the port, and no UCX
# ERROR line (it printed UCX's "bind ... failed" line, then "Device is busy").
# Usage: store_port_in_use.sh MOONCAKE MPIRUN [mpirun flags...]
set -u
mooncake=$1 mpirun=$2
shift 2
mpirun_flags=("$@")
work=$(mktemp -d "${TMPDIR:-/tmp}/mooncake-port-in-use.XXXXXX")
holder=""
cleanup() {
  [[ -n ${holder} ]] && kill "${holder}" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
# A process that holds a port and listens on it, as another service would.
/usr/bin/python3 -c '
import socket, sys, time
s = socket.socket()
s.bind(("0.0.0.0", 0))
s.listen()
print(s.getsockname()[1], flush=True)
time.sleep(300)' >"$work/port" &
holder=$!
for _ in $(seq 1 100); do
  [[ -s "$work/port" ]] && break
  sleep 0.1
done
port=$(<"$work/port")
[[ -n ${port} ]] || { echo "FAIL: no port held"; exit 1; }
timeout -s KILL 120 "${mpirun}" "${mpirun_flags[@]}" -np 2 "${mooncake}" --job.mode store \
  --store.dram 16MiB --store.port "${port}" --out "$work/run" >"$work/out" 2>&1
code=$?
echo "mpirun -np 2 mooncake --job.mode store --store.port ${port} (held): exit ${code}"
grep -v "^ \|^---\|^$" "$work/out" | head -5
failures=0
[[ ${code} == 2 ]] || { echo "FAIL: exit ${code}, want 2"; failures=1; }
grep -q "address already in use.*port ${port}" "$work/out" ||
  { echo "FAIL: no error saying 'address already in use' and naming port ${port}"; failures=1; }
grep -q "UCX  ERROR" "$work/out" && { echo "FAIL: a UCX ERROR line is printed"; failures=1; }
((failures == 0)) || exit 1
echo "PASS"
