#!/usr/bin/env bash
# Pins launch/lib-layout.sh and launch/mooncake-mpirun: role expansion agrees with the binary's own
# role table (checked against `mooncake --dry-run` under a real mpirun), stores spread one per host,
# the rankfile follows the placement, --oversubscribe appears only when a host has more ranks than
# slots, bad layouts exit 2, and a real run through the wrapper ends with the summary.
#
# Usage: launch_layout_test.sh SOURCE_DIR MOONCAKE_BINARY
set -uo pipefail

src=$(cd "${1:?usage: launch_layout_test.sh SOURCE_DIR MOONCAKE_BINARY}" && pwd)
bin=$(readlink -f "${2:?usage: launch_layout_test.sh SOURCE_DIR MOONCAKE_BINARY}")
wrapper=${src}/launch/mooncake-mpirun
# shellcheck source=launch/lib-layout.sh
source "${src}/launch/lib-layout.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mooncake-launch-test.XXXXXX")
trap 'rm -rf "${tmp}"' EXIT

failures=0
check() { # check NAME ACTUAL EXPECTED
  if [[ $2 == "$3" ]]; then
    echo "ok: $1"
  else
    echo "FAIL: $1: got '$2', expected '$3'" >&2
    failures=$((failures + 1))
  fi
}
counts() { expand_roles "$@" | sort | uniq -c | awk '{printf "%s=%s ", $2, $1}'; }

# The default rule, as src/cluster/role_table.h documents it (N = 4: 1/1/1, 6: 1/2/2, 64: 15/24/24).
check "default rule, 4 ranks" "$(counts "" 4)" "conductor=1 decode=1 prefill=1 store=1 "
check "default rule, 6 ranks" "$(counts "" 6)" "conductor=1 decode=2 prefill=2 store=1 "
check "default rule, 64 ranks" "$(counts "" 64)" "conductor=1 decode=24 prefill=24 store=15 "
check "counts go in canonical order" "$(expand_roles "decode:2 store:1 conductor:1 prefill:1" | paste -sd,)" \
  "conductor,store,prefill,decode,decode"
check "a per-rank list is kept as written" "$(expand_roles "conductor,decode store,prefill" | paste -sd,)" \
  "conductor,decode,store,prefill"
expand_roles "conductor:1 gpu:2" 2>/dev/null
check "an unknown role is refused" "$?" "1"
check "ini_get reads a [section] key" \
  "$(printf 'roles = conductor:1 store:1 prefill:1 decode:1\n[transport]\ntls = tcp # why\n' >"${tmp}/a.ini"
    ini_get "${tmp}/a.ini" transport.tls)" "tcp"
check "ini_get reads a top-level key" "$(ini_get "${tmp}/a.ini" roles)" "conductor:1 store:1 prefill:1 decode:1"
check "SLURM_JOB_CPUS_PER_NODE expands" "$(expand_slurm_cpus "2(x3),4")" "2 2 2 4"

# Placement over three hosts: stores one per host, the rest fill free slots in order.
printf 'alpha slots=2\nbeta slots=4\ngamma slots=2\n' >"${tmp}/hosts"
log=$("${wrapper}" --dry-run --hostfile "${tmp}/hosts" --rankfile "${tmp}/rf" \
  --roles "conductor:1 store:3 prefill:2 decode:2" --bin "${bin}" 2>&1)
check "dry run exits 0" "$?" "0"
check "stores land one per host" "$(grep -E '^rank (1|2|3)=' "${tmp}/rf" | sed 's/ slot=.*//' | paste -sd,)" \
  "rank 1=alpha,rank 2=beta,rank 3=gamma"
check "conductor fills the first host" "$(grep '^rank 0=' "${tmp}/rf" | sed 's/ slot=.*//')" "rank 0=alpha"
check "8 ranks in 8 slots: no --oversubscribe" "$(grep -c -- '--oversubscribe' <<<"${log}")" "0"
check "ranks split a host's cores" "$(grep -E '^rank [0-9]+=beta' "${tmp}/rf" | sed 's/.*slot=//' | paste -sd,)" \
  "0,1,2,3"
log=$("${wrapper}" --dry-run --hostfile "${tmp}/hosts" --roles "conductor:1 store:3 prefill:4 decode:4" \
  --bin "${bin}" 2>&1)
