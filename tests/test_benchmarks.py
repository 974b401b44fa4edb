"""The benchmark runner keeps measuring what it claims: one tiny run of every shape in a
subprocess, then checks of the plans and rows it recorded (every join strategy returns the same
rows, multiway is the MultiJoin operator and reads every input row, it shuffles exactly the
floor's bytes and fewer than the chain, in one stage per input and one merge stage, the LEFT
shape's multiway plans the bloom filter). No timing is asserted: the full-size runs of
benchmarks/README.md are for that."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.workload import DRIVEN_SHAPES, register_inputs
from testkit import REPO

K = 3

pytestmark = pytest.mark.slow


def _python(*args: str, cwd: Path = REPO) -> None:
    completed = subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-5000:]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench-out")
    _python("-m", "benchmarks", "--shapes", "unique,dups,left,left_compact,left_skewed", "--rows", "4000", "--k", str(K),
            "--reps", "1", "--warmup", "0", "--shuffle-partitions", "4", "--driver-memory", "1g",
            # Without it AQE coalesces such small shuffles into one partition (two after rounding
            # up to whole waves); with it, the merge stage runs one task per shuffle partition.
            "--conf", "spark.sql.adaptive.coalescePartitions.enabled=false",
            "--work-dir", str(tmp_path_factory.mktemp("bench-work")), "--out", str(out))
    return out, json.loads((out / "results.json").read_text())


def _groups(results: dict) -> dict[str, dict]:
    return {group["shape"]: group for group in results["groups"]}


def test_every_shape_ran_its_strategies(run):
    _, results = run
    groups = _groups(results)
    assert sorted(groups) == ["dups", "left", "left_compact", "left_skewed", "unique"]
    assert sorted(groups["unique"]["strategies"]) == ["balanced", "chain", "floor", "multiway", "multiway_concat", "union_group"]
    assert sorted(groups["dups"]["strategies"]) == ["balanced", "chain", "floor", "multiway"]
    for shape in DRIVEN_SHAPES:
        assert sorted(groups[shape]["strategies"]) == ["chain", "multiway"]
    for group in groups.values():
        assert all(len(s["seconds"]) == 1 for s in group["strategies"].values())


def test_the_join_strategies_return_the_same_rows(run):
    _, results = run
    for shape, group in _groups(results).items():
        joins = {name: s["rows"] for name, s in group["strategies"].items() if name != "floor"}
        assert len(set(joins.values())) == 1, (shape, joins)
        inputs = group["input_rows"]
        if shape in DRIVEN_SHAPES:
            assert joins["multiway"] == inputs["t0"] > 0  # every key is in every feature input once
        else:
            # Every key of every input appears in the FULL join; the floor emits every input row.
            assert joins["multiway"] >= max(inputs.values())
            assert group["strategies"]["floor"]["rows"] == sum(inputs.values())


def test_multiway_is_one_operator_reading_every_input_row(run):
    _, results = run
    for shape, group in _groups(results).items():
        strategies, inputs = group["strategies"], group["input_rows"]
        multiway = strategies["multiway"]
        assert multiway["sort_merge_joins"] == 0
        assert multiway["multijoin_input_rows"] is not None, shape
        if shape in DRIVEN_SHAPES:
            # The bloom filter drops feature rows before the operator: only the driver's are all read.
            assert multiway["multijoin_input_rows"][0] == inputs["t0"]
            assert strategies["chain"]["sort_merge_joins"] == K
        else:
            assert multiway["multijoin_input_rows"] == list(inputs.values())
            assert multiway["exchanges"] == K
            for vanilla in ("chain", "balanced"):
                assert strategies[vanilla]["sort_merge_joins"] == K - 1


def test_multiway_shuffles_the_floors_bytes_and_fewer_than_the_chain(run):
    _, results = run
    for shape in ("unique", "dups"):
        strategies = _groups(results)[shape]["strategies"]
        assert strategies["multiway"]["shuffle_bytes"] == strategies["floor"]["shuffle_bytes"] > 0
        assert strategies["multiway"]["shuffle_bytes"] < strategies["chain"]["shuffle_bytes"]


def test_multiway_runs_one_stage_per_input_and_one_merge_stage(run):
    # Every input shuffled once, then one stage sorts and merges them all; the chain adds stages.
    _, results = run
    for shape in ("unique", "dups"):
        strategies = _groups(results)[shape]["strategies"]
        for name, strategy in strategies.items():
            (stages,) = strategy["stage_timings"]  # one timed repetition
            assert all(s["tasks"] > 0 and s["wall_seconds"] >= 0 and s["gc_seconds"] >= 0 for s in stages)
            assert sum(s["cpu_seconds"] for s in stages) > 0, (shape, name)
        assert len(strategies["multiway"]["stage_timings"][0]) == K + 1
        assert len(strategies["floor"]["stage_timings"][0]) == K + 1
        assert len(strategies["chain"]["stage_timings"][0]) > K + 1


def test_a_conf_reaches_the_session(run):
    _, results = run
    assert results["confs"]["spark.sql.adaptive.coalescePartitions.enabled"] == "false"
    merge_stage = _groups(results)["unique"]["strategies"]["multiway"]["stage_timings"][0][-1]
    assert merge_stage["tasks"] == 4  # --shuffle-partitions, uncoalesced


# The shapes whose driver holds 5% of the keys (left_skewed's driver holds them all).
@pytest.mark.parametrize("shape", ["left", "left_compact"])
def test_the_left_multiway_plans_the_bloom_filter_and_shuffles_less(run, shape):
    _, results = run
    strategies = _groups(results)[shape]["strategies"]
    assert strategies["multiway"]["bloom_filter"] is True
    assert 0 < strategies["multiway"]["shuffle_bytes"] < strategies["chain"]["shuffle_bytes"]


def test_a_seed_draws_another_data_set_of_the_same_shape(spark, tmp_path):
    """`--seed` lets the targets be measured again on data nobody chose: other keys in every input
    and in the driver, other values, the same sizes."""
    rows = 4000

    def draw(shape: str, k: int, seed: int) -> tuple[dict, list]:
        counts = register_inputs(spark, tmp_path, shape, rows, k, seed)
        return counts, [spark.table(f"t{i}").collect() for i in sorted(int(v[1:]) for v in counts)]

    try:
        for shape, k in (("unique", 2), ("left_compact", 1)):
            (counts, tables), (seeded_counts, seeded_tables) = draw(shape, k, 0), draw(shape, k, 7)
            assert counts.keys() == seeded_counts.keys()
            # Every input of `unique` is drawn; of left_compact only the driver (the other inputs
            # hold every key).
            for i in range(len(tables)) if shape == "unique" else [0]:
                assert {r.k for r in tables[i]} != {r.k for r in seeded_tables[i]}, (shape, i)
            if shape == "unique":  # each input keeps about half of a universe of 2 x rows
                assert all(0.9 * rows < n < 1.1 * rows for n in [*counts.values(), *seeded_counts.values()])
                assert {r.c1_0 for r in tables[0]} != {r.c1_0 for r in seeded_tables[0]}
            else:  # a driver with 5% of the keys, every other input with all of them
                assert all(0.8 * rows / 20 < c["t0"] < 1.2 * rows / 20 for c in (counts, seeded_counts))
                assert counts["t1"] == seeded_counts["t1"] == rows
    finally:
        for i in range(3):
            spark.catalog.dropTempView(f"t{i}")


def test_the_report_puts_runs_side_by_side(run, tmp_path):
    out, results = run
    markdown = (out / "results.md").read_text()
    assert f"Spark {results['machine']['spark']}: median s" in markdown
    assert "k8 chain/multiway >= 2.5" in markdown and "left k6 chain/multiway shuffle bytes >= 3" in markdown
    assert (out / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    _python("-m", "benchmarks.report", str(tmp_path), str(out), str(out))
    header = next(line for line in (tmp_path / "results.md").read_text().splitlines()
                  if line.startswith("| shape"))
    assert header.count(": median s") == 2


def test_the_index_is_regenerated_from_every_run_directory(tmp_path):
    """benchmarks/results/README.md is what `--index` writes from the run directories (so it is
    never edited by hand, nor stale), with one section per run directory."""
    results = REPO / "benchmarks" / "results"
    out = tmp_path / "README.md"
    _python("-m", "benchmarks.report", "--index", "--index-out", str(out))
    index = out.read_text()
    assert index == (results / "README.md").read_text(), "run `python -m benchmarks.report --index`"
    run_dirs = [d.name for d in results.iterdir() if d.is_dir()]
    assert len(run_dirs) > 40
    sections = {line[3:] for line in index.splitlines() if line.startswith("## ")}
    assert set(run_dirs) <= sections
    # The command a run recorded, and the notes written beside its results.
    assert "    python -m benchmarks --targets --reps 5 --seed 2 --name targets-h-seed2-spark3.5.9" in index
    assert (results / "left-compact-one-file-per-task-seed2-spark3.5.9" / "notes.md").read_text().strip() in index


def _partial_update_results(changed_keys: dict[int, int], changed_rows: int | None = None) -> dict:
    """A partial-update benchmark's results at the given sizes (keys per input -> changed keys of
    every refresh), as benchmarks/partial_update.py writes them; `changed_rows`: as many rows
    changed at every size (--changed-rows), else a fraction of the keys (--changed)."""
    def run(seconds: float, keys: int | None, path: str) -> dict:
        return {"seconds": seconds, "input_bytes": 3 << 20, "shuffle_write_bytes": 1 << 20, "path": path, "changed_keys": keys}

    def day(rows: int, keys: int) -> dict:
        return {"rows_written": rows // 100, "tie_rows": rows // 200, "refresh": run(rows / 1e6, keys, "partial update"),
                "rebuild": run(rows / 1e5, None, "full build"), "equals_rebuild": True, "rows": 2 * rows}

    facts = {"files": 40, "bytes": 50 << 20, "versions": 30}
    sizes = [{"rows": rows, "fixed_cost": [1.0], "first_build": run(9.0, None, "full build"),
              "history": [{"day": 3, "changed_keys": keys, **run(4.0, keys, "partial update")},
                          {"day": 4, "changed_keys": keys, **run(5.0, keys, "partial update")}],
              "setup_seconds": 60.0, "inputs_at_change": {"t1": facts, "t2": facts}, "tables_at_end": {"wide": facts},
              "shapes": {shape: [day(rows, keys)] for shape in ("all_inputs", "one_input")}}
             for rows, keys in changed_keys.items()]
    return {"machine": {"spark": "3.5.0"}, "table_format": "delta", "k": 8, "days": 30, "changed": 0.01,
            "changed_rows": changed_rows, "reps": 1,
            "daily_refresh": True, "shapes": ["all_inputs", "one_input"], "sizes": sizes}


def test_the_partial_update_report_evaluates_the_targets_and_writes_its_notes():
    from benchmarks import partial_update

    markdown = partial_update.markdown(_partial_update_results({2_000_000: 30_000, 16_000_000: 240_000}, changed_rows=20_000))
    # Refresh 16 s against a 160 s rebuild (10x); 16 s against 2 s at 2M (8x the keys).
    assert "| full rebuild ÷ refresh at 16M >= 10 | one_input | 10.00 met |" in markdown
    assert "| refresh at 16M ÷ refresh at 2M <= 1.5 | one_input | 8.00 MISSED |" in markdown
    assert "change days of 20,000 rows of an input at every size" in markdown
    # With the changed rows a fraction of the keys, two sizes' refreshes do not compare.
    grown = partial_update.markdown(_partial_update_results({2_000_000: 30_000, 16_000_000: 240_000}))
    assert "| refresh at 16M ÷ refresh at 2M <= 1.5 | one_input | not measured: the changed rows grew with the size" in grown
    notes = markdown.split("## Notes")[1]
    assert "Above 50,000 changed keys the MERGE prunes its target before its join by a bloom filter" in notes
    assert "`one_input` at 16M" in notes and "`one_input` at 2M" not in notes
    assert "equalled the full rebuild after each of the 4 change days" in notes

    # The merge-on-read layout's refresh is held to a flatter bound.
    merge_on_read = {**_partial_update_results({2_000_000: 30_000, 16_000_000: 30_000}, changed_rows=20_000), "layout": "merge_on_read"}
    for size in merge_on_read["sizes"]:
        for days in size["shapes"].values():
            for measured in days:
                measured.update(reader_scan_seconds=2.0, table_scan_seconds=1.5, delta_share=0.01, compacted=False,
                                reader_scan_warm_seconds=1.8, table_scan_warm_seconds=1.4,
                                reader_planning_warm_seconds=0.4, table_planning_warm_seconds=0.05)
    report = partial_update.markdown(merge_on_read)
    assert "| refresh at 16M ÷ refresh at 2M <= 1.2 | one_input | 8.00 MISSED |" in report
    # The warm scans, and the planning within them; a run from before the planning was timed has none.
    assert "| 1.80 / 1.40 | 1.29 | 0.40 / 0.05 | 1.0% |" in report
    for size in merge_on_read["sizes"]:
        for days in size["shapes"].values():
            for measured in days:
                del measured["reader_planning_warm_seconds"], measured["table_planning_warm_seconds"]
    assert "| 1.80 / 1.40 | 1.29 | - | 1.0% |" in partial_update.markdown(merge_on_read)
    # Without the default layout's refreshes beside it (runs from before), no compaction target.
    assert "| compaction ÷ the default layout's refresh at 16M <= 1 | all | not measured" in report
    # With them: the compaction (24 s) against their median (30 s at 16M).
    for size in merge_on_read["sizes"]:
        size["compaction"] = {"seconds": 24.0, "delta_share": 0.01, "reader_scan_seconds": 2.0, "after_scan_seconds": 1.5}
        for days in size["shapes"].values():
            for measured in days:
                measured["wide_table_layout_refresh"] = {"seconds": size["rows"] / 1e6 * 30 / 16, "path": "partial update"}
    report = partial_update.markdown(merge_on_read)
    assert "| compaction ÷ the default layout's refresh at 16M <= 1 | all | 0.80 met |" in report
    assert "| 24.0 | 1.0% | 2.00 / 1.50 | 16.0 | 30.0 | 0.80 |" in report
    # Where the compaction's time went, beside the refresh it is compared with, once both were timed.
    assert "## Where the compaction's time goes" not in report
    for size in merge_on_read["sizes"]:
        size["compaction"].update(statements=[[18.0, "insert into s replace where dbt_multijoin_seq <= 3"]],
                                  executions=[[17.5, "OverwriteByExpression (9)"]])
        for days in size["shapes"].values():
            for measured in days:
                measured["wide_table_layout_refresh"].update(statements=[[21.0, "merge into w"]], executions=[[20.0, "ReplaceData (7)"]])
    report = partial_update.markdown(merge_on_read)
    assert "## Where the compaction's time goes, 16,000,000 keys per input" in report
    assert "| compaction | statement | 18.00 | 75% | `insert into s replace where dbt_multijoin_seq <= 3` |" in report
    assert "| compaction | Spark execution | 17.50 | 73% | `OverwriteByExpression (9)` |" in report
    assert "| default layout's refresh | statement | 21.00 | 70% | `merge into w` |" in report

    small = partial_update.markdown(_partial_update_results({50_000: 750}))
    assert "(at 50k)" in small and "not measured (one size)" in small
    assert "Every refresh stayed under the 50,000 changed keys" in small


def test_the_partial_update_report_gives_the_small_refreshes_ten_at_a_time():
    from benchmarks import partial_update

    results = {**_partial_update_results({2_000_000: 20_000}), "layout": "merge_on_read"}
    for days in results["sizes"][0]["shapes"].values():
        for measured in days:
            measured.update(reader_scan_seconds=2.0, table_scan_seconds=1.5, delta_share=0.01, compacted=False)

    def small(n: int) -> dict:
        checked = n % 10 == 0 or n == 12
        return {"n": n, "changed_keys": 2_000, "seconds": 6.0 + n / 10, "wide_table_layout_refresh_seconds": 5.0,
                "merge_seconds": 1.5, "state_seconds": None if n == 1 else 0.9, "rewrote": n % 4 == 0, "compacted": False,
                "delta_share": 0.001 * n,
                **({"equals_rebuild": True, "reader_scan_warm_seconds": 2.5, "table_scan_warm_seconds": 2.0,
                    "delta_files": 8 + n, "delete_files": 3} if checked else {})}

    assert "## Many small refreshes" not in partial_update.markdown(results)
    results["sizes"][0]["small_refreshes"] = [small(n) for n in range(1, 13)]
    report = partial_update.markdown(results)
    section = report.split("## Many small refreshes")[1]
    # Groups of ten, the last of what is left; medians over each group, the store after its last.
    assert "| 2,000,000 | 1-10 | 2,000 | 6.55 | 5.00 | 1.50 | 0.90 | 2 / 0 | 1.00% | 18 | 3 | 1.25 | yes |" in section
    assert "| 2,000,000 | 11-12 | 2,000 | 7.15 | 5.00 | 1.50 | 0.90 | 1 / 0 | 1.20% | 20 | 3 | 1.25 | yes |" in section
    assert "12 small refreshes of 2,000 changed keys each took 80 s in all (the first 6.1 s, the last 7.2 s), " \
           "the default layout's refreshes of the same days 60 s." in report


def test_the_partial_update_benchmark_fails_unless_the_refresh_took_the_partial_update_path():
    from benchmarks import partial_update

    partial = ["dbt_multijoin: wide: partial update: reading the changed rows of the inputs that changed, no join",
               "dbt_multijoin: wide: 12 changed keys"]
    recompute = ["dbt_multijoin: wide: recomputing the changed keys with the multi-join: no partial update, as ..."]
    assert partial_update.path_taken(partial) == "partial update"
    assert partial_update.path_taken(recompute) == "key recompute"
    assert partial_update.path_taken(["dbt_multijoin: wide: no recorded mark for t1: building the whole table"]) == "full build"
    partial_update.require_partial_update({"path": "partial update", "log": partial}, "day 3")
    with pytest.raises(RuntimeError, match="day 3: the refresh did not take the partial-update path") as failed:
        partial_update.require_partial_update({"path": "key recompute", "log": recompute}, "day 3")
    assert "recomputing the changed keys" in str(failed.value)


def test_the_readme_quotes_the_latest_committed_partial_update_runs():
    """The README's partial-update figures are those of the latest committed run per format of
    the default layout with 30 days of history at 16M keys per input (the one_input row of its
    results.md), and it links that run: a newer run changes the test's answer, and the README
    must follow."""
    readme = (REPO / "README.md").read_text()
    latest: dict[str, tuple[str, str]] = {}
    for path in (REPO / "benchmarks" / "results").glob("partial-update-*/results.json"):
        run = json.loads(path.read_text())
        if run.get("days") != 30 or run.get("layout", "table") != "table" or not any(s["rows"] == 16_000_000 for s in run["sizes"]):
            continue
        if run["table_format"] not in latest or run["date"] > latest[run["table_format"]][0]:
            latest[run["table_format"]] = (run["date"], path.parent.name)
    assert set(latest) == {"iceberg", "delta"}
    figures = {}
    for table_format, (_, name) in latest.items():
        assert f"(benchmarks/results/{name}/results.md)" in readme, name
        row = next(line for line in (REPO / "benchmarks" / "results" / name / "results.md").read_text().splitlines()
                   if line.startswith("| 16,000,000 | one_input |"))
        cells = [c.strip() for c in row.strip("|").split("|")]
        figures[table_format] = (round(float(cells[4])), round(float(cells[5])))
    refresh, rebuild = figures["iceberg"]
    assert f"takes {refresh} s against a {rebuild} s full rebuild on Iceberg" in readme
    refresh, rebuild = figures["delta"]
    assert f"and {refresh} s against {rebuild} s on Delta" in readme


def test_a_run_over_both_formats_runs_each_alike_and_reports_them_side_by_side(tmp_path):
    """--table-format delta,iceberg: each format's process gets the same arguments (row tracking,
    Delta's alone), and the report of them both gives every format, size and shape with the
    refresh against the rebuild and today's refresh, the reader at the threshold, the compaction,
    and the targets: the rebuild ÷ refresh of the 1% shape at 16M, the 16M ÷ 2M refresh of the
    shape that changes as many rows at every size."""
    from benchmarks import partial_update

    args = partial_update.parse(["--rows", "2m,16m", "--table-format", "delta,iceberg", "--layout", "merge_on_read",
                                 "--shapes", "one_input,same_rows", "--reps", "1", "--no-daily-refresh", "--row-tracking"])
    assert args.table_format == ["delta", "iceberg"]
    delta, iceberg = (partial_update.format_argv(args, f, tmp_path / f, tmp_path / "work" / f) for f in ("delta", "iceberg"))
    assert "--row-tracking" in delta and "--row-tracking" not in iceberg
    assert [a for a in delta if a != "--row-tracking"] == [a.replace("iceberg", "delta") for a in iceberg]
    again = partial_update.parse(delta)
    assert (again.rows, again.table_format, again.shapes, again.daily_refresh, again.same_rows) == (
        [2_000_000, 16_000_000], "delta", ["one_input", "same_rows"], False, 20_000)
    with pytest.raises(SystemExit):
        partial_update.parse(["--table-format", "delta,hudi"])
    with pytest.raises(SystemExit):
        partial_update.parse(["--rows", "30k", "--shapes", "same_rows", "--same-rows", "20k"])
    # The default --same-rows does not bind a run that has no same_rows day.
    assert partial_update.parse(["--rows", "300", "--shapes", "one_input"]).rows == [300]

    runs = {}
    for table_format, reader in (("delta", 1.2), ("iceberg", 1.3)):
        run = {**_partial_update_results({2_000_000: 30_000, 16_000_000: 240_000}), "layout": "merge_on_read",
               "table_format": table_format, "shapes": ["one_input", "same_rows"]}
        for size in run["sizes"]:
            one_input = size["shapes"]["one_input"][0]
            same = {**one_input, "refresh": {**one_input["refresh"], "seconds": 2.0 if size["rows"] == 2_000_000 else 2.2}}
            size["shapes"] = {"one_input": [one_input], "same_rows": [same]}
            for measured in (one_input, same):
                measured.update(reader_scan_seconds=2.0, table_scan_seconds=1.5, delta_share=0.005, compacted=False,
                                reader_scan_warm_seconds=1.5, table_scan_warm_seconds=1.25,
                                wide_table_layout_refresh={"seconds": 30.0, "path": "partial update"})
                for name in ("refresh", "rebuild"):
                    measured[name]["output_bytes"] = 2 << 20
            size["at_threshold"] = {**one_input, "delta_share": 0.027, "reader_scan_warm_seconds": 1.25 * reader,
                                    "table_scan_warm_seconds": 1.25}
            size["compaction_step"] = {"seconds": 15.0, "delta_share": 0.027, "delta_share_after": 0.013, "buckets": [0, 3]}
            size["compaction"] = {"seconds": 33.0, "delta_share": 0.013, "input_bytes": 100 << 20, "shuffle_write_bytes": 0,
                                  "output_bytes": 90 << 20, "reader_scan_seconds": 2.0, "after_scan_seconds": 1.5}
        runs[table_format] = run
    report = partial_update.formats_markdown({"machine": {"spark": "3.5.0"}, "k": 8, "layout": "merge_on_read",
                                              "shapes": ["one_input", "same_rows"], "formats": runs})
    # 16M, 1%: refresh 16 s, today's 30 s, rebuild 160 s; read / shuffled / written.
    assert "| iceberg | 16M | one_input | 240,000 | 16.0 | 30.0 | 160.0 | 10.00 | 3.0 / 1.0 / 2.0 | 3.0 / 1.0 / 2.0 | 1.20 | 0.50% |" in report
    assert "| delta | 2M | same_rows | 30,000 | 2.0 | 30.0 | 20.0 | 10.00 |" in report
    assert "| delta | 16M | 2.70% / 1.20 | 16.0 | 15.0 (2.7% to 1.3%) | 0.50 | 33.0 | 1.10 | 100 / 0.00 / 90.0 |" in report
    assert "| delta | full rebuild ÷ refresh at 16M >= 10 | one_input | 10.00 met |" in report
    assert "| iceberg | refresh at 16M ÷ refresh at 2M <= 1.2 | same_rows | 1.10 met |" in report
    assert "refresh at 16M ÷ refresh at 2M <= 1.2 | one_input" not in report
    assert "| delta | a reader's warm full scan, view ÷ the rebuilt table, delta at the threshold <= 1.25 | at 16M | 1.20 met (delta rows 2.7% of the base) |" in report
    assert "| iceberg | a reader's warm full scan, view ÷ the rebuilt table, delta at the threshold <= 1.25 | at 2M | 1.30 MISSED" in report
    assert "| iceberg | compaction ÷ the default layout's refresh at 16M <= 1 | a run's step | 0.50 met |" in report
    assert "[delta/results.md](delta/results.md)" in report and "rows equalled the full rebuild's: yes" in report
    assert "## Many small refreshes" not in report
    # Small refreshes (--small-refreshes) of one format: their medians beside today's refresh.
    runs["iceberg"]["sizes"][0]["small_refreshes"] = [
        {"n": n, "changed_keys": 2_000, "seconds": 4.0 + n / 10, "wide_table_layout_refresh_seconds": 5.0, "rewrote": n == 2,
         "compacted": False, "delta_share": 0.001 * n, "reader_scan_warm_seconds": 2.4, "table_scan_warm_seconds": 2.0}
        for n in (1, 2, 3)]
    report = partial_update.formats_markdown({"machine": {"spark": "3.5.0"}, "k": 8, "layout": "merge_on_read",
                                              "shapes": ["one_input", "same_rows"], "formats": runs})
    assert "| iceberg | 2M | 3 | 2,000 | 4.20 | 5.00 | 1 / 0 | 0.30% | 1.20 |" in report.split("## Many small refreshes")[1]
    # Each format's own report has the threshold day beside the change days.
    own = partial_update.markdown(runs["delta"])
    assert "| 16,000,000 | 160,000 | 240,000 | 2.70% | no | 16.0 | 30.0 | 160.0 | 1.50 / 1.25 | 1.20 |" in own
    assert "| refresh at 16M ÷ refresh at 2M <= 1.2 | same_rows | 1.10 met |" in own
