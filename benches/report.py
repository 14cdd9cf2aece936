"""Tables and chart of `scripts/bench compare|latency|rows|groups|restore-scale`, from the CSV
files they write.

    python benches/report.py RESULTS_DIR BENCHES_DIR

Reads RESULTS_DIR/{compare,latency,rows,groups,restore-scale}.csv (one line per measured command) and the notes
next to them (MODE.md: machine, versions, commands), prints one Markdown table per mode, writes
the chart BENCHES_DIR/scale.png and replaces the generated section of BENCHES_DIR/RESULTS.md
(between its two markers; appended on first use). Nothing here measures anything.
"""

import csv
import statistics
import sys
from collections import defaultdict
from pathlib import Path

MODES = ["compare", "latency", "rows", "groups", "restore-scale"]
BEGIN = "<!-- scripts/bench compare|latency|rows: generated section, do not edit by hand -->"
END = "<!-- end of the generated section -->"
OV, KCG = "offset-vault", "kafka-consumer-groups"
# The kafka-consumer-groups commands that do what each offset-vault operation does: its operation
# names start with one of these (a variant adds e.g. its heap size in parentheses).
COUNTERPART = {
    "snapshot --all-groups": "--to-current --dry-run --export",
    "restore --execute": "--from-file --execute",
    "restore --execute --settle 0": "--from-file --execute",
    "restore --execute --settle 0 --no-undo": "--from-file --execute",
}
EXPORT = COUNTERPART["snapshot --all-groups"]
TITLES = {
    "compare": "offset-vault and kafka-consumer-groups on the same groups",
    "latency": "Through a network round trip (TCP delay proxy)",
    "rows": "Snapshot size: 100,000 to 3,000,000 rows",
    "groups": "Many small groups: 10,000 to 100,000 groups",
    "restore-scale": "restore at 20,000 to 1,000,000 partitions",
}
# The peak resident memory the groups and restore-scale modes are judged against.
TARGET_MIB = 150


def load(path):
    """Measurements grouped by (rtt, groups, partitions, tool, operation), in file order."""
    runs = defaultdict(list)
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            key = (
                int(row["rtt_ms"]),
                int(row["groups"]),
                int(row["partitions"]),
                row["tool"],
                row["operation"],
            )
            runs[key].append(
                {
                    "wall": float(row["wall_s"]),
                    "rss_mib": int(row["max_rss_kib"]) / 1024,
                    "rows": int(row["rows"]),
                    "exit": int(row["exit_code"]),
                }
            )
    return runs


def succeeded(run):
    """Exit code 0, and for a command that prints offsets, some offsets: kafka-consumer-groups
    prints `Error: ... Java heap space` and still exits 0 when its heap is too small."""
    return run["exit"] == 0 and run["rows"] > 0


def summary(runs):
    """Median and minimum wall time and largest peak memory of the successful runs."""
    ok = [r for r in runs if succeeded(r)]
    if not ok:
        return None
    walls = [r["wall"] for r in ok]
    return {
        "n": len(ok),
        "failed": len(runs) - len(ok),
        "median": statistics.median(walls),
        "min": min(walls),
        "rss": max(r["rss_mib"] for r in ok),
        "rows": max(r["rows"] for r in ok),
    }


def seconds(s):
    return f"{s:.2f} s" if s < 100 else f"{s:.0f} s"


def cell(runs):
    s = summary(runs)
    if s is None:
        why = "no offsets printed" if runs[0]["exit"] == 0 else "error"
        rss = max(r["rss_mib"] for r in runs)
        wall = statistics.median(r["wall"] for r in runs)
        return (
            f"failed after {seconds(wall)}: exit {runs[0]['exit']}, {why} (see the log)",
            f"{rss:.0f} MiB",
            None,
        )
    note = f", {s['failed']} failed" if s["failed"] else ""
    return (
        f"{seconds(s['median'])} (min {seconds(s['min'])}, {s['n']} run{'s' if s['n'] > 1 else ''}{note})",
        f"{s['rss']:.0f} MiB",
        s,
    )


