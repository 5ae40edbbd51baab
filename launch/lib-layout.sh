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

# expand_roles "conductor:1 store:2 decode:1" -> prints one role per line in rank order
# (conductor, store, store, decode): the mooncake binary gives ranks their roles in the order the
# `roles` option lists them. A plain per-rank list ("conductor store store decode") is accepted
# too. Returns 1 (with a message) on a malformed entry.
expand_roles() {
  local spec=${1//,/ } entry role count i
  for entry in ${spec}; do
    role=${entry%%:*}
    count=1
    [[ ${entry} == *:* ]] && count=${entry#*:}
    case ${role} in
      conductor | store | prefill | decode) ;;
      *)
        echo "roles: unknown role '${role}' in '${1}' (allowed: conductor store prefill decode)" >&2
        return 1
        ;;
    esac
    if ! [[ ${count} =~ ^[0-9]+$ ]] || ((count < 1)); then
      echo "roles: bad count '${count}' for ${role} in '${1}' (allowed: a positive integer)" >&2
      return 1
    fi
    for ((i = 0; i < count; ++i)); do echo "${role}"; done
  done
}

# ucx_tls_for VALUE: maps the config's transport.tls (shm | tcp | auto | a raw UCX_TLS list) to a
# UCX_TLS value; prints nothing for auto (let UCX choose).
ucx_tls_for() {
  case $1 in
    "" | auto) ;;
    shm) echo "shm,self" ;;
    tcp) echo "tcp,self" ;;
    *) echo "$1" ;;
  esac
}

# expand_slurm_cpus "2(x3),4" -> "2 2 2 4": SLURM_JOB_CPUS_PER_NODE as one count per node.
expand_slurm_cpus() {
  local part n reps out=()
  local IFS=,
  for part in $1; do
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
