# shellcheck shell=bash
# Jobs that a script starts, stopped whatever way the script ends (normal exit, an error, Ctrl-C,
# SIGTERM). Source it, start each job (an mpirun, a server) with job_start, and install the traps
# with job_traps CLEANUP: on EXIT, INT and TERM every job still running is stopped first, by PID,
# and only then does CLEANUP run (which may remove the run folder, the connect.json that reaches
# a store job: removed first, nothing could stop the job any more).
#
# Why sessions: Open MPI puts each rank in a process group of its own, so killing mpirun's process
# group (as scripts did) left the ranks running, 4-6 GB each, until killed by hand. A job started
# here runs in a session of its own (setsid, which does not fork in a script: the background
# child is no process group leader), so its PID is the session's id, and every rank stays in
# that session even after mpirun has gone.
#
# job_stop sends SIGTERM to the job's first process (mpirun passes it on; a store job stops in
# order), waits up to MOONCAKE_JOB_GRACE seconds (default 10) for the session to empty, then
# sends SIGKILL to every process still in it, by PID, saying which. Safe under set -e (the
# scripts use it; an EXIT trap runs under it too).

MOONCAKE_JOB_PIDS=()

# job_start CMD...: runs CMD in the background in a session of its own; its PID goes to JOB_PID.
# Redirect the call (job_start cmd >log 2>&1) to redirect the job.
job_start() {
  setsid "$@" &
  JOB_PID=$!
  MOONCAKE_JOB_PIDS+=("${JOB_PID}")
}

# job_run CMD...: job_start CMD, then waits for it and returns its exit status. Unlike a
# foreground command, it lets an INT or TERM trap run at once (bash runs traps only between
# commands, and `wait` is one), so the job is stopped at once too.
job_run() {
  local rc=0
  job_start "$@"
  wait "${JOB_PID}" || rc=$?
  job_forget "${JOB_PID}"
  return "${rc}"
}

# job_forget PID: no longer stopped by job_stop_all (it has ended).
job_forget() {
  local kept=() p
  for p in ${MOONCAKE_JOB_PIDS[@]+"${MOONCAKE_JOB_PIDS[@]}"}; do [[ ${p} == "$1" ]] || kept+=("${p}"); done
  MOONCAKE_JOB_PIDS=(${kept[@]+"${kept[@]}"})
}

# job_members SID: the PIDs of the live (not zombie) processes of session SID, one line.
job_members() {
  { ps -o pid=,stat= -s "$1" 2>/dev/null || true; } | awk '$2 !~ /^Z/ {printf "%s ", $1}'
}

# job_stop PID: stops the job that job_start started as PID, and reaps it. Always returns 0.
job_stop() {
  local sid=$1 grace=${MOONCAKE_JOB_GRACE:-10} left="" i
  [[ ${sid} =~ ^[1-9][0-9]*$ ]] || return 0
  kill -TERM "${sid}" 2>/dev/null || true
  for ((i = 0; i < grace * 10; ++i)); do
    left=$(job_members "${sid}")
    [[ -z ${left} ]] && break
    sleep 0.1
  done
  if [[ -n ${left} ]]; then
    echo "job ${sid}: still running ${grace} s after SIGTERM: SIGKILL to ${left}" >&2
    # shellcheck disable=SC2086  # one PID per word
    kill -KILL ${left} 2>/dev/null || true
  fi
  wait "${sid}" 2>/dev/null || true
  job_forget "${sid}"
  return 0
}

# job_stop_all: job_stop for every job started and not stopped yet.
job_stop_all() {
  local p
  for p in ${MOONCAKE_JOB_PIDS[@]+"${MOONCAKE_JOB_PIDS[@]}"}; do job_stop "${p}"; done
}

# job_traps [CLEANUP]: on EXIT, stops the jobs, then runs CLEANUP (a command, e.g. a function
# that removes the scratch folder); INT and TERM end the script (exit 130 / 143), which runs
# the EXIT trap. The EXIT trap ignores INT and TERM while it runs: a second Ctrl-C (or the
# first, arriving while an error exit is under way) must not cut the stop and cleanup short.
# A trap on INT or TERM set later replaces these.
job_traps() {
  # shellcheck disable=SC2064  # CLEANUP is expanded now, on purpose
  trap "trap '' INT TERM; job_stop_all; ${1:-:}" EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}