def counterpart_of(op):
    """The kafka-consumer-groups counterpart of an operation, also of one measured under a label
    (`OPERATION (LABEL)`, scripts/bench's OV_BENCH_LABEL)."""
    if op in COUNTERPART:
        return COUNTERPART[op]
    if op.endswith(")") and " (" in op:
        return COUNTERPART.get(op.rsplit(" (", 1)[0])
    return None


def ratio(a, b):
    if not (a and b):
        return "-"
    # Two decimals below 0.1, where one would round to 0.0.
    return f"{a / b:.1f}x" if a / b >= 0.1 else f"{a / b:.2f}x"


def per_run_ratio(kcg_runs, ov_runs, field):
    """The median over the runs of kafka-consumer-groups' figure divided by offset-vault's, run i
    with run i (scripts/bench runs the two one after the other in each repetition), and the
    smallest and largest of them; None unless both have the same number (two or more) of
    successful runs."""
    if not (kcg_runs and ov_runs) or len(kcg_runs) != len(ov_runs) or len(ov_runs) < 2:
        return None
    if not all(succeeded(r) for r in kcg_runs + ov_runs):
        return None
    ratios = [k[field] / o[field] for k, o in zip(kcg_runs, ov_runs) if o[field] > 0]
    if len(ratios) != len(ov_runs):
        return None
    return statistics.median(ratios), min(ratios), max(ratios), len(ratios)


def with_per_run(cell_text, paired):
    """A ratio cell, with the median of the per-run ratios when there are several runs."""
    if not paired:
        return cell_text
    median, low, high, n = paired
    return f"{cell_text}; median of {n} per-run ratios {ratio(median, 1)} ({ratio(low, 1)} to {ratio(high, 1)})"


