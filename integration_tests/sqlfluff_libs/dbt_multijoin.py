"""`dbt_multijoin.<macro>` for sqlfluff: renders a placeholder select over the first input."""

from importlib.metadata import version


def multi_join(relations, key, **_options):
    return f"select * from {relations[0]}"


def restore_confs():
    return ""


def extension_version():
    # The installed package's version, which pyproject.toml reads off dbt_multijoin/__init__.py.
    # Not `from dbt_multijoin import __version__`: sqlfluff registers this stand-in under the
    # name dbt_multijoin in sys.modules before running it, so that import would find this module.
    return version("dbt-multijoin")
