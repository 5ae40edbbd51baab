#!/usr/bin/env bash
# Every script users run (benchmarks/, launch/, slurm/, tools/) answers --help: exit 0, a few
# lines on stdout, nothing started, in seconds, from the repository root. Libraries that are
# sourced (launch/lib-*.sh) are not scripts. Usage: scripts_help.sh REPO_ROOT
set -uo pipefail
cd "${1:?usage: scripts_help.sh REPO_ROOT}" || exit 1
failed=0 checked=0
for f in benchmarks/*.sh benchmarks/*.py launch/* slurm/*.slurm tools/*.sh tools/*.py; do
  [[ -f $f && $f != launch/lib-* ]] || continue
  if [[ ! -x $f ]]; then
    echo "FAIL $f: not executable"
    failed=1
    continue
  fi
  out=$(timeout 20 "./$f" --help 2>/dev/null)
  rc=$?
  lines=$(printf '%s\n' "$out" | grep -c .)
  checked=$((checked + 1))
  if ((rc != 0 || lines < 3)); then
    echo "FAIL $f --help: exit $rc, $lines lines on stdout"
    failed=1
  fi
done
echo "$checked scripts answer --help"
exit $failed