def table(runs):
    """One line per offset-vault operation, with its kafka-consumer-groups counterpart."""
    lines = [
        "| round trip | groups x partitions | offset-vault | time | peak RSS "
        "| kafka-consumer-groups | time | peak RSS | time ratio | RSS ratio |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (rtt, groups, partitions, tool, op), measured in runs.items():
        if tool != OV:
            continue
        ov_time, ov_rss, ov = cell(measured)
        size = f"{groups:,} x {partitions:,}"
        rows = f" ({ov['rows']:,} rows)" if ov and "--all-groups" in op else ""
        counterpart = counterpart_of(op)
        variants = [
            (o, r)
            for (r_rtt, r_g, r_p, t, o), r in runs.items()
            if t == KCG and (r_rtt, r_g, r_p) == (rtt, groups, partitions)
            and counterpart and o.startswith(counterpart)
        ] or [(None, None)]
        for kcg_op, kcg_runs in variants:
            if kcg_runs:
                k_time, k_rss, k = cell(kcg_runs)
                k_rows = f" ({k['rows']:,} rows)" if k and kcg_op.startswith(EXPORT) else ""
                t_ratio = with_per_run(
                    ratio(k and k["median"], ov and ov["median"]),
                    per_run_ratio(kcg_runs, measured, "wall"),
                )
                m_ratio = with_per_run(
                    ratio(k and k["rss"], ov and ov["rss"]),
                    per_run_ratio(kcg_runs, measured, "rss_mib"),
                )
                kcg_cell = f"`{kcg_op}`{k_rows}"
            else:
                k_time = k_rss = t_ratio = m_ratio = "-"
                kcg_cell = "(none)"
            lines.append(
                f"| {rtt} ms | {size} | `{op}`{rows} | {ov_time} | {ov_rss} | {kcg_cell} "
                f"| {k_time} | {k_rss} | {t_ratio} | {m_ratio} |"
            )
    return "\n".join(lines)


def series(runs, tool, op, x_of):
    """(x, median wall, peak RSS) points of one tool's operation, sorted by x; the same for the
    sizes where every run failed (time and memory until it gave up); and the sizes."""
    points, failed, sizes = [], [], set()
    for (rtt, groups, partitions, t, o), measured in runs.items():
        if t != tool or o != op:
            continue
        s = summary(measured)
        x = x_of(rtt, groups, partitions)
        sizes.add(f"{groups:,} x {partitions:,}")
        if s:
            points.append((x, s["median"], s["rss"]))
        else:
            wall = statistics.median(r["wall"] for r in measured)
            failed.append((x, wall, max(r["rss_mib"] for r in measured)))
    return sorted(points), sorted(failed), sizes


def every_operation(runs):
    """Chart lines for every (tool, operation) of a mode, in the order first measured."""
    if not runs:
        return []
    seen = []
    for (_, _, _, tool, op) in runs:
        if (tool, op) not in seen:
            seen.append((tool, op))
    markers = "osD^v<>p*h"
    return [
        (tool, op, f"{'kafka-consumer-groups ' if tool == KCG else ''}{op}", f"-{markers[i % len(markers)]}")
        for i, (tool, op) in enumerate(seen)
    ]


def chart(results, out):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 4, figsize=(22, 9))
    styles = {OV: dict(color="tab:blue"), KCG: dict(color="tab:red")}
    panels = [
        (
            "rows",
            lambda rtt, g, p: g * p,
            [
                (OV, "snapshot --all-groups", "offset-vault snapshot", "-o"),
                (KCG, "--to-current --dry-run --export", "kafka-consumer-groups --export", "-s"),
            ],
            "rows (groups x partitions)",
            "xy",
        ),
        (
            "latency",
            lambda rtt, g, p: rtt,
            [
                (OV, "snapshot --all-groups", "offset-vault snapshot", "-o"),
                (KCG, "--to-current --dry-run --export", "kafka-consumer-groups --export", "-s"),
                (OV, "restore --execute", "offset-vault restore (undo, settle 3 s)", "--o"),
                (OV, "restore --execute --settle 0", "offset-vault restore (undo, no settle)", ":o"),
                (KCG, "--from-file --execute", "kafka-consumer-groups --from-file", "--s"),
            ],
            "added round trip (ms)",
            "y",
        ),
        ("groups", lambda rtt, g, p: g, every_operation(results.get("groups")), "groups", "xy"),
        (
            "restore-scale",
            lambda rtt, g, p: g * p,
            every_operation(results.get("restore-scale")),
            "partitions restored",
            "xy",
        ),
    ]
    for column, (mode, x_of, lines, xlabel, log) in enumerate(panels):
        runs = results.get(mode)
        if mode == "rows" and runs:
            # kafka-consumer-groups also run with a larger heap than its default.
            for op in sorted({o for (_, _, _, t, o) in runs if t == KCG and o.startswith(EXPORT + " (")}):
                heap = op[len(EXPORT) + 2 : -1]
                lines = lines + [(KCG, op, f"kafka-consumer-groups --export, {heap}", "--s")]
        time_ax, mem_ax = axes[0][column], axes[1][column]
        for tool, op, label, fmt in lines:
            # Many operations in one panel: each its own colour.
            style = {} if mode in ("groups", "restore-scale") else styles[tool]
            points, failed, sizes = series(runs, tool, op, x_of) if runs else ([], [], set())
            if mode == "latency" and len(sizes) == 1:
                label += f", {sizes.pop()}"
            if points:
                xs = [p[0] for p in points]
                line = time_ax.plot(xs, [p[1] for p in points], fmt, label=label, **style)[0]
                style = dict(color=line.get_color())
                mem_ax.plot(xs, [p[2] for p in points], fmt, label=label, **style)
            if failed:
                xs = [p[0] for p in failed]
                fail_label = f"{label}: failed (until it gave up)"
                line = time_ax.plot(xs, [p[1] for p in failed], "x", ms=10, mew=2, label=fail_label, **style)[0]
                style = dict(color=line.get_color())
                mem_ax.plot(xs, [p[2] for p in failed], "x", ms=10, mew=2, label=fail_label, **style)
        if mode in ("groups", "restore-scale"):
            mem_ax.axhline(TARGET_MIB, color="grey", ls=":", label=f"target: {TARGET_MIB} MiB")
        time_ax.set_title(f"{mode}: wall time (median)")
        mem_ax.set_title(f"{mode}: peak resident memory")
        time_ax.set_ylabel("seconds")
        mem_ax.set_ylabel("MiB")
        for ax in (time_ax, mem_ax):
            ax.set_xlabel(xlabel)
            ax.grid(True, which="both", alpha=0.3)
            if "x" in log:
                ax.set_xscale("log")
            if "y" in log and ax is time_ax:
                ax.set_yscale("log")
            elif "y" in log and "x" in log:
                ax.set_yscale("log")
            if ax.lines:
                ax.legend(fontsize=8)
            else:
                ax.text(0.5, 0.5, f"no results of scripts/bench {mode}", ha="center", transform=ax.transAxes)
    fig.suptitle(
        "offset-vault beside kafka-consumer-groups (scripts/bench rows, latency, groups, restore-scale)"
    )
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def section(results, notes):
    parts = [
        BEGIN,
        "## Side by side with kafka-consumer-groups",
        "",
        "`scripts/bench compare`, `latency`, `rows`, `groups` and `restore-scale` (driver: "
        "`scripts/bench`, seeding: `examples/bench_seed.rs`, proxy: `examples/latency_proxy.rs`, "
        "this section and the chart: `benches/report.py`) seed empty groups with one committed "
        "offset per partition, then run the release binary and the real `kafka-consumer-groups` "
        "one after the other on the same groups, each under `/usr/bin/time -v`. Wall time "
        "includes process start (for `kafka-consumer-groups`, a JVM). Time is the median of the "
        "runs; peak RSS the largest. Ratios are kafka-consumer-groups divided by offset-vault: "
        "above 1, offset-vault is faster or smaller; the ratio of the medians (time) or of the "
        "peaks (RSS) comes first, then, where both tools ran the same number of times (two or "
        "more), the median of the per-run ratios (run i of one against run i of the other) and "
        "their range. The snapshot and the export both read every "
        "group of the cluster (`--all-groups`), so their row counts are shown. Before each "
        "restore run the offsets are moved away from the snapshot's, so every restore changes "
        "every partition. The groups and restore-scale modes run on a broker of their own; "
        f"their chart panels show the {TARGET_MIB} MiB peak memory target as a dotted line.",
        "",
        "![time and peak memory against rows and round trip](scale.png)",
        "",
    ]
    for mode in MODES:
        if mode not in results:
            continue
        parts += [f"### {TITLES[mode]}", ""]
        if mode in notes:
            parts += [notes[mode].rstrip(), ""]
        parts += [table(results[mode]), ""]
    parts.append(END)
    return "\n".join(parts) + "\n"


def main():
    results_dir, benches_dir = Path(sys.argv[1]), Path(sys.argv[2])
    results, notes = {}, {}
    for mode in MODES:
        path = results_dir / f"{mode}.csv"
        if path.exists():
            results[mode] = load(path)
            md = results_dir / f"{mode}.md"
            if md.exists():
                notes[mode] = md.read_text()
            print(f"\n{TITLES[mode]}\n\n{table(results[mode])}")
    if not results:
        sys.exit(f"no results in {results_dir}: run scripts/bench compare, latency, rows, groups or restore-scale first")
    chart(results, benches_dir / "scale.png")
    doc_path = benches_dir / "RESULTS.md"
    doc = doc_path.read_text()
    generated = section(results, notes)
    if BEGIN in doc and END in doc:
        head, rest = doc.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        doc = head + generated.rstrip("\n") + tail
    else:
        doc = doc.rstrip("\n") + "\n\n" + generated
    doc_path.write_text(doc)
    print(f"\nwrote {benches_dir / 'scale.png'} and the generated section of {doc_path}")


if __name__ == "__main__":
    main()
