"""How index values are drawn for a run: the distribution names of the workload corpus, parsed once.

A name comes from users (a workload file, ``afc run``, ``TwinSession.inputs``), so it is parsed into a
:class:`IndexDistribution` before any value is drawn, and a name that is not one of the forms below
is a :class:`af_core.errors.UsageError` naming it and the forms. It used to fall through to uniform
values silently, so a misspelt ``zipf_1.2`` measured another workload than the one asked for.

Forms: ``uniform``, ``zipf<alpha>`` (alpha > 1; ``zipf`` alone is 1.1), ``unique``,
``unique_per_row``, ``repeat<k>`` (k >= 1; ``repeat`` alone is 2), ``duplicates``, ``with_negative``.
"""

from __future__ import annotations

import enum
import math
import re

import attrs

from af_core.errors import UsageError
from af_core.naming import printable


class DistributionKind(enum.Enum):
    """The shape of the index values; the value is the name's prefix in the corpus."""

    UNIFORM = "uniform"
    ZIPF = "zipf"
    UNIQUE = "unique"
    UNIQUE_PER_ROW = "unique_per_row"
    REPEAT = "repeat"
    DUPLICATES = "duplicates"
    WITH_NEGATIVE = "with_negative"


#: the default parameter of the kinds that take one (numpy's zipf needs alpha > 1)
ZIPF_ALPHA = 1.1
REPEAT_COUNT = 2

FORMS = (
    "uniform, zipf<alpha> (alpha > 1, default 1.1), unique, unique_per_row, "
    "repeat<k> (k >= 1, default 2), duplicates, with_negative"
)

_NUMBER = re.compile(r"[0-9]+(\.[0-9]+)?")


@attrs.frozen
class IndexDistribution:
    """A parsed distribution: its kind and, for ``zipf`` / ``repeat``, the parameter."""

    kind: DistributionKind = DistributionKind.UNIFORM
    alpha: float = ZIPF_ALPHA  # zipf only
    repeat: int = REPEAT_COUNT  # repeat only

    @property
    def name(self) -> str:
        """The corpus name this distribution parses from (``zipf1.1``, ``repeat4``, ``unique``)."""
        if self.kind is DistributionKind.ZIPF:
            return f"zipf{self.alpha:g}"
        if self.kind is DistributionKind.REPEAT:
            return f"repeat{self.repeat}"
        return self.kind.value


UNIFORM = IndexDistribution()


def _refuse(text: str, rule: str) -> UsageError:
    return UsageError(f"index distribution '{printable(text, 60)}': {rule}; the forms are {FORMS}")


def parse_distribution(text: str | IndexDistribution) -> IndexDistribution:
    """``text`` as a distribution; :class:`UsageError` naming the text and the rule it breaks."""
    if isinstance(text, IndexDistribution):
        return text
    if not isinstance(text, str):
        raise UsageError(f"an index distribution is a name ({FORMS}), not {type(text).__name__}")
    for kind in (DistributionKind.ZIPF, DistributionKind.REPEAT):
        if text.startswith(kind.value):
            return _with_parameter(text, kind, text[len(kind.value) :])
    try:
        return IndexDistribution(DistributionKind(text))
    except ValueError:
        raise _refuse(text, "unknown name") from None


def _with_parameter(text: str, kind: DistributionKind, rest: str) -> IndexDistribution:
    if rest == "":
        return IndexDistribution(kind)
    if not _NUMBER.fullmatch(rest):
        raise _refuse(text, f"'{kind.value}' takes a plain decimal number after it")
    if kind is DistributionKind.ZIPF:
        alpha = float(rest)
        if not (alpha > 1 and math.isfinite(alpha)):
            raise _refuse(text, "zipf's alpha must be above 1")
        return IndexDistribution(kind, alpha=alpha)
    if "." in rest or int(rest) < 1:
        raise _refuse(text, "repeat's count must be a whole number of at least 1")
    return IndexDistribution(kind, repeat=int(rest))
