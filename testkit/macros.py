"""The package's macros rendered in plain Jinja, for tests that check what a macro returns or the
SQL it writes without a dbt run: their files loaded as one template, dbt's `return()` and the
`dbt_multijoin` namespace stood in for."""

from __future__ import annotations

import re
from types import SimpleNamespace

import jinja2

from testkit.dbt import REPO


class _Returned(Exception):
    """dbt's `return()` inside a macro: ends the macro with a value."""


def _give_back(value):
    raise _Returned(value)


def macro_package(files: tuple[str, ...], **context) -> SimpleNamespace:
    """The macros of `files` (paths under macros/) as dbt calls them: `package.<macro>(...)`, as
    `dbt_multijoin.<macro>(...)` inside them, gives what the macro returns, or what it renders.
    `context`: what else the macros read (`adapter`, `execute`). dbt's `{% test %}` blocks, which
    plain Jinja cannot parse, are dropped: a generic test's `default__` macro is called directly."""
    source = "\n".join(re.sub(r"{% test .*?{% endtest %}", "", (REPO / "macros" / name).read_text(), flags=re.S)
                       for name in files)
    # Jinja keeps a template's macros whose names begin with "_" out of its module: renamed here,
    # and called through the namespace under their own names.
    source = source.replace("{% macro _mj_", "{% macro private_mj_")
    package = SimpleNamespace()
    template = jinja2.Environment(extensions=["jinja2.ext.do"]).from_string(source)
    module = template.make_module({"return": _give_back, "dbt_multijoin": package, "modules": SimpleNamespace(re=re),
                                   **context})

    def callable_macro(macro):
        def call(*args, **kwargs):
            try:
                return str(macro(*args, **kwargs))
            except _Returned as returned:
                return returned.args[0]
        return call

    for name in dir(module):
        if name.startswith("private_mj_"):
            setattr(package, name.removeprefix("private"), callable_macro(getattr(module, name)))
        elif name.startswith("default__"):
            setattr(package, name, callable_macro(getattr(module, name)))
    return package
