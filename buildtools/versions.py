"""The supported Spark versions: spark-versions.toml read, checked, and handed to everything that
lists them.

    python -m buildtools.versions --bash            # assignments for scripts/spark-versions.sh
    python -m buildtools.versions --write           # regenerate the generated sections
    python -m buildtools.versions --check           # exit 1 when a generated section drifted
    python -m buildtools.versions --patch-mentions  # the files that still name a tested patch

Only the standard library at import time: scripts/setup.sh runs `--bash` with the system Python,
before any virtualenv exists. A generated section sits between two marker comments (`MARKER`) in
a tracked file; `--write` replaces what is between them and nothing else. (The markers hold no
"--": an XML comment may not.)"""

from __future__ import annotations

import argparse
import difflib
import re
import shlex
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MANIFEST = REPO / "spark-versions.toml"
SUITES = ("whole", "quick", "pipelines", "smoke", "own-jvm", "jvm-unit")
# The checkout's main virtualenv: its minor is the pom's default profile, and the example runs on it.
MAIN_VENV = ".venv"
# Where a virtualenv keeps pyspark: scripts/setup.sh makes them with the project's Python, 3.11.
VENV_SITE_PACKAGES = "lib/python3.11/site-packages"


@dataclass(frozen=True)
class SparkMinor:
    """One table of the manifest (its comments say what each field is)."""

    minor: str
    patch: str
    scala: str
    kryo: str
    slf4j: str
    extra_modules: tuple[str, ...]
    python: str
    constraints: str | None
    suites: tuple[str, ...]
    iceberg: str | None = None
    delta: str | None = None
    delta_storage: str | None = None

    @property
    def scala_binary(self) -> str:
        return ".".join(self.scala.split(".")[:2])

    @property
    def pyspark_home(self) -> str | None:
        """The pyspark-only home of this Spark (`pip install --target`), or None when its
        virtualenv has this pyspark installed."""
        return None if self.constraints else f".spark/{self.patch}"

    @property
    def spark_home(self) -> str:
        """The Spark home (the pyspark directory) in a checkout, relative to its top."""
        if self.pyspark_home:
            return f"{self.pyspark_home}/pyspark"
        return f"{self.python}/{VENV_SITE_PACKAGES}/pyspark"

    @property
    def jar_prefix(self) -> str:
        """The name of this minor's jar up to the package's version."""
        return f"dbt-multijoin-spark{self.minor}_{self.scala_binary}"

    @property
    def runtimes(self) -> dict[str, str]:
        """The table formats' runtimes by format: none, or both."""
        return {"iceberg": self.iceberg, "delta": self.delta} if self.iceberg else {}


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def load(path: Path = MANIFEST) -> list[SparkMinor]:
    """The manifest's minors, oldest first; raises ValueError on an entry that cannot be right."""
    with open(path, "rb") as manifest:
        tables = tomllib.load(manifest).get("spark", {})
    minors = []
    for minor, fields in sorted(tables.items(), key=lambda item: _version_key(item[0])):
        fields = dict(fields)
        for listed in ("extra_modules", "suites"):
            fields[listed] = tuple(fields.get(listed, ()))
        try:
            entry = SparkMinor(minor=minor, constraints=fields.pop("constraints", None), **fields)
        except TypeError as error:
            raise ValueError(f"{path.name}, Spark {minor}: {error}") from None
        minors.append(entry)
    problems = _problems(minors, path.parent)
    if problems:
        raise ValueError(f"{path.name}: " + "; ".join(problems))
    return minors


