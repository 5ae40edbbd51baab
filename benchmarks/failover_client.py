#!/usr/bin/python3
"""failover_client.py: one client of a store job with a standby conductor, timed through the
active conductor's loss (benchmarks/failover.sh runs it 5 times). It puts objects whose bytes
are a function of their key and reads earlier ones back in a loop; after --warmup seconds it
SIGKILLs --victim (the active conductor's PID) and goes on. A client library that follows the
master on its own (its setup takes failover_timeout) finds the new conductor itself: a failed
call is then only counted; with one that does not, the loop attaches again with the connection
file once the file names another conductor (the new one rewrites it). It stops --after steps
after the file changed, reads back every acknowledged object and prints one JSON line:

  {"acked": N, "lost": N, "pause_ms": longest gap between two completed steps,
   "reattached": N, "failed_calls": N, "follows": true|false, "steps_after": N,
   "master_before": R, "master_after": R}

  failover_client.py --connect CONNECT_FILE --victim PID [--warmup 2] [--after 100]
                     [--deadline 120]
Exit status 1 when the conductor never changed within --deadline or an object was lost.
"""
import argparse
import json
import os
import signal
import sys
import time

import numpy as np

SIZES = [4096, 65543, 256 << 10]


def value(key, size):
    """The bytes stored under KEY: byte i is (seed + 131 i) mod 251 (tests/client/values.py)."""
    i = np.arange(size, dtype=np.uint64)
    return ((sum(key.encode()) % 251 + 131 * i) % 251).astype(np.uint8).tobytes()


def master_rank(connect):
    try:
        with open(connect) as f:
            return json.load(f)["master"]["rank"]
    except (OSError, ValueError, KeyError):
        return None


def setup(mooncake_store, connect):
    """(client or None, whether it follows the master on its own)."""
    store = mooncake_store.MooncakeDistributedStore()
    try:
        return (store if store.setup(connect, timeout=1.0, failover_timeout=30.0) == 0 else None,
                True)
    except TypeError:  # a client library that does not follow: no failover_timeout
        return (store if store.setup(connect, timeout=1.0) == 0 else None), False


def attach(mooncake_store, connect, not_rank, deadline):
    """(client, rank, follows): attached to the conductor the file names, once not NOT_RANK."""
    while time.monotonic() < deadline:
        rank = master_rank(connect)
        if rank is not None and rank != not_rank:
            store, follows = setup(mooncake_store, connect)
            if store is not None:
                return store, rank, follows
        time.sleep(0.02)
    return None, None, False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--connect", required=True, help="the store job's connection file")
    ap.add_argument("--victim", type=int, required=True, help="PID of the active conductor")
    ap.add_argument("--warmup", type=float, default=2.0, help="seconds of steps before the kill")
    ap.add_argument("--after", type=int, default=100, help="steps after the conductor changed")
    ap.add_argument("--deadline", type=float, default=120.0, help="seconds in all, at most")
    args = ap.parse_args()
    import mooncake_store

    deadline = time.monotonic() + args.deadline
    before = master_rank(args.connect)
    store, attached_to, follows = attach(mooncake_store, args.connect, None, deadline)
    if store is None:
        sys.exit(f"failover_client.py: cannot attach with {args.connect}")
    acked, i, reattached, failed_calls, steps_after = [], 0, 0, 0, 0
    start = last_ok = time.monotonic()
    longest, killed = 0.0, False
    while steps_after < args.after and time.monotonic() < deadline:
        if not killed and time.monotonic() - start >= args.warmup:
            os.kill(args.victim, signal.SIGKILL)
            killed = True
        key = f"fo/{i}"
        i += 1
        data = value(key, SIZES[i % len(SIZES)])
        ok = store.put(key, data) == 0
        if ok:
            # A put whose answer was lost may or may not be stored: only acknowledged ones count.
            acked.append((key, len(data)))
            probe, size = acked[(i * 7919) % len(acked)]
            got = store.get(probe)
            ok = len(got) == size and got == value(probe, size)
        if not ok and follows:
            # It moves to the new master itself; a put whose put-end was in flight at the change
            # fails (it may or may not be stored: not counted as acknowledged).
            failed_calls += 1
            continue
        if not ok:
            failed_calls += 1
            store.close()
            # Not the file's rank at the failed call: the new conductor may have rewritten the file
            # before this client's call to the old one failed.
            store, attached_to, follows = attach(mooncake_store, args.connect, attached_to,
                                                 deadline)
            if store is None:
                break
            reattached += 1
            continue
        now = time.monotonic()
        longest = max(longest, now - last_ok)
        last_ok = now
        if killed and master_rank(args.connect) not in (None, before):
            steps_after += 1
    after = master_rank(args.connect)
    lost = 0
    if store is not None:
        for key, size in acked:
            got = store.get(key)
            lost += not (len(got) == size and got == value(key, size))
        store.close()
    print(json.dumps({"acked": len(acked), "lost": lost if store is not None else len(acked),
                      "pause_ms": round(longest * 1000, 1), "reattached": reattached,
                      "failed_calls": failed_calls, "follows": follows,
                      "steps_after": steps_after, "master_before": before,
                      "master_after": after}))
    sys.stdout.flush()
    return 0 if store is not None and steps_after >= args.after and lost == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
