#!/usr/bin/env python3
"""Plots the results of `ccsim run` (results.csv) as PNG and SVG.

  busbw-COLLECTIVE.{png,svg}          busbw vs message size per algorithm, one panel per variant, the
                                      bandwidth lower bound dashed
  time-vs-nodes-COLLECTIVE.{png,svg}  when variants differ in node count: time of the largest size
                                      per algorithm against the node count

Usage: plot.py results.csv [--out DIR]      (ccsim run SCENARIO --out DIR --plot calls it)
Needs python3 and matplotlib (Debian: python3-matplotlib); renders without a display (Agg).
"""
import argparse
import csv
import math
import os
import sys
from collections import OrderedDict

import matplotlib

matplotlib.use("Agg")  # no display on build machines and CI
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)
from matplotlib.ticker import FixedLocator, NullLocator  # noqa: E402


def size_label(size):
    """8, 64K, 1M, 8G: 1024-based, as nccl-tests and ccsim print sizes."""
    for suffix, shift in (("T", 40), ("G", 30), ("M", 20), ("K", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift}{suffix}"
    return str(size)


def read(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"plot.py: {path}: no results to plot")
    for r in rows:
        for key in ("size_bytes", "nodes", "ranks", "channels"):
            r[key] = int(r[key])
        for key in ("time_us", "busbw_gbps", "bound_busbw_gbps"):
            r[key] = float(r[key])
    return rows


def ordered(values):
    return list(OrderedDict.fromkeys(values))


def size_axis(ax, sizes):
    """log2 x axis with every power of two marked and about eight of them labelled."""
    lo, hi = min(sizes), max(sizes)
    ax.set_xscale("log", base=2)
    first, last = math.floor(math.log2(lo)), math.ceil(math.log2(hi))
    step = max(1, math.ceil((last - first + 1) / 8))
    ticks = [1 << e for e in range(first, last + 1, step)]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([size_label(t) for t in ticks])
    ax.set_xlim(lo / 1.3, hi * 1.3)


def save(fig, out, stem):
    written = []
    for ext in ("png", "svg"):
        path = os.path.join(out, f"{stem}.{ext}")
        fig.savefig(path, dpi=110, bbox_inches="tight")
        written.append(path)
    plt.close(fig)
    return written


def busbw_figure(rows, collective, out):
    variants = ordered(r["variant"] for r in rows)
    algorithms = ordered(r["algorithm"] for r in rows)
    colours = {a: f"C{i % 10}" for i, a in enumerate(algorithms)}
    cols = min(3, len(variants))
    nrows = math.ceil(len(variants) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 3.9 * nrows), sharey=True, squeeze=False,
                             constrained_layout=True)
    for ax in axes.flat[len(variants):]:
        ax.set_visible(False)
    for ax, variant in zip(axes.flat, variants):
        mine = [r for r in rows if r["variant"] == variant]
        for a in algorithms:
            pts = sorted((r["size_bytes"], r["busbw_gbps"]) for r in mine if r["algorithm"] == a)
            if pts:
                ax.plot(*zip(*pts), marker="o", markersize=3, label=a, color=colours[a],
                        linestyle="--" if a.startswith("auto") else "-")
        # Bounds: without in-switch reduction (the lowest any algorithm was held to) and, where an
        # algorithm reduces in a switch (NVLS, SHARP), with it (the highest).
        low, high = {}, {}
        for r in mine:
            low[r["size_bytes"]] = min(low.get(r["size_bytes"], math.inf), r["bound_busbw_gbps"])
            high[r["size_bytes"]] = max(high.get(r["size_bytes"], 0), r["bound_busbw_gbps"])
        if low:
            ax.plot(*zip(*sorted(low.items())), color="grey", linestyle=":", linewidth=1, label="bound")
        if any(high[s] > low[s] * (1 + 1e-6) for s in low):
            ax.plot(*zip(*sorted(high.items())), color="grey", linestyle="-.", linewidth=1,
                    label="bound, switch reduces")
        size_axis(ax, [r["size_bytes"] for r in mine])
        ranks, nodes = mine[0]["ranks"], mine[0]["nodes"]
        ax.set_title(f"{variant} ({ranks} GPUs, {nodes} node{'s' if nodes > 1 else ''})", fontsize=10)
        ax.set_xlabel("message size (B)")
        ax.grid(True, which="major", alpha=0.3)
    for ax in axes[:, 0]:
        ax.set_ylabel("busbw (GB/s)")
    # One legend for all panels: a variant may lack an algorithm another has.
    entries = OrderedDict()
    for ax in axes.flat[:len(variants)]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(label, handle)
    axes.flat[0].legend(entries.values(), entries.keys(), fontsize=8, loc="upper left")
    fig.suptitle(f"{collective}: bus bandwidth by message size (grey: bandwidth lower bounds)")
    return save(fig, out, f"busbw-{collective}")


def nodes_figure(rows, collective, out):
    """Time of the largest size against nodes. Variants that repeat a node count (ndr and xdr at
    each size) form separate series, in the order the scenario lists them."""
    largest = max(r["size_bytes"] for r in rows)
    at = [r for r in rows if r["size_bytes"] == largest]
    series = []  # lists of variants, each with distinct node counts
    node_of = {}
    for r in at:
        node_of[r["variant"]] = r["nodes"]
    for v in ordered(r["variant"] for r in at):
        for s in series:
            if node_of[v] not in (node_of[x] for x in s):
                s.append(v)
                break
        else:
            series.append([v])
    fig, ax = plt.subplots(figsize=(6.5, 4.4), constrained_layout=True)
    markers = "osD^v<>ph"
    for si, s in enumerate(series):
        name = s[0] if len(s) == 1 else f"{s[0]} .. {s[-1]}"
        for ai, a in enumerate(ordered(r["algorithm"] for r in at)):
            pts = sorted((r["nodes"], r["time_us"]) for r in at if r["algorithm"] == a and r["variant"] in s)
            if pts:
                ax.plot(*zip(*pts), marker=markers[si % len(markers)], color=f"C{ai % 10}",
                        linestyle=["-", "--", ":", "-."][si % 4], label=f"{a} [{name}]" if len(series) > 1 else a)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    nodes = sorted({r["nodes"] for r in at})
    ax.xaxis.set_major_locator(FixedLocator(nodes))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([str(n) for n in nodes])
    ax.set_xlabel("nodes")
    ax.set_ylabel("time (us)")
    ax.set_title(f"{collective} of {size_label(largest)} B: time by node count")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return save(fig, out, f"time-vs-nodes-{collective}")


def main():
    parser = argparse.ArgumentParser(description="Plot ccsim run results (results.csv) as PNG and SVG")
    parser.add_argument("csv", help="results.csv written by `ccsim run --out DIR`")
    parser.add_argument("--out", help="directory for the plots (default: the CSV's)")
    args = parser.parse_args()
    out = args.out or os.path.dirname(os.path.abspath(args.csv))
    os.makedirs(out, exist_ok=True)
    rows = read(args.csv)
    written = []
    for collective in ordered(r["collective"] for r in rows):
        mine = [r for r in rows if r["collective"] == collective]
        written += busbw_figure(mine, collective, out)
        if len({r["nodes"] for r in mine}) > 1:
            written += nodes_figure(mine, collective, out)
    for path in written:
        print(f"plot.py: wrote {path}")


if __name__ == "__main__":
    main()
