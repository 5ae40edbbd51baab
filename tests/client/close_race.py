"""close() racing get_into (tests/client/test_client.py, docs/CLIENT.md "Threads"): a client
is shared by two threads; one reads a large object in a loop, the other closes the client in
the middle of a read. Run in a process of its own, so that a crash fails the test instead of
ending pytest.

  close_race.py FILE ROUNDS    exit 0 and "close_race OK" when every round ended cleanly
"""
import random
import sys
import threading
import time

import numpy as np

import mooncake_store
import values

KEY = "race/object"
SIZE = 32 << 20  # a read long enough to be closed under: about 10 ms on shared memory


def one_round(path, out, rng):
    store = mooncake_store.MooncakeDistributedStore()
    assert store.setup(path) == 0, store.last_error()
    results = []

    def reader():
        while True:
            n = store.get_into(KEY, out)
            results.append(n)
            if n < 0:  # the client was closed: every later call fails too
                return

    t = threading.Thread(target=reader)
    t.start()
    time.sleep(rng.uniform(0.0, 0.03))
    rc = store.close()
    t.join(timeout=60)
    assert not t.is_alive(), "get_into hung after close()"
    assert rc == 0, f"close: {rc} {store.last_error()}"
    # Each read either completed whole or failed: never a partial size.
    assert all(n == SIZE or n < 0 for n in results), sorted(set(results))
    return sum(1 for n in results if n == SIZE)


def main():
    path, rounds = sys.argv[1], int(sys.argv[2])
    store = mooncake_store.MooncakeDistributedStore()
    assert store.setup(path) == 0, store.last_error()
    if store.is_exist(KEY) != 1:
        assert store.put(KEY, values.value(KEY, SIZE)) == 0, store.last_error()
    store.close()
    out = np.empty(SIZE, dtype=np.uint8)
    rng = random.Random(7)
    completed = sum(one_round(path, out, rng) for _ in range(rounds))
    print(f"close_race OK: {rounds} rounds, {completed} reads completed before their close")
    return 0


if __name__ == "__main__":
    sys.exit(main())
