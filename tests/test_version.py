"""The package's version has one home, dbt_multijoin/__init__.py: pyproject.toml reads it from
there, jar.py passes it to the jar's build (BuildInfo.version). dbt_project.yml holds the one
copy: dbt reads a package's version from that file alone, which cannot import it."""

import yaml

from dbt_multijoin import __version__
from testkit import REPO


def test_dbt_project_has_the_package_version():
    project = yaml.safe_load((REPO / "dbt_project.yml").read_text())
    assert project["version"] == __version__, "set dbt_project.yml's version to dbt_multijoin.__version__"
