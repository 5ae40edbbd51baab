# shellcheck shell=bash
# Role layout helpers shared by launch/mooncake-mpirun and slurm/*.slurm. Source it; pure bash,
# no side effects beyond the functions it defines.

# ini_get FILE KEY: prints the value of KEY (dotted: "transport.tls" means key "tls" in section
# [transport], or the literal key "transport.tls" anywhere; an undotted key is looked up outside
# any section and then in any section). Prints nothing if absent; the last occurrence wins, as
# Boost.Program_options would reject duplicates anyway.
ini_get() {
  local file=$1 key=$2 section="" name=$2
  if [[ ${key} == *.* ]]; then
    section=${key%.*}
    name=${key##*.}
  fi
  awk -v want_sec="${section}" -v want_name="${name}" -v full="${key}" '
    function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t\r]+$/, "", s); return s }
    /^[ \t]*[#;]/ { next }
    /^[ \t]*\[/ { sec = $0; gsub(/[][ \t\r]/, "", sec); next }
    index($0, "=") > 0 {
      k = trim(substr($0, 1, index($0, "=") - 1))
      v = trim(substr($0, index($0, "=") + 1))
      sub(/[ \t]+[#;].*$/, "", v)
      if (k == full && (sec == "" || want_sec == "")) { val = v; found = 1 }
      else if (k == want_name && sec == want_sec) { val = v; found = 1 }
      else if (want_sec == "" && k == want_name) { val = v; found = 1 }
    }
    END { if (found) print val }
  ' "${file}"
}

# expand_roles SPEC [N]: prints one role per line in rank order, exactly as the mooncake binary
# gives ranks their roles (src/cluster/role_table.h):
#   - counts, "conductor:1 store:2 prefill:2 decode:1": conductor first, then the stores, the
#     prefills, the decodes, whatever order the spec lists them in;
#   - a per-rank list, "conductor,store,store,prefill,decode" (commas or spaces): as written;
#   - empty: the default rule for N ranks: rank 0 the conductor; of the other r = N-1 ranks,
#     store = max(1, r/4), decode = max(1, (r-store)/2), prefill = the rest.
# Returns 1 (with a message) on a malformed entry. The binary checks the rest (one conductor, at
# least one rank per role, the count matching the job).
expand_roles() {
  local spec=$1 n=${2:-4} word role count i
  local -A counts=([conductor]=0 [store]=0 [prefill]=0 [decode]=0)
  if [[ -z ${spec//[ ,]/} ]]; then
    local rest=$((n - 1)) store decode
    store=$((rest / 4 > 1 ? rest / 4 : 1))
    decode=$(((rest - store) / 2 > 1 ? (rest - store) / 2 : 1))
    spec="conductor:1 store:${store} prefill:$((rest - store - decode)) decode:${decode}"
  fi
  if [[ ${spec} == *:* ]]; then
    for word in ${spec}; do
      role=${word%%:*}
      count=${word#*:}
      if [[ ${word} != *:* || -z ${counts[${role}]+set} || ! ${count} =~ ^[0-9]+$ ]]; then
        echo "roles = '${spec}': '${word}' is not ROLE:COUNT with ROLE one of" \
          "conductor, store, prefill, decode" >&2
        return 1
      fi
      counts[${role}]=$((counts[${role}] + count))
    done
    for role in conductor store prefill decode; do
      for ((i = 0; i < counts[${role}]; ++i)); do echo "${role}"; done
    done
  else
    for word in ${spec//,/ }; do
      if [[ -z ${counts[${word}]+set} ]]; then
        echo "roles = '${spec}': unknown role '${word}' (allowed: conductor, store, prefill," \
          "decode)" >&2
        return 1
      fi
      echo "${word}"
    done
  fi
}

# roles_spec: the `--roles` value that gives mooncake exactly the table in the global rank_role[]
# (the placement the launcher made), so that the launcher's table and the job's are one by
# construction. Counts ("conductor:1 store:2 prefill:2 decode:2", short whatever the job's size)
# when the table is in the binary's canonical order, else the per-rank list, comma-separated.
# shellcheck disable=SC2154  # rank_role is the documented input
roles_spec() {
  local role spec=""
  local -A n=([conductor]=0 [store]=0 [prefill]=0 [decode]=0)
  for role in "${rank_role[@]}"; do n[${role}]=$((n[${role}] + 1)); done
  for role in conductor store prefill decode; do
    ((n[${role}] > 0)) && spec+="${spec:+ }${role}:${n[${role}]}"
  done
  if [[ $(expand_roles "${spec}") == "$(printf '%s\n' "${rank_role[@]}")" ]]; then
    echo "${spec}"
  else
    (IFS=,; echo "${rank_role[*]}")
  fi
}

# ucx_tls_for VALUE: maps the config's transport.tls (auto | shm | tcp | rdma | a raw UCX_TLS list)
# to a UCX_TLS value as the binary does (src/transport/ucx/ucx_config.h); nothing for auto.
ucx_tls_for() {
  case $1 in
    "" | auto) ;;
    shm) echo "posix,sysv,cma,self" ;;
    tcp) echo "tcp,self" ;;
    rdma) echo "rc,ud,self,posix,sysv,cma" ;;
    *) echo "$1" ;;
  esac
}

# expand_slurm_cpus "2(x3),4" -> "2 2 2 4": SLURM_JOB_CPUS_PER_NODE as one count per node.
expand_slurm_cpus() {
  local part n reps out=()
  for part in ${1//,/ }; do
    if [[ ${part} =~ ^([0-9]+)\(x([0-9]+)\)$ ]]; then
      n=${BASH_REMATCH[1]}
      reps=${BASH_REMATCH[2]}
    else
      n=${part}
      reps=1
    fi
    for ((; reps > 0; --reps)); do out+=("${n}"); done
  done
  echo "${out[*]}"
}

# place_ranks SPREAD: the rank -> host placement. Reads the globals rank_role[] (role per rank),
# hosts[] and slots[] (slots per host); sets rank_host[] (host index per rank) and load[] (ranks
# per host). Ranks of the roles in the comma list SPREAD go one per host, round-robin (the k-th
# such rank of a role on host k mod #hosts); the other ranks, in rank order, go to the first host
# with a free slot, else to the least loaded host relative to its slots.
# shellcheck disable=SC2154  # hosts, slots, rank_role are the documented inputs
place_ranks() {
  local spread=$1
  rank_host=() load=()
  local h r k best role nhosts=${#hosts[@]} np=${#rank_role[@]}
  local -A spread_count=()
  for ((h = 0; h < nhosts; ++h)); do load[h]=0; done
  for ((r = 0; r < np; ++r)); do
    role=${rank_role[r]}
    if [[ ,${spread}, == *,${role},* ]]; then
      k=${spread_count[${role}]:-0}
      rank_host[r]=$((k % nhosts))
      spread_count[${role}]=$((k + 1))
      load[rank_host[r]]=$((load[rank_host[r]] + 1))
    fi
  done
  for ((r = 0; r < np; ++r)); do
    [[ -n ${rank_host[r]:-} ]] && continue
    best=-1
    for ((h = 0; h < nhosts; ++h)); do
      if ((load[h] < slots[h])); then best=${h}; break; fi
    done
    if ((best < 0)); then
      best=0
      for ((h = 1; h < nhosts; ++h)); do
        # Least loaded relative to its slots: load[h]/slots[h] < load[best]/slots[best].
        if ((load[h] * slots[best] < load[best] * slots[h])); then best=${h}; fi
      done
    fi
    rank_host[r]=${best}
    load[best]=$((load[best] + 1))
  done
}