check "12 ranks in 8 slots: --oversubscribe, said once per crowded host" \
  "$(grep -c 'slots: adding --oversubscribe' <<<"${log}")" "3"
log=$("${wrapper}" --dry-run --tls tcp --devices lo --bin "${bin}" 2>&1)
check "--tls sets UCX_TLS and the binary's option" \
  "$(grep -o -- '-x UCX_TLS=tcp,self.*--transport.tls tcp --transport.devices lo' <<<"${log}" | wc -l)" "1"
"${wrapper}" --roles "conductor:1 store:1" --bin "${bin}" >/dev/null 2>&1
check "a layout of fewer than 4 ranks exits 2" "$?" "2"

# Agreement with the binary: the roles the wrapper shows are the roles mooncake --dry-run prints.
for layout in "decode:2 store:1 conductor:1 prefill:2" ""; do
  args=(--roles "${layout}")
  [[ -z ${layout} ]] && args=(--np 6)
  want=$("${wrapper}" --dry-run "${args[@]}" --bin "${bin}" | awk '$1 ~ /^[0-9]+$/ {print $1, $2}')
  mpi_args=()
  [[ -n ${layout} ]] && mpi_args=(--roles "${layout}")
  # mpirun's own exit status counts: an empty table from a failed run must not equal an empty
  # table from the wrapper.
  table=$(OMPI_MCA_rmaps_base_oversubscribe=1 timeout 60 mpirun --allow-run-as-root --oversubscribe \
    --bind-to none -np 6 "${bin}" --dry-run "${mpi_args[@]}" 2>&1)
  check "mooncake --dry-run under mpirun exits 0 for '${layout:-default, 6 ranks}'" "$?" "0"
  got=$(awk '$1 ~ /^[0-9]+$/ && $2 ~ /^(conductor|store|prefill|decode)$/ {print $1, $2}' <<<"${table}")
  check "the wrapper shows a role table for '${layout:-default, 6 ranks}'" "$([[ -n ${want} ]] && echo yes)" "yes"
  check "wrapper and binary agree on roles for '${layout:-default, 6 ranks}'" "${got}" "${want}"
done

# The wrapper hands its table to the job (issue 30, item 3: it placed 2/2/2 while mooncake, given
# no layout, ran its default 1/3/2): under the wrapper, mooncake's own --dry-run prints the job's
# table beside the wrapper's, and the two must be the same, rank by rank, for a serving job and
# for the store service, whether the layout is given to the wrapper or after `--`.
wrapper_cases=(
  "--roles|conductor:1 store:2 prefill:2 decode:2|--dry-run"
  "--roles|conductor,decode,store,prefill|--dry-run"
  "--np|5|--dry-run"
  "--roles|conductor:1 store:2|--job.mode store --dry-run"
  "--np|4|--job.mode store --dry-run"
  "|--roles=conductor:1 store:2 prefill:1 decode:1|--dry-run"
)
for c in "${wrapper_cases[@]}"; do
  IFS='|' read -r flag value job_args <<<"${c}"
  wargs=()
  if [[ -n ${flag} ]]; then wargs=("${flag}" "${value}"); fi
  jargs=()
  [[ -z ${flag} ]] && jargs=("${value}")
  # shellcheck disable=SC2206  # job_args is a space-separated list of plain words
  jargs+=(${job_args})
  name="mooncake-mpirun ${wargs[*]} -- ${jargs[*]}"
  log=$(timeout 90 "${wrapper}" --bin "${bin}" "${wargs[@]}" -- "${jargs[@]}" 2>&1)
  check "${name} exits 0" "$?" "0"
  placed=$(grep -E '^  [0-9]+ ' <<<"${log}" | awk '{print $1, $2}' | paste -sd,)
  ran=$(grep -E '^[0-9]+ +(conductor|store|prefill|decode) ' <<<"${log}" | awk '{print $1, $2}' |
    paste -sd,)
  check "${name}: the wrapper shows a table" "$([[ -n ${placed} ]] && echo yes)" "yes"
  check "${name}: the job's table is the wrapper's" "${ran}" "${placed}"
done
log=$("${wrapper}" --bin "${bin}" --roles "conductor:1 store:2 prefill:2 decode:2" \
  -- --job.mode store --dry-run 2>&1)
check "prefill/decode ranks for the store service exit 2" "$?" "2"
check "and the error says the store service takes conductor and store ranks only" \
  "$(grep -c 'takes one conductor and store ranks only' <<<"${log}")" "1"
