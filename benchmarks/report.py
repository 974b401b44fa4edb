"""The targets and the report of one or more runs: results.md (tables) and plot.png.

    python -m benchmarks.report OUT_DIR RUN_DIR [RUN_DIR ...]

renders the runs side by side (one column group per run, e.g. Spark 3.5 and Spark 4.3) from
each RUN_DIR/results.json. Every ratio is taken within one run, from the medians of its
repetitions.

    python -m benchmarks.report --index                        # benchmarks/results/README.md
    python -m benchmarks.report --headline-plot docs/headline.png [RUN_DIR ...]

--index writes the index of the committed runs: one section per run directory under
benchmarks/results/, its tables taken from its results files, the command it records and its
hand-written notes.md. --headline-plot draws the README's figure: median seconds per strategy of
the k = 8 FULL join, one bar per run (default: the latest targets run of each Spark line).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

from benchmarks.workload import STRATEGIES


def rows_label(rows: int) -> str:
    for unit, size in (("M", 1_000_000), ("k", 1_000)):
        if rows >= size:
            return f"{rows / size:g}{unit}"
    return str(rows)


@dataclass(frozen=True)
class Target:
    """`numerator/denominator` of the median seconds (or of the shuffle bytes), against `bound`."""

    shape: str
    k: int
    rows: int
    numerator: str
    denominator: str
    op: str  # ">=" or "<="
    bound: float
    of: str = "seconds"  # or "shuffle_bytes"

    @property
    def name(self) -> str:
        parts = ([] if self.shape == "unique" else [self.shape]) + [f"k{self.k}"]
        parts += [] if self.rows == 2_000_000 else [rows_label(self.rows)]
        parts.append(f"{self.numerator}/{self.denominator}")
        parts += ["shuffle bytes"] if self.of == "shuffle_bytes" else []
        return " ".join(parts + [self.op, f"{self.bound:g}"])

    def met(self, value: float) -> bool:
        return value >= self.bound if self.op == ">=" else value <= self.bound


# local[2], 3 doubles per input (left_compact: one bigint); 2M rows per input unless the name says
# otherwise.
TARGETS = (
    Target("unique", 8, 2_000_000, "chain", "multiway", ">=", 2.5),
    Target("unique", 8, 2_000_000, "balanced", "multiway", ">=", 1.8),
    Target("unique", 8, 2_000_000, "multiway", "floor", "<=", 1.1),
    Target("unique", 4, 2_000_000, "chain", "multiway", ">=", 1.3),
    Target("unique", 16, 1_000_000, "multiway", "floor", "<=", 1.15),
    Target("dups", 8, 2_000_000, "chain", "multiway", ">=", 2.0),
    Target("left", 6, 2_000_000, "chain", "multiway", ">=", 2.0),
    Target("left", 6, 2_000_000, "chain", "multiway", ">=", 3.0, of="shuffle_bytes"),
    Target("left_compact", 6, 2_000_000, "chain", "multiway", ">=", 2.0),
    Target("left_compact", 6, 2_000_000, "chain", "multiway", ">=", 8.0, of="shuffle_bytes"),
)


def median_seconds(strategy: dict) -> float:
    return statistics.median(strategy["seconds"])


def ratio(group: dict, numerator: str, denominator: str, of: str = "seconds") -> float:
    num, den = group["strategies"][numerator], group["strategies"][denominator]
    if of == "seconds":
        return median_seconds(num) / median_seconds(den)
    return num[of] / max(den[of], 1)


def evaluate(run: dict, target: Target) -> tuple[float, int] | None:
    """The target's ratio in `run` and the rows it was measured at: at the target's rows if the
    run has them, else at the largest rows it has (a scaled-down run)."""
    groups = [g for g in run["groups"] if g["shape"] == target.shape and g["k"] == target.k
              and {target.numerator, target.denominator} <= set(g["strategies"])]
    if not groups:
        return None
    group = max(groups, key=lambda g: (g["rows"] == target.rows, g["rows"]))
    return ratio(group, target.numerator, target.denominator, target.of), group["rows"]


def _labels(runs: list[dict]) -> list[str]:
    labels = [f"Spark {run['machine']['spark']}" for run in runs]
    return [f"{label} ({run['name']})" if labels.count(label) > 1 else label
            for label, run in zip(labels, runs)]


def _table(header: list[str], rows: list[list]) -> list[str]:
    return (["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows] + [""])


def markdown(runs: list[dict]) -> str:
    labels = _labels(runs)
    lines = [f"# Benchmark: {', '.join(run['name'] for run in runs)}", ""]
    for label, run in zip(labels, runs):
        m = run["machine"]
        lines.append(f"- {label}: `{run['command']}` on {run['date']}, commit {m['commit']}; "
                     f"{m['cores']} cores, Java {m['java']}, Python {m['python']}; {run['reps']} "
                     f"repetitions (interleaved, order rotated), {run['warmup']} untimed first")
    lines += ["", "Confs: " + ", ".join(f"`{k}={v}`" for k, v in sorted(runs[0]["confs"].items())
                                         if "dir" not in k), ""]

    lines += ["## Targets", ""]
    rows = []
    for target in TARGETS:
        row = [target.name]
        for run in runs:
            found = evaluate(run, target)
            if found is None:
                row.append("not measured")
                continue
            value, measured_rows = found
            at = "" if measured_rows == target.rows else f" (at {rows_label(measured_rows)} rows)"
            row.append(f"{value:.2f} {'met' if target.met(value) else 'MISSED'}{at}")
        rows.append(row)
    lines += _table(["target"] + labels, rows)

    lines += ["## Measurements", "",
              "Median wall seconds (build + plan + run, counting the rows), its ratio to multiway's, "
              "and the shuffle bytes written by every exchange of the executed plan (subqueries, "
              "such as a bloom filter's, included).", ""]
    return "\n".join(lines + _measurements(runs, labels) + _scale(runs, labels))


def _scale_series(run: dict) -> dict[tuple[str, int], list[dict]]:
    """(shape, k) -> its groups by rows, for the shapes and k a run measured at several sizes."""
    series: dict[tuple[str, int], list[dict]] = {}
    for g in run["groups"]:
        series.setdefault((g["shape"], g["k"]), []).append(g)
    return {key: sorted(groups, key=lambda g: g["rows"]) for key, groups in series.items() if len(groups) > 1}


def _scale(runs: list[dict], labels: list[str]) -> list[str]:
    lines = []
    for label, run in zip(labels, runs):
        for (shape, k), groups in _scale_series(run).items():
            lines += [f"## Scale: {shape}, k = {k}, {label}", "",
                      "As the rows per input grow: median seconds, the ratios, the largest execution memory "
                      "(sort buffers) one task held, and the bytes spilled to disk (scale.png plots them).", ""]
            rows = []
            for g in groups:
                for strategy, s in g["strategies"].items():
                    rows.append([f"{g['rows']:,}", strategy, f"{median_seconds(s):.2f}",
                                 f"{ratio(g, 'chain', strategy):.2f}" if "chain" in g["strategies"] else "-",
                                 f"{ratio(g, strategy, 'floor'):.2f}" if "floor" in g["strategies"] else "-",
                                 f"{s.get('peak_task_memory', 0) / 2**20:,.0f}", f"{s.get('spill_bytes', 0) / 2**20:,.0f}"])
            lines += _table(["rows/input", "strategy", "median s", "chain ÷ it", "it ÷ floor",
                             "peak task memory MiB", "spilled MiB"], rows)
    return lines


def _measurements(runs: list[dict], labels: list[str]) -> list[str]:
    by_key = [{(g["shape"], g["rows"], g["k"]): g for g in run["groups"]} for run in runs]
    header = ["shape", "rows/input", "k", "strategy"]
    for label in labels:
        header += [f"{label}: median s", "÷ multiway", "shuffle MiB"]
    rows = []
    for key, strategy in dict.fromkeys((key, s) for groups in by_key
                                       for key, g in groups.items() for s in g["strategies"]):
        row, facts = [key[0], f"{key[1]:,}", key[2], strategy], []
        for groups in by_key:
            group = groups.get(key, {"strategies": {}})
            if strategy not in group["strategies"]:
                row += ["-"] * 3
                continue
            s = group["strategies"][strategy]
            facts.append(s)
            versus = f"{ratio(group, strategy, 'multiway'):.2f}" if "multiway" in group["strategies"] else "-"
            row += [f"{median_seconds(s):.2f}", versus, f"{s['shuffle_bytes'] / 2**20:,.1f}"]
        # Runs on other Spark versions may plan differently: every distinct plan is shown.
        rows.append(row + [" / ".join(dict.fromkeys(f"{s['rows']:,}" for s in facts)),
                           " / ".join(dict.fromkeys(_plan(s) for s in facts))])
    return _table(header + ["output rows", "plan"], rows)


def _plan(s: dict) -> str:
    plan = "MultiJoin" if s["multijoin_input_rows"] else (
        f"{s['sort_merge_joins']} SortMergeJoin" if s["sort_merge_joins"] else "no join")
    exchanges = f"{s['exchanges']} exchange" + ("s" if s["exchanges"] != 1 else "")
    return (f"{plan}, {exchanges}" + (", bloom filter" if s["bloom_filter"] else "")
            + (", AQE skew split" if s.get("skew_split") else ""))


def plot(runs: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = sorted({(g["shape"], g["rows"]) for run in runs for g in run["groups"]})
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4), squeeze=False)
    for ax, (shape, rows) in zip(axes[0], panels):
        bars = {}  # (k, strategy, run index) -> median seconds
        for index, run in enumerate(runs):
            for g in run["groups"]:
                if (g["shape"], g["rows"]) == (shape, rows):
                    bars.update({(g["k"], s, index): median_seconds(v) for s, v in g["strategies"].items()})
        ks = sorted({k for k, _, _ in bars})
        # Each strategy keeps its colour; its bars from a second run sit next to them, hatched.
        series = sorted({(s, i) for _, s, i in bars}, key=lambda si: (STRATEGIES.index(si[0]), si[1]))
        width = 0.8 / len(series)
        for n, (strategy, index) in enumerate(series):
            xs = [x + n * width for x, k in enumerate(ks) if (k, strategy, index) in bars]
            heights = [bars[(k, strategy, index)] for k in ks if (k, strategy, index) in bars]
            label = strategy + (f" ({_labels(runs)[index]})" if len(runs) > 1 else "")
            ax.bar(xs, heights, width, label=label, color=f"C{STRATEGIES.index(strategy)}",
                   hatch="//" if index else None)
        ax.set_xticks([x + 0.4 - width / 2 for x in range(len(ks))], [f"k={k}" for k in ks])
        ax.set_title(f"{shape}, {rows:,} rows/input", fontsize=10)
        ax.set_ylabel("median seconds")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_scale(runs: list[dict], path: Path) -> bool:
    """Seconds and peak task memory against rows per input, one line per strategy (and run);
    False when no run measured a shape at several sizes."""
    series = [(label, key, groups) for label, run in zip(_labels(runs), runs)
              for key, groups in _scale_series(run).items()]
    if not series:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (time_ax, memory_ax) = plt.subplots(1, 2, figsize=(11, 4))
    for n, (label, (shape, k), groups) in enumerate(series):
        for strategy in dict.fromkeys(s for g in groups for s in g["strategies"]):
            points = [(g["rows"], g["strategies"][strategy]) for g in groups if strategy in g["strategies"]]
            name = f"{strategy} ({shape}, k={k}" + (f", {label})" if len(runs) > 1 else ")")
            style = dict(marker="o", color=f"C{STRATEGIES.index(strategy)}", linestyle="--" if n else "-", label=name)
            time_ax.plot([r for r, _ in points], [median_seconds(s) for _, s in points], **style)
            memory_ax.plot([r for r, _ in points], [s.get("peak_task_memory", 0) / 2**20 for _, s in points], **style)
    sizes = sorted({g["rows"] for _, _, groups in series for g in groups})
    for ax, title in ((time_ax, "median seconds"), (memory_ax, "peak execution memory of one task, MiB")):
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes, [rows_label(r) for r in sizes])
        ax.minorticks_off()
        ax.set_ylim(bottom=0)
        ax.set_xlabel("rows per input")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def write_results(out: Path, results: dict, markdown_text: str) -> None:
    """A benchmark's results as it ran them (results.json) and as a reader reads them
    (results.md), in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    (out / "results.md").write_text(markdown_text)
    print(f"wrote {out / 'results.json'} and {out / 'results.md'}", file=sys.stderr, flush=True)