def _problems(minors: list[SparkMinor], root: Path) -> list[str]:
    problems = []
    own_venvs = {}
    for m in minors:
        if m.constraints:
            own_venvs.setdefault(m.python, m)
    for m in minors:
        where = f"Spark {m.minor}"
        if not re.fullmatch(r"\d+\.\d+", m.minor) or not m.patch.startswith(m.minor + "."):
            problems.append(f"{where}: patch {m.patch} is not a release of this minor")
        if not re.fullmatch(r"\d+\.\d+\.\d+", m.scala):
            problems.append(f"{where}: scala {m.scala} is not a full Scala version")
        if unknown := set(m.suites) - set(SUITES):
            problems.append(f"{where}: unknown suites {sorted(unknown)} (known: {', '.join(SUITES)})")
        if {"pipelines", "own-jvm"} & set(m.suites) and not (m.iceberg and m.delta and m.delta_storage):
            problems.append(f"{where}: the pipelines and own-jvm suites need its Iceberg and Delta runtimes")
        if bool(m.iceberg) != bool(m.delta) or bool(m.delta) != bool(m.delta_storage):
            problems.append(f"{where}: iceberg, delta and delta_storage go together")
        if m.constraints and not (root / m.constraints).is_file():
            problems.append(f"{where}: no constraints file {m.constraints}")
        if m.constraints and own_venvs[m.python] is not m:
            problems.append(f"{where}: {m.python} already holds Spark {own_venvs[m.python].minor}")
        if not m.constraints and m.python not in own_venvs:
            problems.append(f"{where}: {m.python} is no minor's virtualenv (one with constraints)")
    if MAIN_VENV not in own_venvs:
        problems.append(f"no minor has {MAIN_VENV}, the checkout's main virtualenv")
    if len(suite(minors, "quick")) != 1:
        problems.append('exactly one minor runs the "quick" suite')
    return problems


def suite(minors: list[SparkMinor], name: str) -> list[SparkMinor]:
    """The minors `name` runs on, in the manifest's order."""
    return [m for m in minors if name in m.suites]


def main_minor(minors: list[SparkMinor]) -> SparkMinor:
    """The minor of the checkout's main virtualenv."""
    return next(m for m in minors if m.python == MAIN_VENV and m.constraints)


# --- scripts/spark-versions.sh ------------------------------------------------------------------


def bash(minors: list[SparkMinor]) -> str:
    """Bash assignments of the manifest for scripts/spark-versions.sh (global, so that sourcing
    it inside a function works too)."""

    def array(name: str, values) -> str:
        return f"declare -ga {name}=({' '.join(shlex.quote(v) for v in values)})"

    def table(name: str, pairs) -> str:
        return f"declare -gA {name}=({' '.join(f'[{shlex.quote(k)}]={shlex.quote(v)}' for k, v in pairs)})"

    lines = [
        array("SPARK_VERSIONS", [m.patch for m in minors]),
        f"declare -g SPARK_MAIN={shlex.quote(main_minor(minors).patch)}",
        table("SPARK_PATCH", [(key, m.patch) for m in minors for key in (m.minor, m.patch)]),
        table("SPARK_PYTHON", [(m.patch, m.python) for m in minors]),
        table("SPARK_CONSTRAINTS", [(m.patch, m.constraints) for m in minors if m.constraints]),
        table("SPARK_PYSPARK_HOME", [(m.patch, m.pyspark_home) for m in minors if m.pyspark_home]),
    ]
    for name in SUITES:
        lines.append(array("SPARK_SUITE_" + name.upper().replace("-", "_"), [m.patch for m in suite(minors, name)]))
    return "\n".join(lines)


# --- generated sections -------------------------------------------------------------------------

MARKER = re.compile(
    r"^[ \t]*<!-- generated: (?P<name>[\w-]+), from spark-versions\.toml by buildtools/versions\.py: do not edit -->\n"
    r"(?P<body>.*?)"
    r"^[ \t]*<!-- end generated: (?P=name) -->\n",
    re.M | re.S,
)


