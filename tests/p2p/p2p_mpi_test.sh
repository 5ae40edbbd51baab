#!/usr/bin/env bash
# `mooncake p2p` under a real mpirun (docs/P2P.md). Each mode distributes a folder of 8 files
# (7 from 0 B to 40 MiB, plus one of an odd size) from rank 0 and checks the bytes with cmp:
#   folder4   4 ranks, one copy per host (rank 1 fetches into DIR, ranks 2-3 check it), shm
#   folder6   6 ranks, one copy per rank (DIR/rank<r>), UCX over tcp (reads move as active
#             messages, not mapped copies); pieces must also travel between receivers
#   kill      6 ranks, one copy per rank, rank 3 SIGKILLs itself after 5 pieces; mpirun keeps
#             the survivors (orte_enable_recovery): ranks 1, 2, 4, 5 finish with every byte,
#             rank 3 is named dead, the exit status (rank 0's, status file) is 3
#   corrupt   4 ranks in memory, sources 0 and 1; rank 1 serves every piece damaged: the
#             damaged pieces are detected, read again from rank 0, counted, and the result is OK
# Usage: p2p_mpi_test.sh MODE MOONCAKE MPIRUN [mpirun flags...]
set -u
mode=$1 mooncake=$2 mpirun=$3
shift 3
work=$(mktemp -d "${TMPDIR:-/tmp}/mooncake-p2p-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() {
  echo "FAIL ($mode): $*"
  tail -n 40 "$work/log"
  exit 1
}

src=$work/src/ckpt
mkdir -p "$src/sub"
size_of=(0 1 4095 1048576 1048577 13631489 41943040 12345679)
name_of=(empty one sub/page-1 mib sub/mib+1 sub/13mib+1 forty-mib odd)
for i in "${!size_of[@]}"; do
  head -c "${size_of[i]}" /dev/urandom >"$src/${name_of[i]}"
done
dest=$work/dest
args=(p2p --source "$src" --p2p.piece_size 1MiB --status-file "$work/status")
flags=(-x UCX_TLS=posix,cma,self -x UCX_WARN_UNUSED_ENV_VARS=n)
np=4
case $mode in
  folder4) args+=(--dest "$dest") ;;
  folder6) np=6 args+=(--dest "$dest" --copies rank --transport.tls tcp) flags=(-x UCX_TLS=tcp,self) ;;
  kill) np=6 args+=(--dest "$dest" --copies rank --fault.kill 3@5) flags+=(--mca orte_enable_recovery 1) ;;
  corrupt) args+=(--in-memory --source-ranks 0,1 --fault.corrupt 1) ;;
  *) fail "unknown mode" ;;
esac
start=$(date +%s.%N)
"$mpirun" "$@" "${flags[@]}" -np "$np" "$mooncake" "${args[@]}" >"$work/log" 2>&1
rc=$?
elapsed=$(echo "$(date +%s.%N) - $start" | bc)
sed -n '/^== mooncake p2p/,$p' "$work/log" | grep -v "^\[" | head -20
verdict=$(grep '^p2p result=' "$work/log") || fail "no verdict line (mpirun exit $rc)"
status=$(cat "$work/status" 2>/dev/null || echo none)

same() {  # same DIR: every file of the source, byte for byte, and nothing else
  diff -r "$src" "$1/ckpt" >/dev/null || fail "$1/ckpt differs from the source: $(diff -rq "$src" "$1/ckpt" | head -3)"
}
case $mode in
  folder4)
    [[ $rc -eq 0 && $status == 0 ]] || fail "mpirun exit $rc, status $status (expected 0)"
    [[ $verdict == *"result=OK receivers=3 ok=3 failed=0 dead=0"* ]] || fail "verdict: $verdict"
    same "$dest"
    [[ $(grep -cE '^[0-9]+ +[^ ]+ +share .* OK$' "$work/log") -eq 2 ]] || fail "two ranks must have checked the node's copy"
    ;;
  folder6)
    [[ $rc -eq 0 && $status == 0 ]] || fail "mpirun exit $rc, status $status (expected 0)"
    [[ $verdict == *"result=OK receivers=5 ok=5 failed=0 dead=0"* ]] || fail "verdict: $verdict"
    for r in 1 2 3 4 5; do same "$dest/rank$r"; done
    share=$(sed -n 's/.*source_share=\([0-9.]*\).*/\1/p' <<<"$verdict")
    (($(echo "$share < 1" | bc))) || fail "every piece came from the source (source_share=$share)"
    ;;
  kill)
    [[ $status == 3 ]] || fail "status $status (expected 3: a rank died, the survivors hold every byte)"
    [[ $verdict == *"result=RANK_LOST receivers=5 ok=4 failed=0 dead=1"* ]] || fail "verdict: $verdict"
    grep -qE '^3 +.*DEAD \(no heartbeat' "$work/log" || fail "rank 3 is not named dead"
    for r in 1 2 4 5; do same "$dest/rank$r"; done
    ;;
  corrupt)
    [[ $rc -eq 0 && $status == 0 ]] || fail "mpirun exit $rc, status $status (expected 0)"
    [[ $verdict == *"result=OK receivers=2 ok=2 failed=0 dead=0"* ]] || fail "verdict: $verdict"
    corrupt=$(sed -n 's/.*corrupt=\([0-9]*\).*/\1/p' <<<"$verdict")
    ((corrupt >= 1)) || fail "no damaged piece was detected (corrupt=$corrupt)"
    grep -q "rank 1 served 3 damaged pieces" "$work/log" || fail "rank 1 was not set aside"
    ;;
esac
echo "PASS ($mode, ${elapsed} s): $verdict"
