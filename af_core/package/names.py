"""The operator's names in CANN: an OpType in CamelCase and the kernel entry in snake case.

CANN finds an operator's kernel entry by turning its OpType into snake case
(``AddCustom`` -> ``add_custom``). The package therefore names both from the
kernel symbol's lower-case words, so that the conversion gives back exactly
the entry the kernel defines: a word that starts with a digit is joined to
the one before it (``gather_2d`` -> ``Gather2d`` -> ``gather2d``), since the
conversion would not put an underscore in front of a digit.
"""

from __future__ import annotations

import re

import attrs

from af_core import naming


@attrs.frozen
class OperatorNames:
    op_type: str  # the OpDef class and registration name: AutofuseGatherRows
    kernel: str  # the kernel entry (snake case of op_type): autofuse_gather_rows


def snake_case(op_type: str) -> str:
    """The CANN OpType -> kernel entry conversion, as this package relies on it.

    An underscore goes before an upper-case letter that follows a lower-case
    letter or a digit, and before an upper-case letter that starts a new word
    after a run of capitals (``ABCDef`` -> ``abc_def``); then all is lower case.
    """
    text = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", op_type)
    text = re.sub(r"(?<=[A-Z])([A-Z][a-z])", r"_\1", text)
    return text.lower()


def operator_names(graph_name: str) -> OperatorNames:
    """Names for the operator of a graph called ``graph_name`` (any text: it goes through the naming layer)."""
    symbol = naming.kernel_symbol(graph_name)
    words: list[str] = []
    for word in re.findall(r"[a-z0-9]+", symbol.lower()):
        if words and word[0].isdigit():
            words[-1] += word
        else:
            words.append(word)
    op_type = "".join(w[0].upper() + w[1:] for w in words)
    kernel = "_".join(words)
    if snake_case(op_type) != kernel:  # cannot happen for words of [a-z0-9] starting with a letter
        raise AssertionError(f"operator name {op_type} does not map back to {kernel}")
    return OperatorNames(op_type, kernel)
