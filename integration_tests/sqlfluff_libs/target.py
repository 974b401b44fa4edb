"""`target` for sqlfluff (dbt's target of the run)."""

name = "session"
schema = "multijoin_it"
