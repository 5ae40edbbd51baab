"""A second Python process for the client tests: attaches with a connection file, verifies the
values other processes put, and puts its own.

  peer.py FILE put PREFIX | verify PREFIX... 
"""
import sys

import mooncake_store
import values


def main():
    path, command, prefixes = sys.argv[1], sys.argv[2], sys.argv[3:]
    store = mooncake_store.MooncakeDistributedStore()
    rc = store.setup(path)
    if rc != 0:
        print(f"peer.py: setup: {rc} {store.last_error()}", file=sys.stderr)
        return 1
    for prefix in prefixes:
        if command == "put":
            values.put_all(store, prefix)
        else:
            values.verify_all(store, prefix)
    print(f"peer.py: {command} {' '.join(prefixes)} OK")
    return store.close()


if __name__ == "__main__":
    sys.exit(main())
