"""integration_tests/ with real dbt commands, on a SparkSession inside dbt (session) and on a
local Spark Thrift Server (thrift) that these tests start with the jar and stop by pid.

- the default build passes on both targets with the extension loaded, and every multiway
  model ran the MultiJoin operator (the materialization asserts it from EXPLAIN, records it in
  a table property, a generic test reads it; on thrift we also EXPLAIN the compiled SQL here);
- a model that SETs confs, followed by a model that reads them, sees the defaults: after a
  success, after failures while planning and, with the package's restore hook, after a
  run-time failure (on thrift, where each model has its own session, even without it);
- without the extension: a clear error naming the way to load it on that target, or, with
  allow_vanilla_fallback, the same rows and a warning;
- bad configs fail naming the model and the problem, and create nothing; so does an enforced
  contract that does not hold (dbt's contract table);
- extension_version() gives the loaded extension's version, and none without it;
- dbt's own tools: unit tests of every join type and strategy pass in the session build (dbt-spark's
  thrift method cannot run unit tests), and one expecting wrong rows fails with dbt's diff;
  `dbt build --empty` builds every multijoin model with no rows and the full build's columns, on
  both targets (the session one at threads: 4, with the package's dbt plugin loaded as it is
  from a wheel); `dbt show` previews a model.

The session target runs with ANSI mode off (dbt-spark pins it), the thrift target with it on
(testkit.dbt.THRIFT_CONFS). Run under .venv (Spark 3.5) and .venv-spark4 (Spark 4.x).
"""

from __future__ import annotations

import json
import shutil

import pytest

from testkit.dbt import REPO, SCHEMA, DbtProject, make_project, private_jar, session_build, thrift_server
from dbt_multijoin import EXTENSION_CLASS
from testkit.macros import macro_package
from testkit.thrift_client import hive_query

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def jar(tmp_path_factory):
    return private_jar(tmp_path_factory.mktemp("jar"))


@pytest.fixture(scope="module")
def session(tmp_path_factory, jar):
    return session_build(tmp_path_factory, jar)


@pytest.fixture(scope="module")
def thrift(tmp_path_factory, jar):
    """The default build on a Thrift Server, but the models wrong on purpose: their generic tests'
    SQL is the same on either connection method, and the session build shows them failing. And
    but the unit tests: dbt-spark's thrift method cannot run them (dbt-labs/dbt-adapters#481)."""
    root = tmp_path_factory.mktemp("dbt-thrift")
    with thrift_server(root / "server", jar) as server:
        project = make_project(root, jar=jar, thrift_port=server.port)
        build = project.dbt("build", "--target", "thrift", "--selector", "default_build_but_violations", "--exclude-resource-type", "unit_test")
        yield project, build, server


def assert_build_passed(project, build):
    assert build.returncode == 0, build.describe()
    assert build.results and all(r["status"] in ("success", "pass") for r in build.results), build.describe()
    multiway = [model for model in project.multiway_models() if model in build.model_order()]
    assert len(multiway) >= 5, multiway
    for model in multiway:
        # The materialization EXPLAINs the model under its confs and fails a multiway model whose
        # plan has no MultiJoin node; it logs the operator it found ...
        assert f"dbt_multijoin: {model}: strategy multiway, physical join operator: MultiJoin" in build.output
        # ... and records it on the table, which this generic test checked.
        used = [t for t in build.tests() if t["unique_id"].startswith(f"test.dbt_multijoin_integration_tests.dbt_multijoin_multijoin_operator_used_{model}_")]
        assert [t["status"] for t in used] == ["pass"], (model, used)
    for strategy in ("chain", "balanced"):
        assert f"strategy {strategy}, physical join operator: vanilla" in build.output
    # extension_version() gave the version the session's extension reports itself.
    assert [t["status"] for t in build.tests() if t["unique_id"].endswith(".ext_version_is_the_loaded_one")] == ["pass"]


def unit_tests(run) -> dict[str, str]:
    """The status of each unit test the run ran, by name."""
    return {r["unique_id"].split(".")[-1]: r["status"] for r in run.results if r["unique_id"].startswith("unit_test.")}


# The unit tests of integration_tests/models/unit_tests/ that the default build runs: every join
# type and strategy, a composite key with columns= and rename=, an input given by source().
UNIT_TESTS = (
    "ut_full_multiway",
    "ut_full_chain",
    "ut_full_balanced",
    "ut_left_multiway",
    "ut_left_chain_source",
    "ut_inner_multiway",
    "ut_inner_chain",
    "ut_inner_balanced",
    "ut_composite_multiway",
)


