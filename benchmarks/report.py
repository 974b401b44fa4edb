"""Medians, ratios, targets, and the three outputs: results.json, results.md, plot.png."""

from __future__ import annotations

import json
import statistics
import sys
from dataclasses import replace
from pathlib import Path

from benchmarks.config import JOIN_STRATEGIES, SHAPES, STRATEGIES, TARGETS, DataSpec

# Every ratio is numerator time / denominator time of the same run: > 1 means the denominator
# is faster.
RATIOS = (
    ("chain", "multiway"),
    ("balanced", "multiway"),
    ("union_group", "multiway"),
    ("multiway", "floor"),
    ("chain", "floor"),
    ("balanced", "floor"),
    ("union_group", "floor"),
)
_MEDIAN_FIELDS = ("shuffle_bytes_written", "shuffle_records_written", "exchanges", "sorts",
                  "sort_time_ms", "sort_peak_memory_bytes", "sort_spill_bytes")


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _phases(m: dict) -> dict:
    """Split one measurement's time: before the last stage (scans, shuffle writes, and for the
    vanilla plans the intermediate joins), the last stage (shuffle read, sorts, merge, sink), and
    what ran outside any stage (planning, scheduling)."""
    stages = [s for s in m.get("stages", []) if s["submitted_ms"] and s["completed_ms"]]
    if not stages:
        return {}
    last = max(stages, key=lambda s: s["stage_id"])
    first_submitted = min(s["submitted_ms"] for s in stages)
    before = [s for s in stages if s is not last]
    before_end = max((s["completed_ms"] for s in before), default=first_submitted)
    return {
        "stages": len(stages),
        "before_last_stage_s": (before_end - first_submitted) / 1000,
        "last_stage_s": last["wall_ms"] / 1000,
        "last_stage_tasks": last["tasks"],
        "last_stage_task_s": last["executor_run_ms"] / 1000,
        "last_stage_fetch_wait_s": last["shuffle_fetch_wait_ms"] / 1000,
        "outside_stages_s": max(0.0, m["seconds"] - (last["completed_ms"] - first_submitted) / 1000),
        "last_stage_cpu_s": last["executor_cpu_ms"] / 1000,
        "task_s": sum(s["executor_run_ms"] for s in stages) / 1000,
        "task_cpu_s": sum(s["executor_cpu_ms"] for s in stages) / 1000,
        "gc_s": sum(s["gc_ms"] for s in stages) / 1000,
        "sort_s": m.get("sort_time_ms", 0) / 1000,
    }


def _strategy_summary(ms: list[dict]) -> dict:
    ok = [m for m in ms if "error" not in m]
    if not ok:
        return {"error": ms[0].get("error") if ms else "not run"}
    times = [m["seconds"] for m in ok]
    median_time = statistics.median(times)
    representative = min(ok, key=lambda m: abs(m["seconds"] - median_time))
    rows = sorted({m["output_rows"] for m in ok if m["output_rows"] is not None})
    summary = {
        "median_s": median_time,
        "min_s": min(times),
        "max_s": max(times),
        "seconds": times,
        "reps": len(ok),
        "errors": len(ms) - len(ok),
        "output_rows": rows[0] if len(rows) == 1 else (rows or None),
        "operators": representative["operators"],
        "multijoin_used": any(m.get("multijoin") for m in ok),
        "multijoin_in_every_rep": all(m.get("multijoin") for m in ok),
        "other_load_max": max((m.get("other_load") or 0) for m in ok),
        "task_totals": {key: _median([m["task_totals"][key] for m in ok])
                        for key in ok[0]["task_totals"]},
        "phases": _phases(representative),
        **{field: _median([m.get(field) for m in ok]) for field in _MEDIAN_FIELDS},
    }
    multijoin = [m["multijoin"]["metrics"] for m in ok if m.get("multijoin")]
    if multijoin:
        summary["multijoin_metrics"] = {key: _median([mm.get(key) for mm in multijoin])
                                        for key in multijoin[0]}
    return summary


