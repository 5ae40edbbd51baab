#!/usr/bin/env bash
# A store job under launch/mooncake-mpirun stopped by a signal (docs/CLIENT.md "Starting and
# stopping the store job"): SIGTERM to the launcher (kill, scancel) and SIGINT to its process
# group (Ctrl-C at a terminal). Each time a store rank is paused (SIGSTOP) when the signal
# comes and resumed 3 s later, so the orderly stop takes longer than the second Open MPI gives
# ranks between its own SIGTERM and SIGKILL (a store rank finishing its spills, or a loaded
# machine, looks the same; job.rpc_timeout = 20s lets the master wait for its answer).
# Asserts: the paused rank was not killed, the launcher exits 0, the job printed `result OK` and
# wrote summary.json, and no rank is left.
# Usage: store_signal_stop.sh SOURCE_DIR MOONCAKE MPIRUN
set -u
src=$1 mooncake=$2 mpirun=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/mooncake-signal-stop.XXXXXX")
launcher_pid=""
cleanup() {
  [[ -n ${launcher_pid} ]] && kill -KILL -- "-${launcher_pid}" 2>/dev/null
  local run pid
  for run in "$work"/sigterm "$work"/ctrl-c; do
    for pid in $(rank_pids "${run}"); do kill -KILL "${pid}" 2>/dev/null; done
  done
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
export MOONCAKE_MPIRUN_ARGS="--mca btl self,vader,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo"

# The PIDs of the ranks whose command line names run folder $1 (--out $1).
rank_pids() {
  local pid
  for pid in $(pgrep -f -- "--out $1( |\$)"); do
    [[ $(readlink "/proc/${pid}/exe" 2>/dev/null) == "$(readlink -f "$mooncake")" ]] && echo "${pid}"
  done
}
# The PID of rank $2 of the job writing to folder $1.
rank_pid() {
  local pid
  for pid in $(rank_pids "$1"); do
    tr '\0' '\n' <"/proc/${pid}/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2" && echo "${pid}"
  done
}

# Job control on: the launcher gets a process group of its own, as a shell's job does, and does
# not start with SIGINT ignored (a non-interactive shell's background jobs do).
set -m
stop_with() {
  local name=$1 how=$2 run="$work/$1"
  "$src/launch/mooncake-mpirun" --mpirun "$mpirun" --bin "$mooncake" --np 3 -- \
    --job.mode store --store.dram 16MiB --job.rpc_timeout 20s --out "$run" >"$work/$name.out" 2>&1 &
  launcher_pid=$!
  for _ in $(seq 1 600); do
    [[ -e "$run/connect.json" ]] && break
    kill -0 "${launcher_pid}" 2>/dev/null || break
    sleep 0.1
  done
  if [[ ! -e "$run/connect.json" ]]; then
    fail "$name: the store never became ready"
    cat "$work/$name.out"
    return
  fi
  local paused
  paused=$(rank_pid "$run" 1)
  if [[ -z ${paused} ]]; then
    fail "$name: no process for store rank 1"
    return
  fi
  kill -STOP "${paused}"
  case ${how} in
    term) kill -TERM "${launcher_pid}" ;;
    ctrl-c) kill -INT -- "-${launcher_pid}" ;;
  esac
  sleep 3
  # Killed while paused: something ended the job before its ranks had stopped it in order.
  kill -CONT "${paused}" 2>/dev/null || fail "$name: store rank 1 was killed before it could stop"
  local code=""
  for _ in $(seq 1 900); do
    kill -0 "${launcher_pid}" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "${launcher_pid}" 2>/dev/null; then
    fail "$name: the launcher still runs 90 s after the signal"
  else
    wait "${launcher_pid}"
    code=$?
  fi
  echo "$name: exit ${code}"
  grep -E "^result|stopping the store|error" "$work/$name.out"
  [[ ${code} == 0 ]] || fail "$name: launch/mooncake-mpirun exited ${code}, want 0"
  grep -qE "^result +OK" "$work/$name.out" || fail "$name: no 'result OK'"
  [[ -s "$run/summary.json" ]] || fail "$name: no summary.json"
  sleep 1
  [[ -z $(rank_pids "$run") ]] || fail "$name: ranks left behind: $(rank_pids "$run")"
  ((failures == 0)) || cat "$work/$name.out"
  launcher_pid=""
}
stop_with sigterm term
stop_with ctrl-c ctrl-c
((failures == 0)) || exit 1
echo "PASS"
