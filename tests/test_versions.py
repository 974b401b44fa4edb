"""spark-versions.toml is the one list of the supported Spark versions: whatever else lists them
reads it (the scripts, testkit, the build) or is generated from it (jvm/pom.xml's profiles, the
docs' tables), and these tests fail when a copy drifts, when the manifest stops saying what the
checkout's Spark homes hold, or when another file names a tested patch."""

from __future__ import annotations

import shutil
import subprocess
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from buildtools import versions
from buildtools.jar_build import CHECKOUT_SOURCES, POM, VERSIONED_JARS, jar_version, maven_properties
from dbt_multijoin.jar import SparkInstall
from testkit import REPO, SPARK_VERSIONS
from testkit.formats import DEPENDENCIES, RUNTIMES

MINORS = versions.load()

# Files that still name a tested patch and that this change could not edit (other owners'):
# each should read the manifest or stop naming the patch; then its entry goes.
NOT_YET_FROM_THE_MANIFEST: dict[str, str] = {}


def test_the_generated_sections_are_the_manifests():
    diffs = versions.drift(MINORS)
    assert not diffs, "".join(diffs) + "\nregenerate: python -m buildtools.versions --write"


def test_the_check_fails_on_a_drifted_section_and_write_mends_it(tmp_path):
    for path in {where for where, _ in versions.SECTIONS.values()}:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / path, tmp_path / path)
    pom = tmp_path / "jvm" / "pom.xml"
    pom.write_text(pom.read_text().replace("<kryo.version>", "<kryo.version>9", 1))
    assert [diff.splitlines()[0] for diff in versions.drift(MINORS, root=tmp_path)] == ["--- jvm/pom.xml"]
    versions.drift(MINORS, write=True, root=tmp_path)
    assert versions.drift(MINORS, root=tmp_path) == []
    assert pom.read_text() == POM.read_text()


def profile_properties() -> dict[str, dict[str, str]]:
    """The properties of each profile of jvm/pom.xml, by profile id."""
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    profiles = ElementTree.parse(POM).getroot().findall("m:profiles/m:profile", ns)
    return {
        profile.find("m:id", ns).text: {prop.tag.split("}")[1]: prop.text for prop in profile.find("m:properties", ns)}
        for profile in profiles
    }


def test_the_pom_has_a_profile_per_minor_and_no_other():
    profiles = profile_properties()
    assert set(profiles) == {f"spark-{m.minor}" for m in MINORS}
    for m in MINORS:
        properties = profiles[f"spark-{m.minor}"]
        assert (properties["spark.minor"], properties["spark.version"]) == (m.minor, m.patch)
        assert (properties["scala.binary.version"], properties["scala.version"]) == (m.scala_binary, m.scala)


@pytest.mark.parametrize("minor", MINORS, ids=lambda m: m.minor)
def test_the_manifest_and_the_profile_say_what_the_spark_home_holds(minor):
    """An IDE import and a plain ./mvnw use the profile's values; jar_build.py reads them off the
    Spark home. Both must build the same jar: same Spark home, versions and shim directories."""
    home = REPO / minor.spark_home
    if not (home / "jars").is_dir():
        pytest.skip(f"no Spark {minor.patch} at {home}: scripts/setup.sh makes it")
    spark = SparkInstall.from_home(home)
    assert (spark.spark_version, spark.scala_binary) == (minor.patch, minor.scala_binary)
    read = {name: jar_version(spark, pattern) for name, pattern in VERSIONED_JARS.items()}
    assert read == {"scala.version": minor.scala, "kryo.version": minor.kryo, "slf4j.version": minor.slf4j}
    for module in minor.extra_modules:
        assert (spark.jars / f"{module}_{minor.scala_binary}-{minor.patch}.jar").is_file()
    profile = profile_properties()[f"spark-{minor.minor}"]
    resolved = {
        name: value.replace("${project.basedir}", str(POM.parent)).replace("${multijoin.sources}", str(CHECKOUT_SOURCES))
        for name, value in profile.items()
    }
    assert Path(resolved.pop("spark.home")).resolve() == spark.home
    passed = maven_properties(spark)
    assert resolved == {name: passed[name] for name in resolved}