# The generic tests of integration_tests/models/violations/, each on a model that is wrong on
# purpose. Each passes only when it reports exactly the failures its error_if / warn_if name
# (dbt records no failure count for a passing test, so the count is asserted there):
VIOLATIONS = (
    "violation_key_unique_repeated_key",  # key3, 3 occurrences, in 1 row
    "violation_keys_preserved_key_lost",  # key3 of inputs 2, 3 and 4: 3 rows
    "violation_keys_preserved_null_key_lost",  # the 4 input rows whose composite key has a NULL
    "violation_row_count_too_many",  # 5 rows for 3
    "violation_row_count_too_few",  # 2 rows for 3
    "violation_equal_rowsets_both_ways",  # 3 rows only in the model, 1 only in compare_model
    "violation_equal_rowsets_duplicate_row",  # the second key1 row, only in the model
    "violation_equal_rowsets_column_mismatch",  # 1 row naming the mismatch
    "violation_operator_used_chain_strategy",  # recorded 'vanilla', 1 row
    "violation_operator_used_plain_table",  # nothing recorded, 1 row
)


def assert_violations_found(build):
    """Every generic test of the package failed where it must: each violation test ran, found
    exactly its expected failures, and so passed."""
    found = {t["unique_id"].split(".")[2]: t["status"] for t in build.tests()}
    assert {name: found.get(name) for name in VIOLATIONS} == dict.fromkeys(VIOLATIONS, "pass"), build.describe()


def test_build_session(session):
    project, build = session
    assert_build_passed(project, build)
    assert_violations_found(build)
    # The unit tests of models/unit_tests/ ran, each over its fixtures, and passed ...
    assert unit_tests(build) == dict.fromkeys(UNIT_TESTS, "pass"), build.describe()
    # ... each rendering its model's strategy (dbt gives a unit test none of the model's config:
    # multi_join reads it from the model's config() call), over the fixture CTEs.
    compiled = project.compiled() / "models" / "unit_tests" / "schema.yml" / "models" / "unit_tests"
    for test, hinted, balanced in (("ut_full_multiway", True, False), ("ut_full_chain", False, False), ("ut_full_balanced", False, True)):
        sql = (compiled / f"{test}.sql").read_text()
        assert ("/*+ MULTI_JOIN */" in sql) == hinted and ("j1_2 as (" in sql) == balanced, (test, sql)
        assert "from __dbt__cte__worked_r1 as t1" in sql, (test, sql)


def test_build_thrift(thrift):
    project, build, server = thrift
    assert_build_passed(project, build)
    # Independent of the package's own plan check: EXPLAIN the compiled SQL of every multiway
    # model on the server, and of a chain model (no operator there).
    for model in project.multiway_models():
        if model not in build.model_order():
            continue
        sql = next(project.compiled().rglob(f"{model}.sql")).read_text()
        plan = "\n".join(row[0] for row in hive_query(server.port, "explain " + sql))
        assert "MultiJoin" in plan, (model, plan)
    # dbt-spark's table options went through the materialization: partitioning, a property of
    # the model next to the package's, the model's description as the table comment.
    described = dict((row[0].strip(), (row[1] or "").strip()) for row in hive_query(server.port, f"describe table extended {SCHEMA}.mj_dup_multiway"))
    assert described.get("Comment", "").startswith("multiway strategy, partitioned by country"), described
    assert "# Partition Information" in described, described
    assert "13 rows" in described.get("Statistics", ""), described  # the post-hook's ANALYZE
    properties = dict(hive_query(server.port, f"show tblproperties {SCHEMA}.mj_dup_multiway"))
    assert properties.get("owner_team") == "analytics" and properties.get("dbt_multijoin.operator") == "MultiJoin", properties
    chain_sql = next(project.compiled().rglob("mj_dup_chain.sql")).read_text()
    chain_plan = "\n".join(row[0] for row in hive_query(server.port, "explain " + chain_sql))
    assert "MultiJoin" not in chain_plan and "SortMergeJoin" in chain_plan, chain_plan
    # The whole thrift build ran with ANSI mode on: dbt's own session said so to a conf probe.
    ansi = hive_query(server.port, f"select conf_value from {SCHEMA}.conf_leak_0_baseline where conf_key = 'spark.sql.ansi.enabled'")
    assert ansi == [("true",)], ansi


