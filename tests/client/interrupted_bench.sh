#!/usr/bin/env bash
# Ctrl-C on benchmarks/client_vs_baselines.sh leaves no rank behind (issue 30, item 4): the
# script starts a store job (mpirun, 3 ranks), redis-server and the clients; an interrupt while
# the clients run must stop the job's every rank, by PID, before the script removes the
# connect.json that reaches the job. Run as a user's Ctrl-C is: SIGINT to the script's process
# group (the script, and its foreground client), never to the job's own session.
# Usage: interrupted_bench.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
src=$1 build=$2
for f in "${build}/client_bench" "${build}/store_bench"; do
  [[ -x ${f} ]] || { echo "SKIP: no ${f} (a build with MOONCAKE_BENCHMARKS=OFF)"; exit 77; }
done
scratch=$(mktemp -d "${TMPDIR:-/tmp}/mooncake-interrupt.XXXXXX")
script_pid="" seen=""
cleanup() {
  # Whatever the script left running (a rank that survived: the failure this test is about) is
  # ended here, by the PIDs seen, so that a failing run leaks nothing either.
  [[ -n ${script_pid} ]] && kill -KILL -- "-${script_pid}" 2>/dev/null
  # shellcheck disable=SC2086  # one PID per word
  [[ -n ${seen} ]] && kill -KILL ${seen} 2>/dev/null
  rm -rf "${scratch}"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; tail -20 "${scratch}/bench.log"; exit 1; }

# The live processes whose command line names the scratch folder (the job's mpirun and ranks:
# --out <scratch>/client_vs_baselines.X/store-job), as PIDs.
job_pids() {
  local p
  for p in /proc/[0-9]*; do
    [[ ${p#/proc/} == "$$" ]] && continue
    grep -qsF "${scratch}/" "${p}/cmdline" 2>/dev/null || continue
    [[ $(awk '{print $3}' "${p}/stat" 2>/dev/null) == Z ]] && continue
    echo "${p#/proc/}"
  done | paste -sd' '
}

cd "${src}" || exit 1
# Job control on for this one start: the script gets a process group of its own (its PID), as a
# terminal's foreground job has, and SIGINT not ignored (a non-interactive shell's background
# commands start with SIGINT ignored, which no trap of theirs could undo).
set -m
TMPDIR=${scratch} benchmarks/client_vs_baselines.sh --build "${build}" --repeats 1 \
  --min-time 5 --store-dram 64MiB >"${scratch}/bench.log" 2>&1 &
script_pid=$!
set +m
for _ in $(seq 600); do  # 60 s for the job to start and the clients to run
  grep -q "^   C++: " "${scratch}/bench.log" && break
  kill -0 "${script_pid}" 2>/dev/null || fail "client_vs_baselines.sh ended before its clients ran"
  sleep 0.1
done
grep -q "^   C++: " "${scratch}/bench.log" || fail "the store job did not start within 60 s"
sleep 1  # the C++ client is now inside its measurements
seen=$(job_pids)
ranks=0
for p in ${seen}; do
  [[ $(tr '\0' ' ' <"/proc/${p}/cmdline" 2>/dev/null) == "${build}/mooncake --job.mode store"* ]] &&
    ranks=$((ranks + 1))
done
echo "the store job is up: PIDs ${seen} (${ranks} ranks); SIGINT to the script's process group"
((ranks == 3)) || fail "expected 3 ranks of the store job, found ${ranks} (PIDs ${seen})"
kill -INT -- "-${script_pid}"
for _ in $(seq 300); do  # 30 s: the job's grace after SIGTERM is 10 s
  kill -0 "${script_pid}" 2>/dev/null || break
  sleep 0.1
done
kill -0 "${script_pid}" 2>/dev/null && fail "the script still runs 30 s after SIGINT"
wait "${script_pid}"
echo "client_vs_baselines.sh exited $? after SIGINT"
script_pid=""
left=""
for p in ${seen}; do
  [[ -d /proc/${p} && $(awk '{print $3}' "/proc/${p}/stat" 2>/dev/null) != Z ]] && left+="${p} "
done
[[ -z ${left} ]] || fail "still running after the script exited: PIDs ${left}($(for p in ${left}; do
  tr '\0' ' ' <"/proc/${p}/cmdline" | cut -c1-60; echo -n '; '; done))"
compgen -G "${scratch}/client_vs_baselines.*" >/dev/null && fail "the script left its scratch folder"
echo "PASS: no process of the store job survived the interrupt"