def write(out: Path, runs: list[dict]) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.md").write_text(markdown(runs) + "\n")
    plot(runs, out / "plot.png")
    written = [out / "results.md", out / "plot.png"]
    if plot_scale(runs, out / "scale.png"):
        written.append(out / "scale.png")
    return written


RESULTS_DIR = Path(__file__).resolve().parent / "results"
# The README's figure: the latest targets run of each Spark line.
HEADLINE_RUNS = ("targets-h-seed2-spark3.5.9", "targets-h-seed2-spark4.3.0")
HEADLINE_STRATEGIES = ("chain", "balanced", "multiway", "floor")
# The targets the index's summary compares across runs (a run shows those it measured at the
# target's rows).
SUMMARY_TARGETS = (TARGETS[0], TARGETS[2], TARGETS[4], TARGETS[8], TARGETS[9])


def _k8_group(run: dict) -> dict:
    return next(g for g in run["groups"] if (g["shape"], g["rows"], g["k"]) == ("unique", 2_000_000, 8))


def headline_plot(run_dirs: list[Path], path: Path) -> list[str]:
    """Median seconds per strategy of the k = 8 FULL join (8 inputs x 2M rows), one bar per run
    (min to max of the repetitions as a line); returns each run's ratios, for the README's text."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = [json.loads((d / "results.json").read_text()) for d in run_dirs]
    labels = _labels(runs)
    fig, ax = plt.subplots(figsize=(7, 3.6))
    width = 0.8 / len(runs)
    summary = []
    for index, (label, run) in enumerate(zip(labels, runs)):
        group = _k8_group(run)
        strategies = [s for s in HEADLINE_STRATEGIES if s in group["strategies"]]
        xs = [HEADLINE_STRATEGIES.index(s) + (index - (len(runs) - 1) / 2) * width for s in strategies]
        medians = [median_seconds(group["strategies"][s]) for s in strategies]
        low = [m - min(group["strategies"][s]["seconds"]) for s, m in zip(strategies, medians)]
        high = [max(group["strategies"][s]["seconds"]) - m for s, m in zip(strategies, medians)]
        bars = ax.bar(xs, medians, width, yerr=[low, high], capsize=3, color=f"C{index}",
                      label=f"{label} (seed {_seed(run)}, {run['reps']} repetitions)")
        ax.bar_label(bars, [f"{m:.1f} s" for m in medians], fontsize=7, padding=2)
        summary.append(f"{run['name']}: chain/multiway {ratio(group, 'chain', 'multiway'):.2f}, "
                       f"balanced/multiway {ratio(group, 'balanced', 'multiway'):.2f}, "
                       f"multiway/floor {ratio(group, 'multiway', 'floor'):.2f}")
    ax.set_xticks(range(len(HEADLINE_STRATEGIES)),
                  ["chain\n(Spark's joins)", "balanced tree\n(Spark's joins)", "multiway\n(MULTI_JOIN)",
                   "floor\n(shuffle + sort only)"], fontsize=8)
    ax.set_ylabel("median seconds (min-max)")
    ax.set_title("FULL OUTER JOIN of 8 inputs x 2M rows, local[2]", fontsize=10)
    ax.set_ylim(top=ax.get_ylim()[1] * 1.08)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return summary


def _seed(run: dict) -> int:
    found = re.search(r"--seed[ =](\d+)", run.get("command") or "")
    return int(found.group(1)) if found else 0


def _local_files(run: dict) -> str:
    # A run that records no confs (the dbt builds of benchmarks/bucketed_build.py) used Spark's default.
    return "memory" if run.get("confs", {}).get("spark.local.dir", "").startswith("/dev/shm") else "disk"


def _commands(directory: Path, run: dict | None) -> list[str]:
    """The commands a run directory records: results.json's, else those its markdown quotes."""
    if run and run.get("command"):
        return [run["command"]]
    found = []
    for name in ("results.md", "profile.md"):
        if (directory / name).exists():
            found += re.findall(r"`((?:\S*python|dbt-multijoin|bash) [^`]*)`", (directory / name).read_text())
    return list(dict.fromkeys(found))


