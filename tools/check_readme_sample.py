#!/usr/bin/env python3
"""README.md's sample output of the default job is the real output: runs the default job
(mpirun -np 4 build/mooncake, about 20 s) and checks that every line of the README's sample block
appears in the job's output, in order, once numbers, times and run-folder names are masked
(they differ from run to run). A line "..." in the sample stands for lines left out."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sample_block(readme):
    """The first unlabelled code block after the 'launch/quickstart runs the embedded default'
    paragraph: the sample output."""
    text = open(readme, encoding="utf-8").read()
    start = text.find("`launch/quickstart` runs the embedded default")
    if start < 0:
        sys.exit(f"{readme}: the paragraph introducing the sample output is gone")
    match = re.search(r"\n```\n(.*?)\n```", text[start:], re.S)
    if not match:
        sys.exit(f"{readme}: no output block after the default job's paragraph")
    line = text[: start + match.start(1)].count("\n") + 1
    return line, match.group(1).splitlines()


def shape(line):
    line = re.sub(r"runs/[0-9-]+", "runs/<folder>", line)
    line = re.sub(r"\d+(\.\d+)?", "N", line)
    return re.sub(r"\s+", " ", line).strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="build folder (build/)")
    ap.add_argument("--timeout", type=float, default=240, help="seconds for the job (240)")
    args = ap.parse_args()
    readme = os.path.join(ROOT, "README.md")
    first_line, sample = sample_block(readme)
    with tempfile.TemporaryDirectory() as cwd:
        run = subprocess.run(["mpirun", "-np", "4", os.path.join(args.build, "mooncake")],
                             cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, timeout=args.timeout)
    output = run.stdout.splitlines()
    if run.returncode != 0:
        print("\n".join(output[-30:]))
        sys.exit(f"the default job exited {run.returncode}")
    real = [shape(l) for l in output]
    at = 0
    for i, line in enumerate(sample):
        if line.strip() == "...":
            continue
        want = shape(line)
        while at < len(real) and real[at] != want:
            at += 1
        if at == len(real):
            print("the job's output:\n" + "\n".join(output))
            sys.exit(f"README.md:{first_line + i}: '{line}' is not in the default job's output "
                     "(in this order, numbers aside): update the sample")
        at += 1
    missing = [l for l in output if l.startswith(("requests", "result", "run folder"))
               and shape(l) not in {shape(s) for s in sample}]
    if missing:
        sys.exit(f"README.md:{first_line}: the sample lacks the summary line '{missing[0]}'")
    print(f"README.md:{first_line}: {len(sample)} sample lines match the default job's output")


if __name__ == "__main__":
    main()