def summarise(results: dict) -> None:
    """Adds per-(config, k) summaries and the target verdicts to `results`, in place."""
    by_key: dict[tuple, list[dict]] = {}
    for m in results["measurements"]:
        by_key.setdefault((m["config"], m["k"], m["strategy"]), []).append(m)
    for config in results["configs"]:
        config["results"] = {}
        for k in config["ks"]:
            strategies = {s: _strategy_summary(by_key[(config["name"], k, s)])
                          for s in STRATEGIES if (config["name"], k, s) in by_key}
            medians = {s: v["median_s"] for s, v in strategies.items() if "median_s" in v}
            fastest = {s: v["min_s"] for s, v in strategies.items() if "median_s" in v}
            cpu = {s: v["task_totals"]["executor_cpu_ms"] for s, v in strategies.items()
                   if "median_s" in v}
            ratios, paired, min_ratios, cpu_ratios = {}, {}, {}, {}
            for num, den in RATIOS:
                if num in medians and den in medians:
                    ratios[f"{num}/{den}"] = medians[num] / medians[den]
                    min_ratios[f"{num}/{den}"] = fastest[num] / fastest[den]
                    cpu_ratios[f"{num}/{den}"] = cpu[num] / cpu[den] if cpu[den] else None
                    per_rep = {}
                    for m in by_key[(config["name"], k, num)] + by_key[(config["name"], k, den)]:
                        if "error" not in m:
                            per_rep.setdefault(m["rep"], {})[m["strategy"]] = m["seconds"]
                    pairs = [r[num] / r[den] for r in per_rep.values() if num in r and den in r]
                    paired[f"{num}/{den}"] = statistics.median(pairs) if pairs else None
            join_rows = {s: v.get("output_rows") for s, v in strategies.items()
                         if s in JOIN_STRATEGIES and "median_s" in v}
            distinct = {json.dumps(r) for r in join_rows.values()}
            config["results"][str(k)] = {
                "strategies": strategies,
                "ratios": ratios,
                "paired_ratios": paired,
                # Fastest repetition of each: other processes only ever add time.
                "min_ratios": min_ratios,
                # Task CPU time (summed over tasks, median over repetitions): barely moved by
                # other processes on the machine, unlike wall-clock time.
                "cpu_ratios": cpu_ratios,
                "join_output_rows": join_rows,
                "row_counts_agree": len(distinct) == 1 and None not in join_rows.values(),
                "multiway_used_multijoin": strategies.get("multiway", {}).get("multijoin_in_every_rep"),
            }
    results["targets"] = evaluate_targets(results)


def _same_shape(data: DataSpec, shape: str) -> bool:
    return replace(SHAPES[shape], rows=data.rows, seed=data.seed, columns=3) == data


def evaluate_targets(results: dict) -> list[dict]:
    run = results["run"]
    verdicts = []
    for target in TARGETS:
        verdict = {"id": target.id, "target": target.text, "ratio": target.ratio, "op": target.op,
                   "bound": target.bound, "value": None, "met": None, "config": None,
                   "at_target_size": False}
        for config in results["configs"]:
            data = DataSpec(**config["data"])
            cell = config["results"].get(str(target.k))
            if not _same_shape(data, target.shape) or cell is None or target.ratio not in cell["ratios"]:
                continue
            at_size = data.rows == target.rows and run["master"] == "local[2]" and run["aqe"]
            if verdict["value"] is not None and (verdict["at_target_size"] or not at_size):
                continue  # keep the measurement closest to the target's conditions
            value = cell["ratios"][target.ratio]
            verdict.update(value=value, met=target.met(value), config=config["name"],
                           at_target_size=at_size, rows=data.rows,
                           paired_value=cell["paired_ratios"].get(target.ratio),
                           min_value=cell["min_ratios"].get(target.ratio),
                           cpu_value=cell["cpu_ratios"].get(target.ratio))
        verdicts.append(verdict)
    return verdicts


# ------------------------------------------------------------------------------------- output

def _mib(value) -> str:
    return "-" if value is None else f"{value / 2**20:,.1f}"