def _tables_of(markdown_text: str) -> list[str]:
    """The tables and bullet lines of a markdown file, headings demoted below the index's."""
    lines, previous = [], ""
    for line in markdown_text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")][1:]
        if line.startswith("|") and cells and all(c == "not measured" for c in cells):
            continue
        if line.startswith(("|", "- ")) and not re.match(r"- Spark [^:]*: `", line):
            if not previous.startswith(("|", "- ")) and lines:
                lines.append("")
            lines.append(line)
        elif line.startswith("## "):
            lines += ["", "#" + line]
        previous = line
    return lines + [""]


def _run_dirs(results: Path) -> list[Path]:
    return sorted(d for d in results.iterdir() if d.is_dir() and any(
        (d / name).exists() for name in ("results.json", "results.md", "profile.md")))


def _load(directory: Path) -> dict | None:
    path = directory / "results.json"
    return json.loads(path.read_text()) if path.exists() else None


def index(results: Path = RESULTS_DIR) -> str:
    """benchmarks/results/README.md: every run directory, from its own files."""
    dirs = _run_dirs(results)
    runs = {d.name: _load(d) for d in dirs}
    lines = ["# Committed benchmark results", "",
             "Generated by `python -m benchmarks.report --index` from the run directories below: "
             "each section's tables come from that directory's results.json (or, where a run kept "
             "no JSON, its results.md), with the command the run recorded and the hand-written "
             "notes of its notes.md. Do not edit this file: write notes in the run's notes.md and "
             "regenerate it. How to run and read the benchmarks: [../README.md](../README.md).", ""]

    lines += ["## Targets across runs", "",
              "Every run that measured one of these targets at its size; the ratio of the medians "
              "within that run. Local files: where Spark's shuffle files went (`--local-dir`).", ""]
    rows = []
    for d in dirs:
        run = runs[d.name]
        if not run or "groups" not in run:
            continue
        cells = []
        for target in SUMMARY_TARGETS:
            found = evaluate(run, target)
            cells.append("" if not found or found[1] != target.rows else
                         f"{found[0]:.2f}" + ("" if target.met(found[0]) else " (missed)"))
        if any(cells):
            m = run["machine"]
            rows.append([f"[{d.name}](#{d.name.replace('.', '')})", m["spark"], m["commit"],
                         run["date"][:10], _seed(run), _local_files(run), *cells])
    lines += _table(["run", "Spark", "commit", "date", "seed", "local files",
                     *(t.name for t in SUMMARY_TARGETS)], rows)

    for d in dirs:
        run = runs[d.name]
        files = [f"[{f.name}]({d.name}/{f.name})" for f in sorted(d.iterdir())
                 if f.suffix in (".md", ".png") and f.name != "notes.md"]
        lines += [f"## {d.name}", "", "Files: " + ", ".join(files) + ".", ""]
        if run and "machine" in run:
            m = run["machine"]
            lines += [f"Spark {m['spark']}, commit {m['commit']}, {run['date'][:10]}, {run['reps']} "
                      f"repetitions ({run['warmup']} untimed first), seed {_seed(run)}, local files "
                      f"on {_local_files(run)}.", ""]
        commands = _commands(d, run)
        lines += [f"Command{'s' if len(commands) > 1 else ''}:", ""] + [f"    {c}" for c in commands] + [""] \
            if commands else ["Command: not recorded in the results files.", ""]
        if (d / "notes.md").exists():
            lines += [(d / "notes.md").read_text().strip(), ""]
        if run and "groups" in run:
            label = _labels([run])
            measured = [t for t in TARGETS if (found := evaluate(run, t)) and found[1] == t.rows]
            if measured:
                lines += _table(["target", label[0]], [
                    [t.name, f"{evaluate(run, t)[0]:.2f} {'met' if t.met(evaluate(run, t)[0]) else 'MISSED'}"]
                    for t in measured])
            lines += _measurements([run], label)
            lines += [line.replace("## ", "### ", 1) if line.startswith("## ") else line
                      for line in _scale([run], label)]
        else:
            source = next(d / n for n in ("results.md", "profile.md") if (d / n).exists())
            lines += _tables_of(source.read_text())
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.report", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, nargs="?")
    parser.add_argument("runs", type=Path, nargs="*", help="directories holding a results.json")
    parser.add_argument("--index", action="store_true",
                        help="write the index of the run directories under --results")
    parser.add_argument("--results", type=Path, default=RESULTS_DIR, help="default: benchmarks/results")
    parser.add_argument("--index-out", type=Path, help="default: RESULTS/README.md")
    parser.add_argument("--headline-plot", type=Path, metavar="PNG",
                        help="the README's figure from the runs given (default: the latest targets run per line)")
    args = parser.parse_args(argv)
    if args.index or args.headline_plot:
        if args.index:
            out = args.index_out or args.results / "README.md"
            out.write_text(index(args.results))
            print(f"wrote {out}", file=sys.stderr)
        if args.headline_plot:
            run_dirs = ([args.out, *args.runs] if args.out else [args.results / n for n in HEADLINE_RUNS])
            for line in headline_plot(run_dirs, args.headline_plot):
                print(line, file=sys.stderr)
            print(f"wrote {args.headline_plot}", file=sys.stderr)
        return 0
    if args.out is None or not args.runs:
        parser.error("OUT_DIR and at least one RUN_DIR, or --index / --headline-plot")
    runs = [json.loads((directory / "results.json").read_text()) for directory in args.runs]
    for path in write(args.out, runs):
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
