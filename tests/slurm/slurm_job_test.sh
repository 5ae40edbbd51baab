#!/usr/bin/env bash
# The slurm test: a real single-node Slurm on 127.0.0.1 runs `sbatch --wait slurm/mooncake.slurm`
# with a tiny config, once per launcher (srun --mpi=pmix, then mpirun inside the allocation).
# Asserts, per job: sbatch --wait exits 0; `scontrol show job` says COMPLETED with ExitCode 0:0;
# the output file ends with mooncake's summary table; runs/<job id>/summary.json accounts for every
# request (total == completed + rejected, lost == 0, total > 0). Then `sbatch --test-only` accepts
# every script in slurm/. The daemons are stopped by PID in an EXIT trap, whatever happens.
#
# With PART = fault instead: one job, the fault layout (configs/serve/faults.ini, 7 ranks) on a
# slice of the conversation trace with a store rank SIGKILLed 4 s in, under srun --mpi=pmix:
# COMPLETED with ExitCode 0:0, nothing lost or failed, the dead rank named, objects re-replicated,
# 0 checksum failures (exit 77, a CTest skip, without the trace).
#
# Usage: slurm_job_test.sh SOURCE_DIR MOONCAKE_BINARY [PART: jobs (default) | fault]
# Env:   SLURM_TEST_KEEP=1 keeps the temporary folder; SLURM_TEST_LAUNCHERS="srun mpirun".
set -euo pipefail

src=$(cd "${1:?usage: slurm_job_test.sh SOURCE_DIR MOONCAKE_BINARY}" && pwd)
bin=$(readlink -f "${2:?usage: slurm_job_test.sh SOURCE_DIR MOONCAKE_BINARY}")
config=configs/slurm/tiny.ini
part=${3:-jobs}
trace=$(readlink -f "${src}/../shared/traces/conversation_trace.jsonl" || true)
if [[ ${part} == fault && ! -r ${trace} ]]; then
  echo "SKIP: ${src}/../shared/traces/conversation_trace.jsonl not found"
  exit 77
fi
launchers=${SLURM_TEST_LAUNCHERS:-srun mpirun}
job_timeout=130 # seconds for one sbatch --wait (it polls, so it lags the job); two fit in the 300 s ctest TIMEOUT

failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
pass() { echo "ok: $*"; }
# expect ACTUAL OP WANTED MESSAGE: passes MESSAGE when `ACTUAL OP WANTED` holds (OP: == or -lt).
expect() {
  local ok=0
  case $2 in
    ==) [[ $1 == "$3" ]] && ok=1 ;;
    -lt) (($1 < $3)) && ok=1 ;;
  esac
  if ((ok)); then pass "$4"; else fail "$4 (got: $1)"; fi
}

# 1. Packages. Installs only what is missing, and says what.
need=()
for tool in slurmctld:slurmctld slurmd:slurmd sbatch:slurm-client munged:munge; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || command -v "/usr/sbin/${tool%%:*}" >/dev/null 2>&1 ||
    need+=("${tool#*:}")