def _s(value) -> str:
    return "-" if value is None else f"{value:.2f}"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines + [""]


def markdown(results: dict) -> str:
    run, m, op = results["run"], results["machine"], results["operator"]
    title = f"# dbt-multijoin benchmark: `{run['preset']}`"
    lines = [title + (" (PROVISIONAL)" if results["provisional"] else ""), ""]
    if results["provisional"]:
        lines += ["**Provisional:** " + "; ".join(results["provisional_reasons"]) + ".", ""]
    git = m.get("git") or {}
    lines += [
        f"- Command: `{results['command']}`",
        f"- Date: {results['created']} (run took {results['duration_s'] / 60:.1f} min); "
        f"commit {str(git.get('commit'))[:12]}{' + local changes' if git.get('dirty') else ''}",
        f"- Operator: `{Path(op['jar']).name}` (sources fingerprint {op['fingerprint']}, "
        + (f"from git {op['git_rev']} = {op['git_sha'][:12]})" if op.get("git_sha") else
           "from the worktree" + (", with uncommitted changes in jvm/src)" if op.get("uncommitted_jvm_changes") else ")")),
        f"- Machine: {m['cores']} cores ({m['cpu_model']}), {(m['memory_bytes'] or 0) / 2**30:.1f} GiB RAM, "
        f"{m['os']}; {m['java']}; Spark {m['spark']}; Python {m['python']}",
        f"- Spark: master {run['master']}, driver memory {run['driver_memory']} "
        f"(max heap {m['jvm_max_heap_bytes'] / 2**30:.1f} GiB), AQE {'on' if run['aqe'] else 'off'}, "
        f"broadcast off, spark.sql.shuffle.partitions={run['shuffle_partitions']}, "
        f"spark.multijoin.failOnFallback=true"
        + (f", extra {run['extra_conf']}" if run["extra_conf"] else ""),
        f"- Inputs: parquet files generated once, read back by every strategy; sink: `noop`. "
        f"Times: wall clock of planning + execution, median of {run['reps']} repetitions "
        f"(order rotated each repetition)"
        + (f" after an untimed warm-up ({run['warmup_rows']:,} rows/input)." if run["warmup_rows"] else "."),
        f"- Other processes used "
        + ("n/a" if results["other_load"] is None else f"{results['other_load']:.0%}")
        + " of the machine's CPU during the timed part.",
    ]
    if run["note"]:
        lines.append(f"- Note: {run['note']}")
    lines.append("")

    lines += ["## Targets", "",
              "Verdicts use the ratio of median wall-clock times within this run. Paired: median "
              "over repetitions of the per-repetition ratio. Fastest runs: the ratio of each "
              "strategy's fastest repetition (other processes only ever add time). Task CPU: the "
              "ratio of task CPU time summed over tasks, which other processes barely move.", ""]
    rows = []
    for t in results["targets"]:
        if t["value"] is None:
            verdict, value, where = "not measured", "-", "-"
        else:
            verdict = ("met" if t["met"] else "MISSED") + ("" if t["at_target_size"] else " (not at target size)")
            paired = t.get("paired_value")
            value = f"{t['value']:.2f}" + (f" (paired {paired:.2f})" if paired is not None else "")
            where = f"{t['config']}, {t['rows']:,} rows"
        cpu, fastest = t.get("cpu_value"), t.get("min_value")
        rows.append([t["id"], t["target"], f"{t['ratio']} {t['op']} {t['bound']}", value, verdict,
                     "-" if fastest is None else f"{fastest:.2f}", "-" if cpu is None else f"{cpu:.2f}",
                     where])
    lines += _table(["id", "target", "condition", "measured (median)", "result", "fastest runs",
                     "task CPU", "measured on"], rows)

    for config in results["configs"]:
        strategies = [s for s in STRATEGIES if s in config["strategies"]]
        lines += [f"## {config['name']}: {config['description']}", ""]
        lines.append("Inputs (rows each): " + ", ".join(f"{r:,}" for r in config["inputs"]["rows"]) + ".")
        for name, reason in config["skipped"].items():
            lines.append(f"`{name}` skipped: {reason}.")
        lines.append("")

        ran = [s for s in strategies if s not in config["skipped"]]
        ratio_names = [f"{a}/{b}" for a, b in RATIOS if a in ran and b in ran]
        lines += ["### Median seconds and ratios", ""]
        rows = []
        for k, cell in config["results"].items():
            row = [k]
            for s in ran:
                v = cell["strategies"].get(s, {})
                row.append(_s(v.get("median_s")) if "median_s" in v else "failed")
            row += [_s(cell["ratios"].get(r)) for r in ratio_names]
            load = max((v.get("other_load_max") or 0) for v in cell["strategies"].values())
            rows.append(row + [f"{load:.0%}"])
        lines += _table(["k"] + ran + ratio_names + ["others' CPU (max)"], rows)

        lines += ["### Task CPU seconds and ratios", "",
                  "CPU time of all tasks of the query (median over repetitions): the work done, "
                  "whatever else ran on the machine.", ""]
        rows = []
        for k, cell in config["results"].items():
            row = [k]
            for s in ran:
                v = cell["strategies"].get(s, {})
                row.append(_s(v["task_totals"]["executor_cpu_ms"] / 1000) if "median_s" in v else "failed")
            row += [_s(cell["cpu_ratios"].get(r)) for r in ratio_names]
            rows.append(row)
        lines += _table(["k"] + ran + ratio_names, rows)

        lines += ["### Rows and shuffle (Spark's SQL metrics of the executed plans)", "",
                  "Output rows: the join's rows (floor: not a join). Shuffle: `shuffle bytes written`, "
                  "summed over every Exchange of the executed plan. Sorts: Sort operators, plus the "
                  "inputs the MultiJoin sorts itself.", ""]
        rows = []
        for k, cell in config["results"].items():
            for s in ran:
                v = cell["strategies"].get(s, {})
                if "median_s" not in v:
                    continue
                ops = v["operators"]
                rows.append([k, s, "-" if v["output_rows"] is None else f"{v['output_rows']:,}",
                             int(v["exchanges"] or 0), _mib(v["shuffle_bytes_written"]),
                             v.get("sorts", ops.get("Sort", 0)), ops.get("SortMergeJoin", 0),
                             ops.get("MultiJoin", 0)])
            agree = "yes" if cell["row_counts_agree"] else "**NO**"
            rows.append([k, f"*join row counts agree: {agree}*", "", "", "", "", "", ""])
        lines += _table(["k", "strategy", "output rows", "exchanges", "shuffle written MiB", "sorts",
                         "SortMergeJoins", "MultiJoins"], rows)

        if "multiway" in ran:
            lines += ["### multiway: memory and spill", "",
                      "MultiJoin `spillSize` (its own buffers of duplicated keys); task metrics of all "
                      "stages of the query: memory/disk bytes spilled (sorts included), the largest "
                      "peak execution memory of one task; the sorts' `peak memory` (a SQL metric, "
                      "summed over the tasks and the inputs the MultiJoin sorts).", ""]
            rows = []
            for k, cell in config["results"].items():
                v = cell["strategies"].get("multiway", {})
                if "median_s" not in v:
                    continue
                t = v["task_totals"]
                spill = (v.get("multijoin_metrics") or {}).get("spillSize")
                rows.append([k, _mib(spill), _mib(t["memory_bytes_spilled"]), _mib(t["disk_bytes_spilled"]),
                             _mib(t["peak_execution_memory_max_task"]), _mib(v["sort_peak_memory_bytes"]),
                             "yes" if v["multijoin_in_every_rep"] else "**NO**"])
            lines += _table(["k", "MultiJoin spill MiB", "memory spilled MiB", "disk spilled MiB",
                             "peak task memory MiB", "sorts' peak MiB (sum over tasks)", "MultiJoin used"], rows)

        lines += ["### Where the time goes", "",
                  "From the representative (median) repetition: seconds before the last stage "
                  "(scans + shuffle writes; intermediate joins for the vanilla plans), the last stage "
                  "(shuffle read + sorts + merge/aggregate + sink) with its task time and task CPU "
                  "time summed over tasks, Sort `sort time` summed over all sorts, JVM GC time, and "
                  "time outside stages (planning, scheduling).", ""]
        rows = []
        for k, cell in config["results"].items():
            for s in ran:
                v = cell["strategies"].get(s, {})
                p = v.get("phases") or {}
                if not p:
                    continue
                rows.append([k, s, _s(v["median_s"]), p["stages"], _s(p["before_last_stage_s"]),
                             _s(p["last_stage_s"]), p["last_stage_tasks"], _s(p["last_stage_task_s"]),
                             _s(p["last_stage_cpu_s"]), _s(p["task_cpu_s"]), _s(p["sort_s"]),
                             _s(p["gc_s"]), _s(p["outside_stages_s"])])
        lines += _table(["k", "strategy", "median s", "stages", "before last stage s", "last stage s",
                         "last stage tasks", "last stage task s", "last stage CPU s", "all tasks CPU s",
                         "sort s", "GC s", "outside stages s"], rows)
    if results["failures"]:
        lines += ["## Failures", ""]
        for m in results["measurements"]:
            if "error" in m:
                lines.append(f"- {m['config']} k={m['k']} rep {m['rep']} {m['strategy']}: `{m['error']}`")
        lines.append("")
    return "\n".join(lines)


