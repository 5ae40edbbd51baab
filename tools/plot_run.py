#!/usr/bin/python3
"""Plots for a `mooncake eval` run folder (needs /usr/bin/python3 with matplotlib).

usage: plot_run.py RUN_DIR

Single run (requests.csv): ttft_tbt_cdf.png.
Sweep (sweep.csv): capacity_vs_tbt.png (effective request capacity against the TBT threshold,
one line per system; paper Fig. 1; drawn when slo.tbt or the system is swept), ttft_by_policy.png (mean TTFT per prefill policy; Fig. 5),
hit_rate_vs_capacity.png (prefix hit rate against cache capacity; Fig. 9 style) and
ttft_tbt_cdf.png over the points; each only when the sweep varies what it plots.
"""
import csv
import itertools
import json
import os
import sys
from collections import OrderedDict, defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402

# Every series gets its own colour and line style (styles()).
COLOURS = plt.get_cmap("tab10").colors
STYLES = ["-", "--", ":", "-."]
PLAIN = FuncFormatter(lambda v, _: f"{v:g}")  # 20, not 2x10^1, on log axes


def log_ticks(ax):
    """Plain labels on a log x axis: 1, 2, 5 per decade over up to three decades (so a range
    inside one decade is still labelled), one per decade beyond."""
    lo, hi = ax.get_xlim()
    subs = (1.0, 2.0, 5.0) if lo > 0 and hi / lo <= 1e3 else (1.0,)
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=subs))
    ax.xaxis.set_major_formatter(PLAIN)
    ax.xaxis.set_minor_formatter(NullFormatter())


def styles():
    # Colour and style both change from one series to the next (20 distinct pairs), so curves
    # that lie on top of each other still show both.
    for i in itertools.count():
        yield {"color": COLOURS[i % len(COLOURS)], "linestyle": STYLES[i % len(STYLES)]}


def title_of(run_dir, what, rows=None):
    """'WHAT: trace T, config C, system S (run folder R)' from run.json when it is there."""
    info = {}
    try:
        with open(os.path.join(run_dir, "run.json")) as f:
            info = json.load(f)
    except (OSError, ValueError):
        pass
    parts = [f"trace {os.path.basename(info.get('trace', '?'))}"]
    if info.get("config"):
        parts.append(f"config {os.path.basename(info['config'])}")
    def varies(key):
        return rows is not None and len({r[key] for r in rows}) > 1
    if info.get("system") and not varies("system"):
        policy = "" if varies("policy") else info.get("policy", "")
        parts.append(f"{info['system']} {policy}".strip())
    return f"{what}\n{', '.join(parts)} ({os.path.basename(os.path.normpath(run_dir))})"


