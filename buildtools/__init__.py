"""The build's own tooling, for a source checkout only: the wheel ships `dbt_multijoin` alone
(pyproject.toml's `packages`), never this package.

- `versions`: the supported Spark versions (spark-versions.toml at the checkout's top), what the
  scripts read of them, and the sections generated from them (jvm/pom.xml's profiles, the
  docs' tables), with a check that fails when one drifts;
- `jar_build`: compiling the extension jar with jvm/pom.xml (fingerprint, lock, Maven commands)
  and running its ScalaTest suites. `dbt_multijoin.jar` calls it from a checkout, so that
  `dbt-multijoin jar` builds when a source changed."""