def pom_profiles(minors: list[SparkMinor], sources: Path | None = None) -> str:
    """jvm/pom.xml's profiles: per minor its versions, shim directories and checkout Spark home."""
    from buildtools.jar_build import CHECKOUT_SOURCES, shim_dir

    sources = sources or CHECKOUT_SOURCES
    main = main_minor(minors)
    out = []
    for m in minors:
        shims = {name: shim_dir(m.minor, sources, base=base) for name, base in (("shim.base.dir", True), ("shim.dir", False))}
        out += ["    <profile>", f"      <id>spark-{m.minor}</id>"]
        if m is main:
            out += ["      <activation>", "        <activeByDefault>true</activeByDefault>", "      </activation>"]
        properties = {
            "spark.minor": m.minor,
            "spark.version": m.patch,
            "scala.binary.version": m.scala_binary,
            "scala.version": m.scala,
            "kryo.version": m.kryo,
            "slf4j.version": m.slf4j,
            **{name: "${multijoin.sources}/" + path.relative_to(sources).as_posix() for name, path in shims.items()},
            "spark.home": "${project.basedir}/../" + m.spark_home,
        }
        out.append("      <properties>")
        out += [f"        <{name}>{value}</{name}>" for name, value in properties.items()]
        out.append("      </properties>")
        if m.extra_modules:
            out.append("      <dependencies>")
            for module in m.extra_modules:
                out += [
                    "        <dependency>",
                    "          <groupId>org.apache.spark</groupId>",
                    f"          <artifactId>{module}_${{scala.binary.version}}</artifactId>",
                    "          <version>${spark.version}</version>",
                    "          <scope>system</scope>",
                    f"          <systemPath>${{spark.jars}}/{module}_${{scala.binary.version}}-${{spark.version}}.jar</systemPath>",
                    "        </dependency>",
                ]
            out.append("      </dependencies>")
        out.append("    </profile>")
    return "\n".join(out) + "\n"


def build_table(minors: list[SparkMinor], sources: Path | None = None) -> str:
    """docs/development.md: per profile its Spark, shims and Spark home in a checkout."""
    from buildtools.jar_build import CHECKOUT_SOURCES, shim_dir

    sources = sources or CHECKOUT_SOURCES
    main = main_minor(minors)
    rows = [
        "| profile | Spark (Scala) | shims compiled with `jvm/src/main/scala` | Spark home in a checkout |",
        "|---|---|---|---|",
    ]
    for m in minors:
        shims = ", ".join(f"`jvm/src/shims/{shim_dir(m.minor, sources, base=base).name}`" for base in (True, False))
        rows.append(
            f"| `spark-{m.minor}`{' (default)' if m is main else ''} | {m.patch} ({m.scala_binary}) | {shims} | `{m.spark_home}` |"
        )
    return "\n".join(rows) + "\n"


def suites_table(minors: list[SparkMinor]) -> str:
    """docs/development.md: per minor what runs on it and the table formats' runtimes it loads."""
    rows = ["| Spark | Python | suites | Iceberg runtime | Delta runtime |", "|---|---|---|---|---|"]
    for m in minors:
        python = f"`{m.python}` (`{m.constraints}`)" if m.constraints else f"`{m.python}`, `{m.pyspark_home}` first on `PYTHONPATH`"
        delta = f"`{m.delta}`, `{m.delta_storage}`" if m.delta else "none"
        rows.append(f"| {m.patch} | {python} | {', '.join(m.suites)} | {f'`{m.iceberg}`' if m.iceberg else 'none'} | {delta} |")
    return "\n".join(rows) + "\n"


SUITE_WORDS = {
    "whole": "the whole suite",
    "smoke": "the smoke subset",
    "pipelines": "the pipeline tests on Delta and Iceberg",
    "jvm-unit": "the JVM unit tests",
}


def readme_table(minors: list[SparkMinor]) -> str:
    """README.md's compatibility table: per minor its jar and the patch the tests run on."""
    rows = ["| Spark | Scala | jar | tested here on | what runs there |", "|---|---|---|---|---|"]
    for m in minors:
        runs = ", ".join(words for name, words in SUITE_WORDS.items() if name in m.suites)
        rows.append(f"| {m.minor}.x | {m.scala_binary} | `{m.jar_prefix}` | {m.patch} | {runs} |")
    return "\n".join(rows) + "\n"


