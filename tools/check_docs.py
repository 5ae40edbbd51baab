#!/usr/bin/env python3
"""Docs that cannot rot: checks README.md and docs/*.md against the tree and the binary.

1. Every file or folder of the repository that a doc names (a path starting with configs/,
   docs/, tools/, benchmarks/, launch/, slurm/, src/, tests/ or cmake/) exists. Placeholders
   (X.ini, <job id>, NNN, *) are not paths and are skipped.
2. Every fenced block whose info string is `sh docs-test` runs, from the repository root, with
   bash and a deadline; it must exit 0, and each `--out DIR` it names must then hold a
   summary.json or a sweep.csv. Blocks that need a cluster, a GPU or minutes of wall time are
   left unmarked, and say why next to them.

Usage: tools/check_docs.py [--paths-only] [--timeout SECONDS]
Exit status: 0 when every check holds, 1 with one line per failure. Run from anywhere: paths are
taken from the checkout this script sits in. The real traces are read from ../shared/traces; a
block that names a trace file that is missing is skipped, saying so.
"""
import argparse
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
PATH = re.compile(r"(?<![\w./-])((?:configs|docs|tools|benchmarks|launch|slurm|src|tests|cmake)"
                  r"/[\w./-]*[\w/])")
PLACEHOLDER = re.compile(r"X\.ini|MODEL|NNN|<|\*|\.\.\.|/X\b|FILE|DIR")
FENCE = re.compile(r"^```(.*)$")


def named_paths(text):
    for line_no, line in enumerate(text.splitlines(), 1):
        if "module load" in line:  # environment modules (cmake/3.27), not paths
            continue
        for m in PATH.finditer(line):
            path = m.group(1).rstrip(".")
            if PLACEHOLDER.search(path) or PLACEHOLDER.search(line[m.end():m.end() + 1]):
                continue
            yield line_no, path


def test_blocks(text):
    """(line, commands) of each ```sh docs-test block."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m and m.group(1).split()[1:2] == ["docs-test"]:
            start, body = i + 1, []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            yield start, "\n".join(body)
        i += 1


# Accepted for compatibility (cli::CanonicalArgs), but --help lists only the canonical key.
CANONICAL = {"--trace-limit": "--trace.limit", "--trace-offset": "--trace.offset",
             "--trace-skip-invalid": "--trace.skip_invalid", "--time-scale": "--time_scale",
             "--kv-scale": "--kv_scale"}
OLD_SPELLINGS = re.compile("(" + "|".join(re.escape(k) for k in CANONICAL) + r")(?![\w-])")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--paths-only", action="store_true", help="only check the named paths")
    ap.add_argument("--timeout", type=float, default=300, help="seconds per block (300)")
    args = ap.parse_args()
    failures, ran, checked = [], 0, 0
    for doc in DOCS:
        text = doc.read_text()
        rel = doc.relative_to(ROOT)
        for line_no, path in named_paths(text):
            checked += 1
            if not (ROOT / path).exists():
                failures.append(f"{rel}:{line_no}: names {path}, which does not exist")
        for line_no, line in enumerate(text.splitlines(), 1):
            for old in OLD_SPELLINGS.findall(line):
                failures.append(f"{rel}:{line_no}: {old} is an old spelling: --help lists "
                                f"{CANONICAL[old]}")
        if args.paths_only:
            continue
        for line_no, block in test_blocks(text):
            traces = re.findall(r"\.\./shared/traces/[\w.]+", block)
            missing = [t for t in traces if not (ROOT / t).exists()]
            if missing:
                print(f"SKIP {rel}:{line_no}: {missing[0]} not found")
                continue
            ran += 1
            print(f"RUN  {rel}:{line_no}: {block.splitlines()[0]}", flush=True)
            try:
                done = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=ROOT,
                                      capture_output=True, text=True, timeout=args.timeout)
            except subprocess.TimeoutExpired:
                failures.append(f"{rel}:{line_no}: did not finish in {args.timeout:.0f} s")
                continue
            if done.returncode != 0:
                tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
                failures.append(f"{rel}:{line_no}: exited {done.returncode}: " + " | ".join(tail))
                continue
            for out in re.findall(r"--out\s+(\S+)", block):
                folder = ROOT / out
                if not ((folder / "summary.json").exists() or (folder / "sweep.csv").exists()):
                    failures.append(f"{rel}:{line_no}: wrote no summary.json or sweep.csv "
                                    f"in {out}")
    for f in failures:
        print("FAIL", f)
    print(f"check_docs: {checked} named paths, {ran} blocks run, {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