def assert_confs_restored_after_failures(run, method):
    """The conf_failure selector: models 1, 2, 4 (and 7 on the session method) SET confs and
    fail; 3, 5, 6 and 8 probe."""
    assert run.returncode == 1, run.describe()
    assert run.model_order() == [
        "conf_fail_0_baseline",
        "conf_fail_1_plan_error",
        "conf_fail_2_fallback_refused",
        "conf_fail_3_probe",
        "conf_fail_4_runtime_error",
        "conf_fail_5_probe_unrestored",
        "conf_fail_6_probe_restored",
        "conf_fail_7_pinned_by_profile",
        "conf_fail_8_probe",
    ], run.describe()
    for model in ("conf_fail_0_baseline", "conf_fail_3_probe", "conf_fail_5_probe_unrestored", "conf_fail_6_probe_restored", "conf_fail_8_probe"):
        assert run.status(model) == "success", run.describe()
    # Fails only under its own confs (spark.sql.caseSensitive=true): planned after the SETs.
    message = run.message("conf_fail_1_plan_error")
    assert run.status("conf_fail_1_plan_error") == "error"
    assert "model 'conf_fail_1_plan_error'" in message and "DEVICE_ID" in message, message
    assert "spark.sql.caseSensitive=true" in message, message
    # A hinted query the operator refuses: with spark.multijoin.failOnFallback=true (set by the
    # multiway strategy) planning fails naming the reason, instead of running vanilla joins.
    message = run.message("conf_fail_2_fallback_refused")
    assert run.status("conf_fail_2_fallback_refused") == "error"
    assert "model 'conf_fail_2_fallback_refused'" in message and "MULTI_JOIN" in message, message
    message = run.message("conf_fail_4_runtime_error")
    assert run.status("conf_fail_4_runtime_error") == "error"
    assert "deliberate run-time failure" in message, message
    # dbt-spark pins spark.sql.ansi.enabled=false in server_side_parameters, which the session
    # method re-applies before every statement; a Thrift Server ignores that plain key.
    if method == "session":
        message = run.message("conf_fail_7_pinned_by_profile")
        assert run.status("conf_fail_7_pinned_by_profile") == "error", run.describe()
        assert "spark_conf 'spark.sql.ansi.enabled' = 'true' did not take effect" in message, message
    else:
        assert run.status("conf_fail_7_pinned_by_profile") == "success", run.describe()
    # Probes 3, 6 and 8 equal the baseline on both methods; 5 equals it on thrift, and on the
    # session method shows the run-time failure's confs (a singular test asserts which).
    tests = {t["unique_id"]: t["status"] for t in run.tests()}
    assert tests and set(tests.values()) == {"pass"}, run.describe()
    for probe in ("conf_fail_3_probe", "conf_fail_6_probe_restored", "conf_fail_8_probe"):
        assert any(f"_{probe}_ref_conf_fail_0_baseline_" in t for t in tests), (probe, tests)
    if method == "session":
        assert any(t.endswith(".conf_fail_5_session_sees_the_leak") for t in tests), tests
        assert "dbt_multijoin: restored confs left changed by a failed model" in run.output
    else:
        assert any("_conf_fail_5_probe_unrestored_ref_conf_fail_0_baseline_" in t for t in tests), tests


def test_confs_restored_after_failures_session(session):
    project, build = session
    assert build.returncode == 0, build.describe()  # the conf_failure models read its seeds
    run = project.dbt("build", "--target", "session", "--selector", "conf_failure", "--threads", "1")
    assert_confs_restored_after_failures(run, "session")


def test_confs_restored_after_failures_thrift(thrift):
    project, build, server = thrift
    assert build.returncode == 0, build.describe()
    run = project.dbt("build", "--target", "thrift", "--selector", "conf_failure", "--threads", "1")
    assert_confs_restored_after_failures(run, "thrift")


BAD_CONFIGS = {
    "bad_missing_key": "key column 'customer_id' not found in input 'worked_r1'",
    "bad_single_input": "needs at least two inputs",
    "bad_unknown_strategy": "unknown strategy 'zigzag'",
    "bad_left_balanced": "strategy 'balanced' does not apply to join_type 'left'",
    "bad_conf_value": "spark_conf value for 'spark.sql.shuffle.partitions' is not allowed",
    "bad_conf_key": "is not a valid conf key",
    "bad_rename": "is not a plain identifier",
    "bad_static_conf": "spark_conf key 'spark.sql.extensions' is static",
}