# Where each generated section lives, and what renders it.
SECTIONS = {
    "pom-profiles": ("jvm/pom.xml", pom_profiles),
    "build-table": ("docs/development.md", build_table),
    "suites-table": ("docs/development.md", suites_table),
    "compatibility": ("README.md", readme_table),
}


def regenerate(text: str, path: str, minors: list[SparkMinor]) -> str:
    """`text` (the content of `path`) with its generated sections rendered afresh."""
    found = set()

    def render(match: re.Match) -> str:
        name = match["name"]
        if name not in SECTIONS or SECTIONS[name][0] != path:
            raise ValueError(f"{path}: unknown generated section {name!r}")
        found.add(name)
        whole = match.group(0)
        return whole[: match.start("body") - match.start()] + SECTIONS[name][1](minors) + whole[match.end("body") - match.start() :]

    result = MARKER.sub(render, text)
    missing = {name for name, (where, _) in SECTIONS.items() if where == path} - found
    if missing:
        raise ValueError(f"{path}: no generated section {', '.join(sorted(missing))} (its markers are gone)")
    return result


def drift(minors: list[SparkMinor], write: bool = False, root: Path = REPO) -> list[str]:
    """The unified diffs of the generated sections that differ from the manifest (written afresh
    when `write`)."""
    diffs = []
    for path in sorted({where for where, _ in SECTIONS.values()}):
        current = (root / path).read_text()
        wanted = regenerate(current, path, minors)
        if wanted != current:
            diffs.append("".join(difflib.unified_diff(current.splitlines(True), wanted.splitlines(True), path, path + " (generated)")))
            if write:
                (root / path).write_text(wanted)
    return diffs


# --- the tested patches named elsewhere ---------------------------------------------------------


def patch_mentions(minors: list[SparkMinor], root: Path = REPO) -> dict[str, list[tuple[int, str]]]:
    """Per tracked file, the lines naming a tested patch, outside what may name one: the manifest,
    benchmarks/results/ (each run's record of the Spark it ran on), the generated sections, and a
    benchmark run's name (`...-spark<patch>`, the name of its directory in benchmarks/results/)."""
    patches = "|".join(re.escape(m.patch) for m in minors)
    mention = re.compile(rf"(?<![\d.])(?<!-spark)(?:{patches})(?!\d|\.\d)")
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, text=True, check=True).stdout
    found = {}
    for path in tracked.split("\0"):
        if not path or path == MANIFEST.name or path.startswith("benchmarks/results/") or not (root / path).is_file():
            continue
        try:
            text = (root / path).read_text()
        except UnicodeDecodeError:
            continue
        # Generated sections are blanked, line for line, so that the line numbers stay right.
        text = MARKER.sub(lambda match: "\n" * match.group(0).count("\n"), text)
        lines = [(number, line.strip()) for number, line in enumerate(text.splitlines(), 1) if mention.search(line)]
        if lines:
            found[path] = lines
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m buildtools.versions", description=__doc__.split("\n\n")[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--bash", action="store_true", help="print the manifest as bash assignments")
    action.add_argument("--write", action="store_true", help="regenerate the generated sections")
    action.add_argument("--check", action="store_true", help="exit 1 when a generated section differs from the manifest")
    action.add_argument("--patch-mentions", action="store_true", help="list the files that name a tested patch elsewhere")
    args = parser.parse_args(argv)
    try:
        minors = load()
    except ValueError as error:
        print(error, file=sys.stderr)
        return 1
    if args.bash:
        print(bash(minors))
        return 0
    if args.patch_mentions:
        mentions = patch_mentions(minors)
        for path, lines in mentions.items():
            for number, line in lines:
                print(f"{path}:{number}: {line}")
        print(f"{len(mentions)} files name a tested patch outside spark-versions.toml, generated sections and benchmarks/results/")
        return 0
    diffs = drift(minors, write=args.write)
    if args.check and diffs:
        sys.stdout.writelines(diffs)
        print("generated sections differ from spark-versions.toml: python -m buildtools.versions --write", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
