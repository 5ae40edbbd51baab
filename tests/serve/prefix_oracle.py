#!/usr/bin/python3
"""Prefix-cache hit-rate oracles of a Mooncake trace slice, computed independently of the C++ code.

Usage: prefix_oracle.py TRACE [--limit N] [--capacity C] [--served requests.csv]
  infinite: requests in arrival order; a request hits the longest prefix of its hash_ids already
            seen by any earlier request, then all its blocks are cached.
  lru C:    the same with one global LRU pool of C blocks (hit blocks and new blocks are touched).
  --served: only the requests a run prefilled (prefill_instance >= 0 in its requests.csv), so
            the oracle covers the same requests as the run's hit rate (rejected ones are skipped).
Prints: oracle_hit_rate=<percent of prompt blocks>
"""
import argparse
import json
from collections import OrderedDict


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--capacity", type=int, default=0, help="LRU blocks; 0 = infinite")
    ap.add_argument("--served", help="requests.csv of a run: keep only the prefilled requests")
    args = ap.parse_args()
    served = None
    if args.served:
        import csv
        with open(args.served) as f:
            served = {int(r["id"]) for r in csv.DictReader(f) if int(r["prefill_instance"]) >= 0}
    cache = OrderedDict()
    hits = total = 0
    with open(args.trace) as f:
        for n, line in enumerate(f):
            if args.limit and n >= args.limit:
                break
            if served is not None and n not in served:
                continue
            ids = json.loads(line)["hash_ids"]
            k = 0
            while k < len(ids) and ids[k] in cache:
                k += 1
            hits += k
            total += len(ids)
            for b in ids:
                cache[b] = True
                cache.move_to_end(b)
            while args.capacity and len(cache) > args.capacity:
                cache.popitem(last=False)
    print(f"oracle_hit_rate={100.0 * hits / max(total, 1):.2f}")


if __name__ == "__main__":
    main()
