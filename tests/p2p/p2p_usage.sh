#!/usr/bin/env bash
# `mooncake p2p` usage errors, without mpirun: each row exits 2 with one line on stderr naming
# the option (nothing on stdout, no MPI started: the row's own TMPDIR, where Open MPI's
# singleton init would leave a session folder, stays empty); --help exits 0.
# Usage: p2p_usage.sh MOONCAKE
set -u
mooncake=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/mooncake-p2p-usage.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo data >"$work/file"
printf 'p2p.piece_size = 2XB\n' >"$work/bad.ini"
# arguments (split on spaces) | what the error line must name
rows=(
  "--dest $work/d|source"
  "--source $work/file|dest"
  "--source $work/file --in-memory --dest $work/d|dest"
  "--source $work/file --dest $work/d --copies some|copies"
  "--source $work/file --dest $work/d --p2p.piece_size 1KiB|p2p.piece_size"
  "--source $work/file --dest $work/d --p2p.piece_size 4XB|p2p.piece_size"
  "--source $work/file --dest $work/d --p2p.peer_timeout 50ms|p2p.peer_timeout"
  "--source $work/file --dest $work/d --p2p.inflight_per_peer 0|p2p.inflight_per_peer"
  "--source $work/file --dest $work/d --source-ranks 0,0|source-ranks"
  "--source $work/file --dest $work/d --source-ranks x|source-ranks"
  "--source $work/file --dest $work/d --fault.kill 3|fault.kill"
  "--source $work/file --dest $work/d --fault.corrupt 2|fault.corrupt"
  "--source $work/file --dest $work/d --transport.data_path pigeon|transport.data_path"
  "--source $work/file --dest $work/d --name a/b|name"
  "--source $work/missing --dest $work/d|$work/missing"
  "--source /dev/null --dest $work/d|source = '/dev/null'"
  "--source $work/file --dest $work/d --no-such-option|no-such-option"
  "--source $work/file --dest $work/d --p2p.piece_siz 1MiB|p2p.piece_siz"
  "--config $work/bad.ini --source $work/file --dest $work/d|p2p.piece_size"
  "--config $work/none.ini|$work/none.ini"
)
failures=0
for row in "${rows[@]}"; do
  args=${row%%|*}
  name=${row#*|}
  tmp=$(mktemp -d "$work/tmp.XXXXXX")
  # shellcheck disable=SC2086  # the row's arguments are split on purpose
  TMPDIR=$tmp "$mooncake" p2p $args >"$tmp.out" 2>"$tmp.err"
  code=$?
  err=$(cat "$tmp.err")
  printf '%-3s %s\n' "$code" "${err//$work/TMP}"
  if [[ $code -ne 2 || $(wc -l <"$tmp.err") -ne 1 || -s $tmp.out || $err != *"$name"* ||
        -n $(ls -A "$tmp") ]]; then
    echo "  FAIL: p2p ${args//$work/TMP}: want exit 2, one line naming '${name//$work/TMP}', no MPI"
    failures=$((failures + 1))
  fi
done
"$mooncake" p2p --help >"$work/help" 2>&1 || { echo "FAIL: --help exits non-zero"; failures=$((failures + 1)); }
grep -q -- "--source PATH" "$work/help" || { echo "FAIL: --help does not show the usage"; failures=$((failures + 1)); }
((failures == 0)) || exit 1
echo "PASS: ${#rows[@]} usage errors, --help"