def test_bad_config_fails_before_any_ddl(thrift):
    project, build, server = thrift
    assert build.returncode == 0, build.describe()
    run = project.dbt("run", "--target", "thrift", "--selector", "bad_config")
    assert run.returncode == 1, run.describe()
    for model, problem in BAD_CONFIGS.items():
        assert run.status(model) == "error", run.describe()
        message = run.message(model)
        assert f"dbt_multijoin: model '{model}': " in message and problem in message, (model, message)
    # An enforced contract is checked on a multijoin model: dbt's own table of the mismatch.
    assert run.status("bad_contract_type") == "error", run.describe()
    message = run.message("bad_contract_type")
    assert "This model has an enforced contract that failed" in message, message
    assert any(line.split()[:2] == ["|", "device_id"] and "data type mismatch" in line for line in message.splitlines()), message
    tables = {row[1] for row in hive_query(server.port, f"show tables in {SCHEMA}")}
    assert not tables & {*BAD_CONFIGS, "bad_contract_type"}, tables
    assert "worked_r1" in tables  # the injection attempts named it


def test_show_thrift(thrift):
    """`dbt show` of a multijoin model: its compiled query, previewed."""
    project, build, server = thrift
    assert build.returncode == 0, build.describe()
    run = project.dbt("show", "--target", "thrift", "--select", "mj_worked_multiway")
    assert run.returncode == 0, run.output[-3000:]
    preview = run.output[run.output.index("Previewing node 'mj_worked_multiway'"):]
    assert all(cell in preview for cell in ("key1", "r1-key2", "r2-key3", "r3-key3", "r4-key3")), preview


def test_build_thrift_again_on_the_same_server(thrift):
    """The server was started with --jars alone and has seen every earlier test's client
    sessions open and close: the widest multiway model, built again with its tests, still runs
    through the operator, with the materialization's checks passing. (One model: every model of
    the build opens its own session there already; what is checked here is a server that has
    served them all.)"""
    project, build, server = thrift
    assert build.returncode == 0, build.describe()
    again = project.dbt("build", "--target", "thrift", "--selector", "multiway_again")
    assert again.returncode == 0 and again.tests(), again.describe()
    assert all(r["status"] in ("success", "pass") for r in again.results), again.describe()
    assert again.model_order() == ["mj_wide_multiway"], again.describe()
    assert "dbt_multijoin: mj_wide_multiway: strategy multiway, physical join operator: MultiJoin" in again.output


def assert_missing_extension(run, method, hints):
    assert run.returncode == 1, run.describe()
    message = run.message("ext_multiway_strict")
    assert run.status("ext_multiway_strict") == "error", run.describe()
    assert f"model 'ext_multiway_strict': the MultiJoin extension is not loaded on target '{method}_vanilla'" in message
    for hint in hints:
        assert hint in message, (hint, message)
    assert run.status("ext_multiway_fallback") == "success", run.describe()
    assert "model 'ext_multiway_fallback': the MultiJoin extension is not loaded" in run.output
    assert "allow_vanilla_fallback=true: running the same SQL through Spark's vanilla joins" in run.output
    # The fallback's rows equal the hand-written answer, and its plan had no MultiJoin node.
    tests = [t for t in run.tests() if "ext_multiway_fallback" in t["unique_id"]]
    assert len(tests) == 2 and all(t["status"] == "pass" for t in tests), run.describe()
    # extension_version() is none there, and does not fail the model that asks.
    assert run.status("ext_version_missing") == "success", run.describe()
    version_tests = [t["status"] for t in run.tests() if "ext_version_missing" in t["unique_id"]]
    assert version_tests == ["pass"], run.describe()


def test_missing_extension_session(tmp_path):
    project = make_project(tmp_path, jar=None)
    run = project.dbt("build", "--target", "session_vanilla", "--selector", "extension_check")
    assert_missing_extension(
        run,
        "session",
        ["server_side_parameters", "spark.jars", f"spark.sql.extensions: {EXTENSION_CLASS}"],
    )


def test_missing_extension_thrift(tmp_path):
    with thrift_server(tmp_path / "server", jar=None) as server:
        project = make_project(tmp_path, thrift_vanilla_port=server.port)
        run = project.dbt("build", "--target", "thrift_vanilla", "--selector", "extension_check")
    assert_missing_extension(
        run,
        "thrift",
        ["--jars", f"--conf spark.sql.extensions={EXTENSION_CLASS}", "dbt-multijoin thrift start"],
    )