def finish(fig, ax_with_legend, out_png, title):
    fig.suptitle(title, fontsize=9)
    if ax_with_legend is not None:
        ax_with_legend.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0),
                              borderaxespad=0)
    fig.savefig(out_png, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return out_png


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def cdf(ax, values, label, style):
    values = sorted(v for v in values if v > 0)
    if not values:
        return
    n = len(values)
    ax.plot(values, [(i + 1) / n for i in range(n)], label=label, **style)


def plot_cdfs(runs, out_png, title):
    """runs: list of (label, requests.csv rows)."""
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    for (label, rows), style in zip(runs, styles()):
        done = [r for r in rows if r["outcome"] == "completed"]
        cdf(a1, [float(r["ttft_s"]) for r in done], label, style)
        cdf(a2, [float(r["tbt_s"]) * 1e3 for r in done], label, style)
    a1.set_xlabel("TTFT (s)")
    a2.set_xlabel("TBT (ms, mean of the longest 10 % gaps)")
    for a in (a1, a2):
        a.set_ylabel("share of completed requests")
        a.set_xscale("log")
        log_ticks(a)
        a.grid(True, alpha=0.3)
    return finish(fig, a2 if len(runs) > 1 else None, out_png, title)


def distinct(rows, key):
    return list(OrderedDict.fromkeys(r[key] for r in rows))


def series_label(row, axes, skip):
    """The swept values of a row but `skip`, with config files shortened to their name."""
    parts = []
    for k in axes:
        if k in skip:
            continue
        v = row[k]
        parts.append(os.path.splitext(os.path.basename(v))[0] if k == "config" else f"{k}={v}")
    return " ".join(parts) or row["system"]


def plot_sweep(run_dir, rows):
    made = []
    axes = list(rows[0].keys())[1:r_axes(rows)]
    # Fig. 1: capacity against TBT threshold: one line per system and per value of every other
    # swept axis (a load sweep draws one line per load, never joins loads). The thresholds are
    # the swept slo.tbt, or, for a sweep over systems (docs/EVAL.md's Fig. 1 command), the
    # capacity every point also counts at 100 / 200 / 300 ms.
    fixed = ("capacity_100ms", "capacity_200ms", "capacity_300ms")
    over_systems = len(distinct(rows, "system")) > 1 or (
        "config" in axes and len(distinct(rows, "config")) > 1)
    if len(distinct(rows, "tbt_slo_s")) > 1 or (over_systems and fixed[0] in rows[0]):
        fig, ax = plt.subplots(figsize=(7, 4))
        groups = defaultdict(list)
        for r in rows:
            key = series_label(r, axes, {"slo.tbt", "tbt_slo_s"})
            if len(distinct(rows, "tbt_slo_s")) > 1:
                groups[key].append((float(r["tbt_slo_s"]) * 1e3,
                                    float(r["capacity_at_slo"]) * 100))
            else:
                groups[key] += [(ms, float(r[c]) * 100) for ms, c in zip((100, 200, 300), fixed)]
        for (label, pts), style in zip(groups.items(), styles()):
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label, **style)
        ax.set_xlabel("TBT threshold (ms)")
        ax.set_ylabel("effective request capacity (%)")
        ax.set_ylim(0, 105)
        ax.grid(True, alpha=0.3)
        made.append(finish(fig, ax, os.path.join(run_dir, "capacity_vs_tbt.png"),
                           title_of(run_dir, "Effective request capacity against the TBT SLO", rows)))
    # Fig. 5: mean TTFT per prefill policy.
    policies = distinct(rows, "policy")
    if len(policies) > 1 and len(distinct(rows, "system")) == 1:
        fig, ax = plt.subplots(figsize=(6, 4))
        means = [sum(float(r["ttft_mean_s"]) for r in rows if r["policy"] == p) /
                 max(1, sum(1 for r in rows if r["policy"] == p)) for p in policies]
        bars = ax.bar(policies, means)
        for b, m in zip(bars, means):
            ax.annotate(f"{m:.2f}", (b.get_x() + b.get_width() / 2, m), ha="center", va="bottom")
        ax.set_ylabel("mean TTFT (s)")
        ax.grid(True, axis="y", alpha=0.3)
        made.append(finish(fig, None, os.path.join(run_dir, "ttft_by_policy.png"),
                           title_of(run_dir, "Mean TTFT by prefill policy", rows)))
    # Fig. 9 style: hit rate against capacity.
    if len(distinct(rows, "capacity_blocks")) > 1:
        fig, ax = plt.subplots(figsize=(6, 4))
        groups = defaultdict(list)
        for r in rows:
            key = series_label(r, axes, {"store.capacity_blocks", "capacity_blocks"})
            groups[key].append((int(r["capacity_blocks"]), float(r["hit_rate_blocks"]) * 100))
        for (label, pts), style in zip(groups.items(), styles()):
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label, **style)
        ax.set_xscale("log")
        log_ticks(ax)
        ax.set_xlabel("cache capacity (512-token blocks)")
        ax.set_ylabel("prefix hit rate (% of blocks)")
        ax.grid(True, alpha=0.3)
        made.append(finish(fig, ax, os.path.join(run_dir, "hit_rate_vs_capacity.png"),
                           title_of(run_dir, "Prefix hit rate against cache capacity", rows)))
    # CDFs over the points (at most 16 curves stay readable; each has its own style).
    # A TBT threshold is a way to count the same requests, not another run: one curve each.
    runs, seen = [], set()
    for r in rows:
        label = series_label(r, axes, {"slo.tbt"})
        path = os.path.join(run_dir, "points", "%03d" % int(r["point"]), "requests.csv")
        if label in seen or not os.path.exists(path) or len(runs) == 16:
            continue
        seen.add(label)
        runs.append((label, read_csv(path)))
    if runs:
        made.append(plot_cdfs(runs, os.path.join(run_dir, "ttft_tbt_cdf.png"),
                              title_of(run_dir, "TTFT and TBT of completed requests", rows)))
    return made


def r_axes(rows):
    """Index one past the last sweep-axis column (axes sit between 'point' and 'system')."""
    return list(rows[0].keys()).index("system")


def main():
    if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    run_dir = sys.argv[1]
    made = []
    sweep = os.path.join(run_dir, "sweep.csv")
    single = os.path.join(run_dir, "requests.csv")
    if os.path.exists(sweep):
        rows = read_csv(sweep)
        if rows:
            made = plot_sweep(run_dir, rows)
    elif os.path.exists(single):
        made = [plot_cdfs([("run", read_csv(single))], os.path.join(run_dir, "ttft_tbt_cdf.png"),
                          title_of(run_dir, "TTFT and TBT of completed requests"))]
    else:
        print(f"plot_run.py: no requests.csv or sweep.csv in {run_dir}", file=sys.stderr)
        return 1
    for m in made:
        print(f"plots: {m}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