def bash(script: str) -> str:
    result = subprocess.run(
        ["bash", "-c", f"set -euo pipefail; source scripts/spark-versions.sh; {script}"],
        cwd=REPO, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_scripts_read_the_manifest():
    assert bash('echo "${SPARK_VERSIONS[*]}"').split() == [m.patch for m in MINORS] == SPARK_VERSIONS
    for name in versions.SUITES:
        variable = "SPARK_SUITE_" + name.upper().replace("-", "_")
        assert bash(f'echo "${{{variable}[*]}}"').split() == [m.patch for m in versions.suite(MINORS, name)]
    for m in MINORS:
        # A minor and its patch name the same Spark.
        for version in (m.minor, m.patch):
            lines = bash(f"spark_patch {version}; spark_venv {version}; echo \"[$(spark_extra_home {version})]\"")
            assert lines.splitlines() == [m.patch, m.python, f"[{m.pyspark_home or ''}]"]
    unsupported = subprocess.run(
        ["bash", "-c", "source scripts/spark-versions.sh; spark_home 3.4"], cwd=REPO, capture_output=True, text=True
    )
    assert unsupported.returncode != 0 and unsupported.stdout == ""


def test_testkit_reads_the_manifest():
    assert RUNTIMES == {m.minor: {"iceberg": m.iceberg, "delta": m.delta} for m in MINORS if m.iceberg}
    assert DEPENDENCIES == {m.delta: [m.delta_storage] for m in MINORS if m.delta}


def test_the_constraints_files_leave_pyspark_to_the_manifest():
    for m in MINORS:
        if m.constraints:
            pins = (REPO / m.constraints).read_text().lower().splitlines()
            assert not [line for line in pins if line.startswith("pyspark")], m.constraints


def manifest_with(tmp_path: Path, extra: str) -> Path:
    """A copy of the manifest with `extra` appended, beside copies of what it names."""
    shutil.copytree(REPO / "constraints", tmp_path / "constraints")
    manifest = tmp_path / versions.MANIFEST.name
    manifest.write_text(versions.MANIFEST.read_text() + extra)
    return manifest


def test_adding_a_minor_is_one_manifest_entry(tmp_path):
    manifest = manifest_with(tmp_path, """
[spark."4.4"]
patch = "4.4.1"
scala = "2.13.18"
kryo = "4.0.3"
slf4j = "2.0.17"
extra_modules = ["spark-common-utils-java"]
python = ".venv-spark4"
suites = ["smoke"]
""")
    minors = versions.load(manifest)
    assert [m.minor for m in minors][-1] == "4.4"
    assert "4.4.1" in versions.bash(minors).splitlines()[0]
    profiles = versions.pom_profiles(minors)
    # Without a shim directory of its own it builds with the newest one before it.
    assert "<id>spark-4.4</id>" in profiles and "${multijoin.sources}/shims/spark-4.2</shim.dir>" in profiles.split("spark-4.4")[-1]
    assert "| 4.4.x | 2.13 | `dbt-multijoin-spark4.4_2.13` | 4.4.1 | the smoke subset |" in versions.readme_table(minors)


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        ('[spark."4.4"]\npatch = "4.5.0"\nscala = "2.13.18"\nkryo = "1"\nslf4j = "1"\npython = ".venv-spark4"\n', "not a release of this minor"),
        ('[spark."4.4"]\npatch = "4.4.0"\nscala = "2.13.18"\nkryo = "1"\nslf4j = "1"\npython = ".venv-spark4"\nsuites = ["pipelines"]\n', "need its Iceberg and Delta runtimes"),
        ('[spark."4.4"]\npatch = "4.4.0"\nscala = "2.13.18"\nkryo = "1"\nslf4j = "1"\npython = ".venv-spark44"\n', "is no minor's virtualenv"),
        ('[spark."4.4"]\npatch = "4.4.0"\nscala = "2.13.18"\nkryo = "1"\nslf4j = "1"\npython = ".venv"\nconstraints = "constraints/spark-3.5.txt"\n', "already holds Spark 3.5"),
        ('[spark."4.4"]\npatch = "4.4.0"\nscala = "2.13.18"\nkryo = "1"\nslf4j = "1"\npython = ".venv-spark4"\nsuites = ["quick"]\n', 'exactly one minor runs the "quick" suite'),
        ('[spark."4.4"]\npatch = "4.4.0"\nscala = "2.13.18"\npython = ".venv-spark4"\n', "missing"),
    ],
)  # fmt: skip
def test_a_wrong_entry_is_refused(tmp_path, extra, problem):
    with pytest.raises(ValueError, match=problem):
        versions.load(manifest_with(tmp_path, "\n" + extra))


def test_no_other_file_names_a_tested_patch():
    """The issue's measure: no tracked file names a tested patch outside the manifest, the
    generated sections and benchmarks/results/ (`python -m buildtools.versions --patch-mentions`),
    but for the files listed above, which are to lose their entries."""
    mentions = versions.patch_mentions(MINORS)
    unexpected = {path: lines for path, lines in mentions.items() if path not in NOT_YET_FROM_THE_MANIFEST}
    assert not unexpected, f"name the minor, or read spark-versions.toml (buildtools/versions.py): {unexpected}"
    mended = set(NOT_YET_FROM_THE_MANIFEST) - set(mentions)
    assert not mended, f"these no longer name a tested patch: take them out of NOT_YET_FROM_THE_MANIFEST: {mended}"
