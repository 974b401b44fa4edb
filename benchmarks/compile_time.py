"""What `dbt compile` of a project full of changed_keys models costs, with this checkout's package
against the package at another git revision (--against), over the same inputs and models in one
Spark session (the session method, in-process, as the pipeline tests run dbt).

The project: --models changed_keys models, each a multi_join over three Delta or Iceberg inputs
(two tracked by a column, one by its change feed), built once with this checkout's package so
that each compile finds the tables, their marks and their change sources. Then, per repetition,
`dbt compile` with each package in turn (alternating, so drift hits both alike), each with a
fresh target directory and a full parse. Reports the median seconds of each, and the statements
each compile ran that only read metadata does not cover (Spark's record of executed statements,
testkit/executions.py): queries, CALLs, CREATEs.

    .venv/bin/python -m benchmarks.compile_time --against 8ea8fa0 --models 20 --reps 3
"""

from __future__ import annotations

import argparse
import datetime
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.report import _table, write_results
from benchmarks.run import _machine, log

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def model_sql(i: int) -> str:
    return (
        "{{ config(materialized='multijoin', incremental_strategy='changed_keys') }}\n"
        f"{{{{ dbt_multijoin.multi_join([source('inputs', 'a{i}'), source('inputs', 'b{i}'), source('inputs', 'c{i}')], key='k',\n"
        f"    columns={{'a{i}': ['v'], 'b{i}': ['v'], 'c{i}': ['v']}},\n"
        f"    changed_since={{'a{i}': 'updated_at', 'b{i}': 'change_feed', 'c{i}': 'updated_at'}}) }}}}\n"
    )


def package_at(revision: str, directory: Path) -> Path:
    """A checkout of the repository at `revision` (git worktree), for its macros."""
    shutil.rmtree(directory, ignore_errors=True)
    subprocess.run(["git", "worktree", "prune"], cwd=REPO, check=True)
    subprocess.run(["git", "worktree", "add", "--detach", str(directory), revision], cwd=REPO, check=True,
                   capture_output=True)
    return directory


def use_package(project, package: Path) -> None:
    (project.root / "packages.yml").write_text(f'packages:\n  - local: "{package}"\n')
    shutil.rmtree(project.root / "dbt_packages", ignore_errors=True)
    deps = project.dbt("deps")
    assert deps.success, deps.describe()


def parse(argv):
    p = argparse.ArgumentParser(prog="python -m benchmarks.compile_time", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--against", required=True, help="the git revision whose package is compared")
    p.add_argument("--models", type=int, default=20)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--table-format", choices=["delta", "iceberg"], default="delta")
    p.add_argument("--name", help="results go to benchmarks/results/NAME (default compile-time-<format>-spark<version>)")
    p.add_argument("--work-dir", type=Path, default=HERE / "work" / "compile-time")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    import pyspark

    from testkit.dbt import PipelineProject
    from testkit.executions import METADATA_ROOT, last_execution_id, roots_since
    from testkit.formats import build_format_session

    args = parse(argv)
    work = args.work_dir.resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    spark = build_format_session(args.table_format, work / "spark", "dbt-multijoin-compile-time")
    machine = _machine(spark)
    confs = {key: spark.conf.get(key, None) for key in ("spark.driver.memory", "spark.sql.shuffle.partitions", "spark.master")}
    try:
        project = PipelineProject.create(spark, work, args.table_format)
        names = []
        for i in range(args.models):
            for name in (f"a{i}", f"b{i}", f"c{i}"):
                feed = " tblproperties ('delta.enableChangeDataFeed' = 'true')" if name.startswith("b") and args.table_format == "delta" else ""
                spark.sql(f"create table {project.table(name)} (k int, v int, updated_at bigint) using {args.table_format}{feed}")
                spark.sql(f"insert into {project.table(name)} values (1, 1, 1000), (2, 2, 1000)")
                names.append(name)
            project.model(f"wide{i}", model_sql(i))
        project.sources(*names)
        built = project.dbt("run")
        assert built.success, built.describe()
        packages = {"this checkout": REPO, args.against: package_at(args.against, work / "against")}
        seconds = {label: [] for label in packages}
        writes = {label: [] for label in packages}
        for rep in range(args.reps):
            for label, package in packages.items():
                use_package(project, package)
                shutil.rmtree(project.root / "target", ignore_errors=True)
                before = last_execution_id(spark)
                started = time.perf_counter()
                compiled = project.dbt("compile")  # no target directory: a full parse
                seconds[label].append(time.perf_counter() - started)
                assert compiled.success, compiled.describe()
                writes[label] += [root for root in roots_since(spark, before) if not METADATA_ROOT.match(root)]
                log(f"rep {rep + 1}, {label}: dbt compile {seconds[label][-1]:.1f} s")
    finally:
        spark.stop()
        subprocess.run(["git", "worktree", "remove", "--force", str(work / "against")], cwd=REPO, capture_output=True)
    results = {"command": "python -m benchmarks.compile_time " + shlex.join(sys.argv[1:] if argv is None else argv),
               "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "machine": machine, "confs": confs, "reps": args.reps, "warmup": 0, "models": args.models, "table_format": args.table_format,
               "against": args.against, "seconds": seconds, "writes": writes}
    name = args.name or f"compile-time-{args.table_format}-spark{pyspark.__version__}"
    write_results(HERE / "results" / name, results, markdown(results))
    return results


def markdown(results: dict) -> str:
    rows = [[label, f"{statistics.median(values):.1f}", ", ".join(f"{v:.1f}" for v in values),
             str(len(results["writes"][label]))] for label, values in results["seconds"].items()]
    kinds = {label: sorted(set(root.split(" [")[0][:60] for root in roots)) for label, roots in results["writes"].items()}
    lines = [f"# `dbt compile` of {results['models']} changed_keys models ({results['table_format']}, Spark {results['machine']['spark']})", "",
             f"This checkout ({results['machine']['commit']}) against the package at `{results['against']}`, alternating, a full "
             "parse each. The last column: the statements compiling ran beyond metadata reads (DESCRIBE, SHOW), summed over "
             "the repetitions, from Spark's record of executed statements.", ""]
    lines += _table(["package", "median s", "each s", "statements beyond metadata reads"], rows)
    lines += [f"- {label}: {', '.join(f'`{k}`' for k in found) or 'none'}" for label, found in kinds.items()]
    lines += ["", f"Command: `{results['command']}` ({results['date']})", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
