"""af_core: the IndirectLoad autofusion core (ASCIR, plugins, scheduling, codegen, CPU twin).

Public entry points::

    from af_core import ascir, Autofuser, AutofuserOptions   # pyautofuse-compatible
    from af_core import hookimpl, deferred                    # for plugin authors
    from af_core.builders import GraphBuilder, gather, index_select, embedding

The names are resolved on first use (module ``__getattr__``): ``import af_core``
alone loads neither sympy, numpy nor networkx, so that ``afc --help`` and the
plugin listing start fast. ``__version__`` is this distribution's one version
source (pyproject.toml reads it).
"""

from __future__ import annotations

from af_core import collector
from af_core.lazy import lazy_attributes

collector.install()

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing at start-up

__version__ = "0.1.0"

# public name -> the module that defines it
_LAZY = {
    "ascir": "af_core.ascir",
    "Autofuser": "af_core.autofuser",
    "AutofuserOptions": "af_core.autofuser",
    "AfError": "af_core.errors",
    "AscirError": "af_core.errors",
    "ScheduleError": "af_core.errors",
    "hookimpl": "af_core.hookspecs",
    "deferred": "af_core.registry",
}

__all__ = [
    "AfError",
    "AscirError",
    "Autofuser",
    "AutofuserOptions",
    "ScheduleError",
    "__version__",
    "ascir",
    "deferred",
    "hookimpl",
]

if TYPE_CHECKING:  # what type checkers and IDEs see
    from af_core import ascir
    from af_core.autofuser import Autofuser, AutofuserOptions
    from af_core.errors import AfError, AscirError, ScheduleError
    from af_core.hookspecs import hookimpl
    from af_core.registry import deferred


__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals(), __all__)