def plot(results: dict, path: Path) -> bool:
    try:
        import matplotlib
    except ImportError:
        print("matplotlib is not installed (pip install -e '.[bench]'): no plot", file=sys.stderr)
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    configs = results["configs"]
    fig, axes = plt.subplots(1, len(configs), figsize=(5.5 * len(configs), 4.2), squeeze=False)
    markers = dict(zip(STRATEGIES, "os^Dv"))
    for ax, config in zip(axes[0], configs):
        for s in STRATEGIES:
            points = [(int(k), cell["strategies"][s]) for k, cell in config["results"].items()
                      if "median_s" in cell["strategies"].get(s, {})]
            if not points:
                continue
            ks = [k for k, _ in points]
            med = [v["median_s"] for _, v in points]
            err = [[v["median_s"] - v["min_s"] for _, v in points], [v["max_s"] - v["median_s"] for _, v in points]]
            ax.errorbar(ks, med, yerr=err, marker=markers[s], capsize=3, label=s,
                        linewidth=2.5 if s == "multiway" else 1.2,
                        linestyle="--" if s == "floor" else "-")
        ax.set_xticks([int(k) for k in config["results"]])
        ax.set_xlabel("k (inputs)")
        ax.set_ylabel("seconds (median, min-max bars)")
        ax.set_title(f"{config['name']}: {config['data']['rows']:,} rows/input", fontsize=10)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    machine = results["machine"]
    fig.suptitle(f"FULL multi-join to noop: {results['run']['master']}, {machine['cores']} cores, "
                 f"Spark {machine['spark']}" + (" (provisional)" if results["provisional"] else ""),
                 fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_all(results: dict, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path, md_path, png_path = out_dir / "results.json", out_dir / "results.md", out_dir / "plot.png"
    results["outputs"] = {"json": json_path.name, "markdown": md_path.name,
                          "plot": png_path.name if plot(results, png_path) else None}
    json_path.write_text(json.dumps(results, indent=1, sort_keys=False, default=str) + "\n")
    md_path.write_text(markdown(results) + "\n")
    return [json_path, md_path] + ([png_path] if results["outputs"]["plot"] else [])


def main(argv: list[str] | None = None) -> int:
    """Re-renders results.md and plot.png (and the summaries in results.json) from the
    measurements of a results.json: `python -m benchmarks.report DIR_OR_JSON`."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m benchmarks.report", description=main.__doc__)
    p.add_argument("results", type=Path)
    args = p.parse_args(argv)
    path = args.results / "results.json" if args.results.is_dir() else args.results
    results = json.loads(path.read_text())
    summarise(results)
    for written in write_all(results, path.parent):
        print(f"wrote {written}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