def assert_empty_build(run, manifest, reference_schema, wrong_unit_test):
    """A `dbt build --empty` into a schema of its own (integration_tests/macros/
    empty_build_check.sql compared it with `reference_schema` at the end): every model and test
    of the build passed, each multijoin model has no rows and the full build's columns and types,
    and each multiway model's plan was proven over the empty inputs. `wrong_unit_test`: the unit
    test that expects wrong rows ran and failed with dbt's diff, so dbt skipped its model and the
    model's tests."""
    wrong_model = "model.dbt_multijoin_integration_tests.viol_chain_strategy"
    results = {r["unique_id"]: r["status"] for r in run.results}
    skipped = {wrong_model, *(node for node in results if manifest.get(node, {}).get("attached_node") == wrong_model)} if wrong_unit_test else set()
    assert {node for node, status in results.items() if status == "skipped"} == skipped, run.describe()
    built = [node for node in results if node.startswith("model.") and node not in skipped]
    assert built and {results[node] for node in built} == {"success"}, run.describe()
    tests = [node for node in results if node.startswith("test.") and node not in skipped]
    assert tests and {results[node] for node in tests} == {"pass"}, run.describe()
    multijoin = [manifest[node]["name"] for node in built if manifest[node]["config"].get("materialized") == "multijoin"]
    assert len(multijoin) >= 15, multijoin
    for model in multijoin:
        assert f"it_empty_build: {model}: 0 rows, the columns of {reference_schema}.{model}: " in run.output, (model, run.output[-3000:])
        if manifest[f"model.dbt_multijoin_integration_tests.{model}"]["config"].get("strategy") == "multiway":
            assert f"dbt_multijoin: {model}: strategy multiway, physical join operator: MultiJoin (--empty: planned over the empty inputs)" in run.output, model
    if wrong_unit_test:
        assert unit_tests(run) == {"ut_wrong_on_purpose": "fail"}, run.describe()
        assert run.returncode == 1, run.describe()
        message = run.message("ut_wrong_on_purpose")
        assert "actual differs from expected" in message and "k3" in message and "c3" in message, message
    else:
        assert unit_tests(run) == {} and run.returncode == 0, run.describe()


def empty_build(project, target, tmp_path, selector, *extra, **env):
    """`selector` built with --empty, into the schema <SCHEMA>_empty, checked against the
    full build's tables in SCHEMA; returns the run and its manifest's nodes. Run in a copy of the
    project, so that the full build's compiled SQL (which tests/test_sqlfluff.py lints) stays."""
    root = tmp_path / "integration_tests"
    shutil.copytree(project.root, root, symlinks=True, ignore=shutil.ignore_patterns("logs"))
    empty = DbtProject(root, dict(project.env, DBT_MULTIJOIN_SCHEMA=f"{SCHEMA}_empty", DBT_LOG_PATH=str(root / "logs"), **env))
    run = empty.dbt("build", "--empty", "--target", target, "--selector", selector,
                    "--vars", f"{{empty_build_reference_schema: {SCHEMA}}}", *extra)
    return run, json.loads((root / "target" / "manifest.json").read_text())["nodes"]


def test_build_empty_session(session, tmp_path):
    """On the session target at threads: 4, with the package importable as a wheel installs it,
    so that dbt loads its plugin: each model runs in a Spark session of its own, and the models
    that set confs run side by side. The unit test that expects wrong rows fails here."""
    project, build = session
    assert build.returncode == 0, build.describe()
    pythonpath = ":".join(filter(None, [str(REPO), project.env.get("PYTHONPATH")]))
    run, manifest = empty_build(project, "session", tmp_path, "empty_build_session", "--threads", "4", PYTHONPATH=pythonpath)
    assert_empty_build(run, manifest, SCHEMA, wrong_unit_test=True)


def test_build_empty_thrift(thrift, tmp_path):
    project, build, server = thrift
    assert build.returncode == 0, build.describe()
    run, manifest = empty_build(project, "thrift", tmp_path, "empty_build")
    assert_empty_build(run, manifest, SCHEMA, wrong_unit_test=False)
    rows = hive_query(server.port, f"select count(*) from {SCHEMA}_empty.mj_wide_multiway")
    assert rows == [(0,)], rows


def test_macros_name_the_python_packages_extension_class():
    """Macros cannot import Python: the one macro that names the extension class is rendered here
    (plain Jinja, testkit/macros.py) and must give dbt_multijoin.EXTENSION_CLASS."""
    package = macro_package(("internal/_extension.sql",))
    assert package._mj_extension_class() == EXTENSION_CLASS
