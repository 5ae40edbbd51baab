#!/usr/bin/env python3
"""Prints why each test of the last ctest run in BUILD_DIR failed, a few lines per test.

launch/test calls it after a ctest run that failed, and prints what it says at the very end of
its output. A CI summary keeps the head and the tail of a long log: the head shows the first
failure's output, and a second failure's reason used to be lost in between (CI of b9ef998 failed
two tests and showed why for neither). Reads Testing/Temporary/LastTest.log, which holds every
test's whole output, whatever --output-on-failure printed.

  tools/ctest_failures.py BUILD_DIR [--lines N]   (N lines of each failed test, default 8)
"""
import argparse
import re
import sys
from pathlib import Path

# Lines that say why: our scripts' FAIL lines, gtest failures, sanitizer summaries, errors,
# timeouts and signals. The last few of them, with the output's last lines, are the reason.
TELLING = re.compile(
    r"FAIL|Failure|ERROR|[Ee]rror|SUMMARY|Assertion|Expected|Which is|Value of|Timeout|"
    r"killed|signal|aborted|did not|runtime error|fuzz check failed|deadly|exited [1-9]")


def parse_log(text):
    """Maps each test name to (output lines, 'Test time = ... Test Failed.') from a LastTest.log."""
    tests = {}
    starts = list(re.finditer(r"^\d+/\d+ Testing: (.+)$", text, re.M))
    for i, m in enumerate(starts):
        block = text[m.end():starts[i + 1].start() if i + 1 < len(starts) else len(text)]
        out = re.search(r"^Output:\n-+\n(.*?)^<end of output>$", block, re.S | re.M)
        status = re.search(r"^Test (Passed|Failed|Skipped|Not Run)\b.*$", block, re.M)
        took = re.search(r"^Test time = +(\S+ sec)$", block, re.M)
        summary = (status.group(0) if status else "") + (f" after {took.group(1)}" if took else "")
        tests[m.group(1).strip()] = (out.group(1).splitlines() if out else [], summary.strip())
    return tests


def digest(lines, n):
    """The telling lines and the output's last three, in their order, at most n."""
    keep = {i for i, line in enumerate(lines) if TELLING.search(line)}
    keep.update(range(max(0, len(lines) - 3), len(lines)))
    picked = [lines[i] for i in sorted(keep)][-n:]
    return [l if len(l) <= 240 else l[:237] + "..." for l in picked]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir", type=Path)
    ap.add_argument("--lines", type=int, default=8, help="lines per failed test (default 8)")
    args = ap.parse_args()
    tmp = args.build_dir / "Testing" / "Temporary"
    failed_file = tmp / "LastTestsFailed.log"
    log_file = tmp / "LastTest.log"
    if not failed_file.is_file():
        print(f"ctest_failures: no failed tests recorded in {failed_file}")
        return 0
    failed = [l.split(":", 1)[1].strip() for l in failed_file.read_text().splitlines()
              if ":" in l]
    tests = parse_log(log_file.read_text(errors="replace")) if log_file.is_file() else {}
    print(f"why {len(failed)} test(s) failed in {args.build_dir} (tools/ctest_failures.py; "
          f"whole outputs in {log_file}):")
    for name in failed:
        lines, status = tests.get(name, ([], ""))
        print(f"  {name}: {status or 'not in ' + str(log_file)}")
        for line in digest(lines, args.lines):
            print(f"    | {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
