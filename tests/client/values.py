"""Values the client tests share between processes: a value's bytes are a function of its key,
so any process (Python here, C++ in client_peer.cc) checks what it read without a copy.

Byte i of the value under KEY is (seed + 131 i) mod 251, seed = sum of KEY's bytes mod 251.
"""
import numpy as np

# 1 B to 64 MiB, odd sizes included (client_peer.cc has the same list).
SIZES = [1, 100, 4096, 65543, 1 << 20, (16 << 20) + 3, 64 << 20]


def seed(key):
    return sum(key.encode()) % 251


def value(key, size):
    """The value under KEY, SIZE bytes, as a numpy uint8 array."""
    i = np.arange(size, dtype=np.uint64)
    return ((seed(key) + 131 * i) % 251).astype(np.uint8)


def matches(key, data):
    """True when DATA (bytes or a uint8 array) is the value under KEY."""
    got = np.frombuffer(data, dtype=np.uint8) if isinstance(data, (bytes, bytearray)) else data
    return bool(np.array_equal(got, value(key, len(got))))


def put_all(store, prefix):
    for size in SIZES:
        key = f"{prefix}/{size}"
        rc = store.put(key, value(key, size))
        assert rc == 0, f"put {key}: {rc} {store.last_error()}"


def verify_all(store, prefix):
    """Reads every value of PREFIX with get and with get_into, and checks the bytes."""
    out = np.empty(SIZES[-1], dtype=np.uint8)
    for size in SIZES:
        key = f"{prefix}/{size}"
        copy = store.get(key)
        assert len(copy) == size, f"get {key}: {len(copy)} bytes ({store.last_error()})"
        assert matches(key, copy), f"get {key}: wrong bytes"
        n = store.get_into(key, out)
        assert n == size, f"get_into {key}: {n} ({store.last_error()})"
        assert matches(key, out[:size]), f"get_into {key}: wrong bytes"
        assert store.get_size(key) == size