"${wrapper}" --bin "${bin}" --roles "conductor:1 store:3" -- --roles "conductor:1 store:2" \
  --job.mode store >/dev/null 2>&1
check "two different layouts (wrapper and after --) exit 2" "$?" "2"

# slurm/mooncake.slurm on a pretend 3-node allocation (4 CPUs each): fake srun, mpirun and
# scontrol on PATH record what the script asks for. Stores must go one per node under both
# launchers, and 8 ranks in 12 CPUs need no overcommit.
fake=${tmp}/fakebin
mkdir -p "${fake}" "${tmp}/sub/build" "${tmp}/sub/configs"
ln -s "${bin}" "${tmp}/sub/build/mooncake"
ln -s "${src}/launch" "${tmp}/sub/launch"
echo "roles = conductor:1 store:3 prefill:2 decode:2" >"${tmp}/sub/configs/three.ini"
cat >"${fake}/scontrol" <<'EOF'
#!/bin/bash
# scontrol show hostnames A,B,C
tr , '\n' <<<"$3"
EOF
cat >"${fake}/srun" <<'EOF'
#!/bin/bash
echo "$*" >"${FAKE_LOG}.args"
paste -sd, "${SLURM_HOSTFILE}" >"${FAKE_LOG}.hosts"
# Plays the ranks: the run folder's summary, and rank 0's exit status when asked for one.
while (($#)); do
  [[ $1 == --out ]] && { mkdir -p "$2"; echo '{}' >"$2/summary.json"; }
  [[ $1 == --job.status_file ]] && echo 0 >"$2"
  shift
done
EOF
cat >"${fake}/mpirun" <<'EOF'
#!/bin/bash
echo "$*" >"${FAKE_LOG}.args"
while (($#)); do
  case $1 in
    --rankfile) sed 's/ slot=.*//; s/.*=//' "$2" | paste -sd, >"${FAKE_LOG}.hosts" ;;
    --out) mkdir -p "$2"; echo '{}' >"$2/summary.json" ;;
    --job.status_file) echo 0 >"$2" ;;
  esac
  shift
done
EOF
chmod +x "${fake}"/*
for launcher in srun mpirun; do
  (cd "${tmp}/sub" && PATH=${fake}:${PATH} FAKE_LOG=${tmp}/${launcher} MOONCAKE_LAUNCHER=${launcher} \
    SLURM_JOB_ID=42 SLURM_SUBMIT_DIR=${tmp}/sub SLURM_JOB_NODELIST=n1,n2,n3 \
    SLURM_JOB_CPUS_PER_NODE="4(x3)" SLURM_NTASKS=8 \
    bash "${src}/slurm/mooncake.slurm" configs/three.ini) >"${tmp}/${launcher}.out" 2>&1
  check "mooncake.slurm (${launcher}) on 3 nodes exits 0" "$?" "0"
  check "mooncake.slurm (${launcher}) places stores one per node" "$(cat "${tmp}/${launcher}.hosts" 2>&1)" \
    "n1,n1,n2,n3,n1,n1,n2,n2"
  check "mooncake.slurm (${launcher}): 8 ranks in 12 CPUs, no overcommit" \
    "$(grep -cE -- '--overcommit|--oversubscribe' "${tmp}/${launcher}.args")" "0"
done
check "srun gets PMIx and the arbitrary distribution" \
  "$(grep -o -- '--mpi=pmix --ntasks=8 --distribution=arbitrary' "${tmp}/srun.args")" \
  "--mpi=pmix --ntasks=8 --distribution=arbitrary"

# A real run through the wrapper (4 ranks on this machine, shared memory), on a 10 s failure
# timeout: it checks the launch, not failure detection (docs/RELIABILITY.md).
(cd "${tmp}" && timeout 120 "${wrapper}" --bin "${bin}" --tls shm -- --out "${tmp}/run" \
  --cluster.failure_timeout 10s --job.rpc_timeout 10s) >"${tmp}/run.log" 2>&1
check "a run through the wrapper exits 0" "$?" "0"
check "and ends with result OK" "$(grep -v '^[[:space:]]*$' "${tmp}/run.log" | tail -n 1 | awk '{print $1, $2}')" \
  "result OK"

if ((failures > 0)); then
  echo "${failures} check(s) failed"
  cat "${tmp}/run.log" >&2
  exit 1
fi
echo "all launch checks passed"