done
if ((${#need[@]} > 0)); then
  need+=(slurm-wlm)
  echo "installing: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  timeout 300 apt-get -o DPkg::Lock::Timeout=120 update -q
  timeout 300 apt-get -o DPkg::Lock::Timeout=120 install -y -q --no-install-recommends "${need[@]}"
fi
export PATH=${PATH}:/usr/sbin

# 2. A private cluster and submit folder; the EXIT trap stops the daemons by PID.
# shellcheck source=tests/slurm/local_slurm.sh
source "${src}/tests/slurm/local_slurm.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mooncake-slurm-test.XXXXXX")
on_exit() {
  local rc=$?
  set +e
  local_slurm_down
  if [[ ${SLURM_TEST_KEEP:-0} == 1 || ${rc} != 0 ]]; then
    echo "kept ${tmp} for inspection"
  else
    rm -rf "${tmp}"
  fi
  exit "${rc}"
}
trap on_exit EXIT
trap 'exit 130' INT TERM
local_slurm_up "${tmp}/slurm" || {
  echo "FAIL: the local Slurm did not come up" >&2
  exit 1
}

# The submit folder looks like a checkout with build/mooncake, so the script's defaults are used.
work=${tmp}/work
mkdir -p "${work}/build"
ln -s "${bin}" "${work}/build/mooncake"
for d in launch slurm configs; do ln -s "${src}/${d}" "${work}/${d}"; done
cd "${work}"

sbatch_extra=()
if (($(nproc) < 4)); then
  sbatch_extra+=(--overcommit) # 4 ranks on fewer cores
fi

# summary.json must account for every request: total == completed + rejected and lost == 0, with
# total > 0. The foundation job (job "foundation") serves no requests: it must instead show no
# errors and every written block verified. The check prints which it applied.
summary_check() {
  local python_bin=/usr/bin/python3
  [[ -x ${python_bin} ]] || python_bin=python3
  "${python_bin}" - "$1" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
r = s["requests"]
t, c, j, l = r["total"], r["completed"], r["rejected"], r["lost"]
print(f"requests: total {t}, completed {c}, rejected {j}, lost {l}")
ok = t == c + j and l == 0
if s.get("job") == "foundation":
    b = s["blocks"]
    print(f"foundation job: errors {s['errors']}, blocks written {b['written']}, "
          f"verified {b['verified']}, checksum failures {b['checksum_failures']}")
    ok = ok and s["errors"] == 0 and b["written"] > 0 and b["verified"] == b["written"] \
        and b["checksum_failures"] == 0
else:
    ok = ok and t > 0
sys.exit(0 if ok else 1)
EOF
}

# The output must end with mooncake's summary table: a "== mooncake summary ==" header, and after
# it only summary rows (no launcher message, no Slurm or MPI error), the last one "result OK".
ends_with_summary_table() {
  local after
  if ! grep -q '^== mooncake summary ==' "$1"; then
    echo "no '== mooncake summary ==' header"
    return 1
  fi
  after=$(sed -n '/^== mooncake summary ==/,$p' "$1" | tail -n +2 | grep -v '^[[:space:]]*$')
  echo "summary table ends with: $(tail -n 1 <<<"${after}")"
  if grep -qE '^(mooncake\.slurm|mooncake-mpirun|srun|slurmstepd|mpirun|\[)|rror:' <<<"${after}"; then
    return 1
  fi
  [[ $(tail -n 1 <<<"${after}") =~ ^result[[:space:]]+OK ]]
}

# 3a. The fault job (PART = fault): a store rank killed mid-replay, the step goes on.
if [[ ${part} == fault ]]; then
  echo "=== sbatch --wait --ntasks=7 slurm/mooncake.slurm configs/serve/faults.ini --fault.kill 1@4s"
  job=$(timeout "${job_timeout}" sbatch --wait --ntasks=7 --time=00:03:00 "${sbatch_extra[@]}" \
    slurm/mooncake.slurm configs/serve/faults.ini --trace "${trace}" --trace.limit 120 \
    --time_scale 4 --fault.kill 1@4s 2>&1 | sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p')
  [[ -n ${job} ]] || { echo "FAIL: sbatch did not submit" >&2; exit 1; }
  grep -vE "PMIX ERROR|UCX +WARN|pending operations" "mooncake-${job}.out" | tail -n 25 || true
  # slurm/mooncake.slurm passes --kill-on-bad-exit=0: the job must not advise passing it.
  if grep -q "note: to survive a rank loss under srun" "mooncake-${job}.out"; then
    fail "fault: the job printed the --kill-on-bad-exit=0 advice although the script passes it"
  else
    pass "fault: no --kill-on-bad-exit=0 advice (the script passes it)"
  fi
  info=$(scontrol show job "${job}" 2>&1 || true)
  expect "$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"${info}")" == COMPLETED \
    "fault: job ${job} is COMPLETED after a store rank was killed"
  expect "$(sed -n 's/.* ExitCode=\([0-9:]*\).*/\1/p' <<<"${info}")" == 0:0 "fault: ExitCode 0:0"
  if /usr/bin/python3 - "runs/${job}/summary.json" <<'EOF'; then
import json, sys
s = json.load(open(sys.argv[1])); r = s["requests"]; e = s["extra"]
dead = [d["rank"] for d in s["dead_ranks"]]
print(f"fault: completed {r['completed']} rejected {r['rejected']} lost {r['lost']} "
      f"failed {r['failed']}, dead {dead}, re-replicated {e['store_objects_rereplicated']:.0f}, "
      f"checksum failures {e['kv_checksum_failures']:.0f}")
sys.exit(0 if r["lost"] == 0 and r["failed"] == 0 and r["completed"] > 0 and dead == [1]
         and e["store_objects_rereplicated"] > 0 and e["kv_checksum_failures"] == 0 else 1)
EOF
    pass "fault: summary.json: nothing lost or failed, rank 1 named dead, objects re-replicated"
  else
    fail "fault: runs/${job}/summary.json missing or wrong"
  fi
  ((failures == 0)) || exit 1
  echo "all slurm fault checks passed"
  exit 0
fi

# 3. One job per launcher.
for launcher in ${launchers}; do
  echo "=== sbatch --wait slurm/mooncake.slurm ${config} (MOONCAKE_LAUNCHER=${launcher})"
  start_ns=$(date +%s%N)
  set +e
  # A 10 s failure timeout: the test checks the launch, not failure detection, and a rank
  # descheduled for a second on a busy test machine must not be a death (docs/RELIABILITY.md).
  out=$(MOONCAKE_LAUNCHER=${launcher} timeout "${job_timeout}" \
    sbatch --wait --time=00:03:00 "${sbatch_extra[@]}" slurm/mooncake.slurm "${config}" \
    --cluster.failure_timeout 10s --job.rpc_timeout 10s 2>&1)
  rc=$?
  set -e
  elapsed_ms=$((($(date +%s%N) - start_ns) / 1000000))
  echo "${out}"
  job=$(sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' <<<"${out}")
  if [[ -z ${job} ]]; then
    fail "${launcher}: sbatch did not submit (rc ${rc})"
    continue
  fi
  echo "--- job ${job} output (mooncake-${job}.out):"
  cat "mooncake-${job}.out" 2>/dev/null || true
  echo "--- end of output"
  expect "${rc}" == 0 "${launcher}: sbatch --wait exits 0"
  info=$(scontrol show job "${job}" 2>&1 || true)
  state=$(sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' <<<"${info}")
  code=$(sed -n 's/.* ExitCode=\([0-9:]*\).*/\1/p' <<<"${info}")
  expect "${state}" == COMPLETED "${launcher}: job ${job} is COMPLETED"
  expect "${code}" == 0:0 "${launcher}: job ${job} has ExitCode 0:0"
  submit=$(sed -n 's/.*SubmitTime=\([^ ]*\).*/\1/p' <<<"${info}")
  end=$(sed -n 's/.* EndTime=\([^ ]*\).*/\1/p' <<<"${info}")
  if [[ -n ${submit} && -n ${end} ]]; then
    slurm_s=$(($(date -d "${end}" +%s) - $(date -d "${submit}" +%s)))
    echo "timing: ${launcher}: submit -> COMPLETED ${slurm_s} s (Slurm's clock);" \
      "sbatch --wait returned after ${elapsed_ms} ms"
    expect "${slurm_s}" -lt 120 "${launcher}: COMPLETED within 2 minutes"
  fi
  if ends_with_summary_table "mooncake-${job}.out"; then
    pass "${launcher}: output ends with the summary table"
  else
    fail "${launcher}: output does not end with the summary table"
  fi
  if [[ -f runs/${job}/summary.json ]] && summary_check "runs/${job}/summary.json"; then
    pass "${launcher}: summary.json accounts for every request"
  else
    fail "${launcher}: runs/${job}/summary.json missing or does not account for every request"
  fi
done

# 3b. The evaluation sweep as one MPI job and as a 2-task job array: both COMPLETED, and the
# array's gathered sweep.csv holds the same header and as many rows as the single job's. Runs only
# once the binary has `mooncake eval --sweep` (its help names --sweep); says SKIP otherwise.
submit_wait() { # prints the job id; extra sbatch arguments first, then the script and its args
  local out
  out=$(timeout "${job_timeout}" sbatch --wait --time=00:03:00 "${sbatch_extra[@]}" "$@" 2>&1) ||
    echo "sbatch: ${out}" >&2
  sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' <<<"${out}"
}
if "${bin}" eval --help 2>&1 | grep -q -- '--sweep'; then
  sweep=(configs/eval/small.ini --sweep "synthetic.requests=40,80,120")
  one=$(submit_wait slurm/eval-sweep.slurm "${sweep[@]}")
  arr=$(submit_wait --array=0-1 slurm/eval-sweep.slurm "${sweep[@]}")
  for j in ${one} ${arr}; do
    state=$(scontrol show job "${j}" 2>&1 | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | sort -u | tr '\n' ' ')
    expect "${state}" == "COMPLETED " "eval sweep: job ${j} (every task) is COMPLETED"
  done
  if [[ -f runs/${one}/sweep.csv && -f runs/${arr}/sweep.csv ]]; then
    expect "$(head -n 1 "runs/${arr}/sweep.csv")" == "$(head -n 1 "runs/${one}/sweep.csv")" \
      "eval sweep: gathered header equals the single job's"
    expect "$(wc -l <"runs/${arr}/sweep.csv")" == "$(wc -l <"runs/${one}/sweep.csv")" \
      "eval sweep: gathered rows equal the single job's ($(wc -l <"runs/${one}/sweep.csv") lines)"
  else
    fail "eval sweep: runs/${one}/sweep.csv or runs/${arr}/sweep.csv missing"
    cat mooncake-sweep-*.out 2>/dev/null | tail -n 40
  fi
else
  echo "SKIP: eval sweep jobs (this mooncake has no 'eval --sweep' yet)"
fi

# 4. Every batch script passes sbatch --test-only (syntax, partitions, resources).
for script in slurm/*.slurm; do
  args=("${sbatch_extra[@]}")
  [[ ${script} == */hetjob.slurm ]] && args=() # its components carry their own resources
  if msg=$(timeout 30 sbatch --test-only "${args[@]}" "${script}" 2>&1); then
    pass "sbatch --test-only ${script}: ${msg##*$'\n'}"
  else
    fail "sbatch --test-only ${script}: ${msg}"
  fi
done

if ((failures > 0)); then
  echo "${failures} check(s) failed; daemon logs in ${tmp}/slurm"
  exit 1
fi
echo "all slurm checks passed"
