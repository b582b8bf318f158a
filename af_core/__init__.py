"""af_core: the IndirectLoad autofusion core (ASCIR, plugins, scheduling, codegen, CPU twin).

Public entry points::

    from af_core import ascir, Autofuser, AutofuserOptions   # pyautofuse-compatible
    from af_core import hookimpl                              # for plugin authors
    from af_core.builders import GraphBuilder, gather, index_select, embedding
"""

from af_core import ascir
from af_core.autofuser import Autofuser, AutofuserOptions
from af_core.errors import AfError, AscirError, ScheduleError
from af_core.hookspecs import hookimpl

__version__ = "0.1.0"

__all__ = [
    "AfError",
    "AscirError",
    "Autofuser",
    "AutofuserOptions",
    "ScheduleError",
    "ascir",
    "hookimpl",
    "__version__",
]
