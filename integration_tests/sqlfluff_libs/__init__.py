"""Stand-ins for the names dbt provides at run time, so sqlfluff's jinja templater can render
the integration_tests models without a database.

Only the shape matters here: the SQL that `dbt_multijoin.multi_join` really renders needs the
column lists of the inputs and is linted from dbt's compiled output instead
(tests/test_sqlfluff.py).
"""
