"""``import af_core`` stays light: the heavy libraries load only when a public name is used."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("sympy", "numpy", "networkx", "jinja2", "rich")


def loaded_after(code: str) -> set[str]:
    probe = (
        f"{code}\nimport sys\nprint(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})))"
    )
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True).stdout
    return {name.split(".")[0] for name in out.split()}


def test_import_af_core_loads_no_heavy_library():
    assert loaded_after("import af_core; af_core.__version__") == set()


def test_hookimpl_for_plugin_authors_loads_no_heavy_library():
    assert loaded_after("from af_core import hookimpl") == set()


def test_public_names_resolve_on_use():
    assert "sympy" in loaded_after("from af_core import ascir, Autofuser, AutofuserOptions")


def test_networkx_loads_only_for_the_networkx_view():
    assert "networkx" not in loaded_after(
        "from af_core.samples import seed_minimal; seed_minimal().topo_order()"
    )
    assert "networkx" in loaded_after("from af_core import ascir; ascir.HintGraph('g').nx")


def test_public_names_are_the_defining_objects():
    import af_core
    from af_core import ascir as ascir_module
    from af_core.autofuser import Autofuser
    from af_core.errors import AscirError
    from af_core.hookspecs import hookimpl

    assert af_core.Autofuser is Autofuser and af_core.AscirError is AscirError
    assert af_core.hookimpl is hookimpl and af_core.ascir is ascir_module
    assert set(af_core.__all__) <= set(dir(af_core))


def test_an_unknown_name_is_an_attribute_error():
    import af_core

    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        af_core.not_a_name  # noqa: B018
