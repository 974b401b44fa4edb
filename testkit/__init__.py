"""Helpers shared by the tests and the benchmarks, not shipped in the wheel: a SparkSession with
the extension loaded (`testkit.session`) and a walker over physical plans and their SQL metrics
(`testkit.plans`)."""
