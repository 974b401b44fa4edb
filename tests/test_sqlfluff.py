"""sqlfluff (sparksql dialect) is clean on the integration_tests models and on the SQL the
package's macros render.

- models and singular tests: the jinja templater with dbt's builtins, no database
  (.sqlfluff at the root, integration_tests/.sqlfluff for the package namespace stand-ins);
- the macros' SQL: what dbt compiled for every model and generic test of a real session build
  (multi_join needs the inputs' column lists, so only a database can render it). The files as
  dbt writes them lack a final newline and start with the blank lines of {{ config() }}: the
  two layout rules about file ends are off for them.
"""

from __future__ import annotations

import shutil

import pytest
from sqlfluff.core import FluffConfig, Linter

from testkit.dbt import INTEGRATION_TESTS, REPO, private_jar, session_build


def lint(paths: list[str], **overrides) -> list[str]:
    config = FluffConfig.from_path(str(REPO), overrides=overrides or None)
    result = Linter(config=config).lint_paths(tuple(paths))
    linted = [file for directory in result.paths for file in directory.files]
    assert linted, paths
    return [
        f"{file.path}:{violation.line_no}: {violation.rule_code()} {violation.desc()}"
        for file in linted
        for violation in file.violations
    ]


def test_integration_models_are_clean():
    paths = [str(INTEGRATION_TESTS / "models"), str(INTEGRATION_TESTS / "tests")]
    violations = lint(paths)
    assert violations == [], "\n".join(violations)


@pytest.mark.slow
def test_rendered_sql_is_clean(tmp_path_factory):
    project, build = session_build(tmp_path_factory, private_jar(tmp_path_factory.mktemp("jar")))
    assert build.returncode == 0, build.describe()
    # The models (they hold multi_join's SQL) and the package's generic tests; what dbt writes
    # itself under a properties file's name is not ours to lint: its own generic tests
    # (accepted_values), and its unit tests (the fixtures and the comparison around the model).
    compiled = project.compiled()
    ours = tmp_path_factory.mktemp("rendered-sql")
    files = [
        path
        for path in sorted(compiled.rglob("*.sql"))
        if not any(part.endswith(".yml") for part in path.relative_to(compiled).parts)
        or (path.parent.name.endswith(".yml") and path.name.startswith("dbt_multijoin_"))
    ]
    for path in files:
        copy = ours / path.relative_to(compiled)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy)
    # Every strategy and every generic test of the package is in there.
    names = " ".join(path.name for path in files)
    for expected in ("mj_wide_multiway", "mj_wide_chain", "mj_wide_balanced", "mj_comp_multiway",
                     "multijoin_equal", "multijoin_row_co", "multijoin_keys_p", "multijoin_key_un", "multijoin_operat"):
        assert expected in names, (expected, names)
    # The repo's .sqlfluff applies to files under the repo; these live in a temporary directory.
    shutil.copyfile(REPO / ".sqlfluff", ours / ".sqlfluff")
    violations = lint(
        [str(ours)],
        templater="raw",
        exclude_rules="structure.column_order,layout.end_of_file,layout.start_of_file",
    )
    assert violations == [], "\n".join(violations)
