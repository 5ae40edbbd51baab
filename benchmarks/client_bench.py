#!/usr/bin/python3
"""client_bench.py: a Python process against a store job (the mooncake_store module's
batch_put_from / batch_get_into into registered numpy buffers) or against Redis (redis-py, one
pipeline of `batch` SETs or GETs per call). Timed as benchmarks/client/client_bench.cc times the C++
client: per value size, batches of new keys put for at least --min-time, then the last ones read
back for at least --min-time. Writes op,size,batch,gb_per_s,keys_per_s,errors to --csv.

  client_bench.py --connect CONNECT_FILE [--sizes 4096,65536,...] [--batch 32] [--min-time 1]
  client_bench.py --redis-port PORT ...
benchmarks/client_vs_baselines.sh runs both.
"""
import argparse
import csv
import sys
import time

import numpy as np


def mooncake_ops(connect):
    import mooncake_store
    store = mooncake_store.MooncakeDistributedStore()
    rc = store.setup(connect)
    if rc != 0:
        sys.exit(f"client_bench.py: setup: {rc} {store.last_error()}")

    def prepare(size, batch):
        src = np.frombuffer(np.random.default_rng(size).bytes(size * batch), dtype=np.uint8)
        dst = np.empty(size * batch, dtype=np.uint8)
        dst.fill(1)
        store.register_buffer(src)
        store.register_buffer(dst)
        srcs = [src[i * size:(i + 1) * size] for i in range(batch)]
        dsts = [dst[i * size:(i + 1) * size] for i in range(batch)]

        def put(keys):
            return report(sum(rc != 0 for rc in store.batch_put_from(keys, srcs)))

        def get(keys):
            return report(sum(n != size for n in store.batch_get_into(keys, dsts)))

        def report(errors):
            if errors and not reported:
                reported.append(store.last_error())
                print(f"client_bench.py: first error at {size} B: {reported[0]}", file=sys.stderr)
            return errors
        reported = []

        def done():
            store.unregister_buffer(src)
            store.unregister_buffer(dst)
        return put, get, done
    return prepare, store.close


def redis_ops(port, socket_path=None):
    import redis
    from redis.utils import HIREDIS_AVAILABLE
    # At full strength: hiredis's C parser when installed (python3-hiredis), a unix socket when
    # given, and 1 MiB reads (redis-py reads 64 KiB at a time by default).
    if socket_path:
        pool = redis.ConnectionPool(connection_class=redis.UnixDomainSocketConnection,
                                    path=socket_path, socket_read_size=1 << 20)
    else:
        pool = redis.ConnectionPool(host="127.0.0.1", port=port, socket_read_size=1 << 20)
    r = redis.Redis(connection_pool=pool)
    print(f"redis-py {redis.__version__}: parser {'hiredis' if HIREDIS_AVAILABLE else 'python'}, "
          f"{'unix socket ' + socket_path if socket_path else 'tcp 127.0.0.1:' + str(port)}, "
          "read size 1 MiB", flush=True)

    def prepare(size, batch):
        src = np.random.default_rng(size).bytes(size * batch)
        vals = [src[i * size:(i + 1) * size] for i in range(batch)]

        def put(keys):
            pipe = r.pipeline(transaction=False)
            for k, v in zip(keys, vals):
                pipe.set(k, v)
            return sum(not ok for ok in pipe.execute())

        def get(keys):
            pipe = r.pipeline(transaction=False)
            for k in keys:
                pipe.get(k)
            return sum(v is None or len(v) != size for v in pipe.execute())
        return put, get, lambda: r.flushall()
    return prepare, r.close


def run_size(prepare, size, batch, min_time, tag, rotate):
    """Put batches for min_time (new keys each; with `rotate`, Redis, over about 1 GiB of keys,
    which it overwrites: the store's objects are immutable and it evicts the oldest instead),
    then read the last ones back for min_time."""
    put, get, done = prepare(size, batch)
    slots = max(2, (1 << 30) // (size * batch))
    results, written = {}, []
    seconds, calls, errors = 0.0, 0, 0
    start = time.monotonic()
    while time.monotonic() - start < min_time:
        n = len(written) % slots if rotate else len(written)
        keys = [f"{tag}/{size}/{n}/{i}" for i in range(batch)]
        t0 = time.perf_counter()
        errors += put(keys)
        seconds += time.perf_counter() - t0
        calls += 1
        written.append(keys)
    results["put"] = (seconds, calls, errors)
    # Gets read the last batches, at most 256 MiB: still in the store's DRAM (older ones may
    # have been evicted by the puts), and in Redis.
    keep = max(1, min(8, (256 << 20) // (size * batch)))
    recent = written[-min(len(written), keep, slots):]
    seconds, calls, errors = 0.0, 0, 0
    start = time.monotonic()
    while time.monotonic() - start < min_time:
        t0 = time.perf_counter()
        errors += get(recent[calls % len(recent)])
        seconds += time.perf_counter() - t0
        calls += 1
    results["get"] = (seconds, calls, errors)
    done()
    return results


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--connect", help="the store job's connect.json")
    p.add_argument("--redis-port", type=int, help="measure redis-py against this port instead")
    p.add_argument("--redis-socket", help="with --redis-port: connect over this unix socket")
    p.add_argument("--sizes", default="4096,65536,1048576,16777216", help="value sizes, bytes")
    p.add_argument("--batch", type=int, default=32, help="keys per call")
    p.add_argument("--min-time", type=float, default=1.0, help="seconds per op and size")
    p.add_argument("--csv", help="write the results here")
    p.add_argument("--tag", default="pb", help="key prefix (distinct per run)")
    a = p.parse_args()
    if bool(a.connect) == bool(a.redis_port):
        p.error("give exactly one of --connect and --redis-port")
    prepare, close = (mooncake_ops(a.connect) if a.connect
                      else redis_ops(a.redis_port, a.redis_socket))
    rows, failed = [], 0
    for size in (int(s) for s in a.sizes.split(",")):
        for op, (seconds, calls, errors) in run_size(prepare, size, a.batch, a.min_time, a.tag,
                                                     rotate=bool(a.redis_port)).items():
            gbps = calls * a.batch * size / seconds / 1e9
            kps = calls * a.batch / seconds
            print(f"{op:<4} {size:>10} B x{a.batch}: {gbps:8.3f} GB/s {kps:12.0f} keys/s"
                  f"  errors {errors}")
            rows.append([op, size, a.batch, gbps, kps, errors])
            failed += errors
    close()
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["op", "size", "batch", "gb_per_s", "keys_per_s", "errors"])
            w.writerows(rows)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
