#!/usr/bin/env bash
# transport.tls = rdma on a host without an RDMA device: the job refuses to start (exit 2, naming
# the option) instead of running on shared memory with only a UCX warning. A CTest skip (77) on
# a host that has RDMA devices.
# Usage: rdma_pin_test.sh MOONCAKE MPIRUN [mpirun args...]
mooncake=$1
shift
if compgen -G "/sys/class/infiniband/*" >/dev/null; then
  echo "SKIP: this host has RDMA devices"
  exit 77
fi
out=$("$@" -np 4 "$mooncake" --transport.tls rdma 2>&1)
rc=$?
grep -m1 "pins RDMA" <<<"$out"
if [[ $rc -ne 2 ]] || ! grep -q "transport.tls = 'rdma' pins RDMA, but this host has no RDMA device" <<<"$out"; then
  echo "FAIL: exit $rc"
  tail -20 <<<"$out"
  exit 1
fi
echo "PASS: exit 2, the option named"
