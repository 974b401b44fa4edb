"""scripts/sql_time.py: a statement's time runs to the next statement of its node (a query's rows
are fetched after dbt logs its status), and statements of every model group by kind."""

from __future__ import annotations

import subprocess
import sys

from testkit import REPO

sys.path.insert(0, str(REPO / "scripts"))
from sql_time import statement_kind, statement_times  # noqa: E402

LOG = """\
05:29:10.000000 [debug] [Thread-3 (]: Began running node model.p.wide
05:29:10.100000 [debug] [Thread-3 (]: On model.p.wide: /* {"app": "dbt"} */
select 0 as input_index, mark from (select max(u) as mark from s_1.a version as of 3) as high
05:29:10.124000 [debug] [Thread-3 (]: SQL status: OK in 0.024 seconds
05:29:11.900000 [debug] [Thread-3 (]: On model.p.wide: /* {"app": "dbt"} */
cache table s_1__wide__dbt_mj_changes_12 as
select 1
05:29:12.400000 [debug] [Thread-3 (]: SQL status: OK in 0.500 seconds
05:29:12.500000 [debug] [Thread-3 (]: On model.p.wide: /* {"app": "dbt"} */
alter table s_1.wide set tblproperties ('a' = 'b')
05:29:12.700000 [debug] [Thread-3 (]: SQL status: OK in 0.200 seconds
05:29:13.000000 [debug] [Thread-3 (]: Finished running node model.p.wide
05:30:00.000000 [debug] [Thread-3 (]: Began running node model.p.other
05:30:00.100000 [debug] [Thread-3 (]: On model.p.other: /* {"app": "dbt"} */
cache table s_2__other__dbt_mj_changes_0 as select 2
05:30:00.300000 [debug] [Thread-3 (]: Finished running node model.p.other
"""


def test_a_statement_runs_to_the_next_one_and_kinds_name_tables_by_what_they_are():
    times = statement_times(LOG)
    assert [kind for kind, _ in times] == [
        "select 0 as input_index,", "cache table *__dbt_mj_changes as", "alter table <table> set", "cache table *__dbt_mj_changes as"]
    # The first query's 0.024 s status leaves out its fetch: its time is 1.8 s, to the next statement.
    assert [round(spent, 3) for _, spent in times] == [1.8, 0.6, 0.5, 0.2]


def test_kinds_ignore_comments_case_and_spacing():
    assert statement_kind("/* x */ DROP   VIEW if exists `s__m__dbt_mj_changes_3`") == "drop view if exists"
    assert statement_kind("insert into s.m__dbt_mj_changed_keys by name") == "insert into *__dbt_mj_changed_keys by"


def test_the_script_sums_the_logs_under_a_directory_skipping_pytest_current_links(tmp_path):
    run = tmp_path / "run0" / "project" / "logs"
    run.mkdir(parents=True)
    (run / "dbt.log").write_text(LOG)
    (tmp_path / "runcurrent").symlink_to(tmp_path / "run0")
    result = subprocess.run([sys.executable, str(REPO / "scripts" / "sql_time.py"), str(tmp_path)],
                            capture_output=True, text=True, check=True)
    lines = result.stdout.splitlines()
    assert lines[0] == "1 dbt logs, 4 statements, 3 s"
    assert lines[1].split() == ["1.8", "s", "58.1%", "1", "select", "0", "as", "input_index,"]
    assert lines[2].split()[:4] == ["0.8", "s", "25.8%", "2"]
