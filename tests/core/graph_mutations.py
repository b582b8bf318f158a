"""Structured mutations of valid graph files, for the reader's fuzz and schema tests.

A document is held as a tree in which an object is an :class:`Obj` (a list
of key / value pairs, so a key may be given twice) and :class:`Raw` is
number text written as it is (``1e400``, ``NaN``); :func:`dump` writes the
tree as the text of a graph file. :func:`documents` draws a valid graph and
applies one to three mutations: a value of another type, a string for a
list and a list for a string, a bool for an int and an int for a bool, a
key given twice, an item repeated (two sizes, axes or nodes with one name),
a huge, negative or non-finite number, a field deleted, an extra field,
``null``.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import strategies as st

from af_core.builders import GraphBuilder, index_select
from af_core.ir.serialize import to_json
from af_core.samples import seed_minimal
from af_core.testing import seed_style_gather


class Obj:
    def __init__(self, pairs: list[list[Any]]) -> None:
        self.pairs = pairs  # [key, value] lists, in order, keys may repeat


class Raw:
    def __init__(self, text: str) -> None:
        self.text = text


def tree(value: Any) -> Any:
    """A parsed JSON value as a tree."""
    if isinstance(value, dict):
        return Obj([[k, tree(v)] for k, v in value.items()])
    if isinstance(value, list):
        return [tree(v) for v in value]
    return value


def dump(value: Any) -> str:
    if isinstance(value, Obj):
        return "{" + ", ".join(f"{json.dumps(k)}: {dump(v)}" for k, v in value.pairs) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(dump(v) for v in value) + "]"
    if isinstance(value, Raw):
        return value.text
    return json.dumps(value, allow_nan=True)


def _indexed_select() -> Any:
    g = GraphBuilder("bounded")
    x = g.data("x", [g.size("N", 1 << 20), 16], "float32")
    i = g.data("idx", [g.size("M", 4096)], "int32")
    g.output(index_select(x, 0, i), "out")
    return g.build()


BASES = [json.loads(to_json(build())) for build in (seed_style_gather, seed_minimal, _indexed_select)]

OTHER_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    7,
    2.5,
    8.0,
    "",
    "s0",
    "B18",
    " ",
    "s0 +* 1",
    "x y",
    "1/0",
    "Max()",
    "float16",
    [],
    ["s0"],
    [1, 2],
    [True],
    Obj([]),
    Obj([["k", 1]]),
    Obj([["name", "n"], ["type", "Data"]]),
]
NUMBERS: list[Any] = [
    (1 << 63) - 1,
    1 << 63,
    10**30,
    -1,
    0,
    -(1 << 63) - 1,
    -0.0,
    1e308,
    Raw("1e400"),
    Raw("-1e400"),
    Raw("NaN"),
    Raw("Infinity"),
    Raw("-Infinity"),
]
EXTRA_KEYS = ["extra", "colour", "ir_attrs", "Name", "max", "name", "size", "y", "dim"]

KINDS = [
    "type_swap",
    "string_as_list",
    "bool_int",
    "duplicate_key",
    "duplicate_item",
    "number",
    "delete_field",
    "extra_field",
    "null",
]
#: mutations whose result every JSON Schema validator sees as the reader does (no key twice, no NaN)
SCHEMA_KINDS = [k for k in KINDS if k != "duplicate_key"]


def _slots(value: Any) -> list[tuple[Any, Any]]:
    """(container, key) of every value below ``value``: a pair of an Obj (key: the pair) or a list index."""
    out: list[tuple[Any, Any]] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Obj):
            for pair in item.pairs:
                out.append((item, pair))
                stack.append(pair[1])
        elif isinstance(item, list):
            for i, sub in enumerate(item):
                out.append((item, i))
                stack.append(sub)
    return out


def _get(container: Any, key: Any) -> Any:
    return key[1] if isinstance(container, Obj) else container[key]


def _set(container: Any, key: Any, value: Any) -> None:
    if isinstance(container, Obj):
        key[1] = value
    else:
        container[key] = value


def _containers(root: Any, kind: type) -> list[Any]:
    found = [root] if isinstance(root, kind) else []
    return found + [_get(c, k) for c, k in _slots(root) if isinstance(_get(c, k), kind)]


@st.composite
def documents(draw: Any, kinds: list[str] | None = None) -> Any:
    """A valid graph file's tree after one to three mutations of ``kinds`` (default: all)."""
    root = tree(copy.deepcopy(draw(st.sampled_from(BASES))))
    pick = draw(
        st.randoms(use_true_random=False)
    ).choice  # uniform over places (sampled_from favours the first)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(kinds or KINDS))
        slots = _slots(root)
        if kind in ("type_swap", "null", "number"):
            container, key = pick(slots)
            pool = {"type_swap": OTHER_VALUES, "null": [None], "number": NUMBERS}[kind]
            _set(container, key, copy.deepcopy(draw(st.sampled_from(pool))))
        elif kind == "string_as_list":
            lists = [(c, k) for c, k in slots if isinstance(_get(c, k), list) and _get(c, k)]
            texts = [(c, k) for c, k in slots if isinstance(_get(c, k), str)]
            container, key = pick(lists + texts)
            value = _get(container, key)
            if isinstance(value, list):
                _set(container, key, "".join(str(v) for v in value) if draw(st.booleans()) else str(value[0]))
            else:
                _set(container, key, list(value) if draw(st.booleans()) else [value])
        elif kind == "bool_int":
            found = [(c, k) for c, k in slots if isinstance(_get(c, k), (bool, int))]
            if not found:
                continue
            container, key = pick(found)
            value = _get(container, key)
            _set(container, key, int(value) if isinstance(value, bool) else value != 0)
        elif kind == "duplicate_key":
            objs = [o for o in _containers(root, Obj) if o.pairs]
            obj = pick(objs)
            pair = pick(obj.pairs)
            again = copy.deepcopy(pair[1]) if draw(st.booleans()) else draw(st.sampled_from(OTHER_VALUES))
            obj.pairs.insert(draw(st.integers(0, len(obj.pairs))), [pair[0], again])
        elif kind == "duplicate_item":
            lists = [v for v in _containers(root, list) if v]
            items = pick(lists)
            items.insert(draw(st.integers(0, len(items))), copy.deepcopy(pick(items)))
        elif kind == "delete_field":
            objs = [o for o in _containers(root, Obj) if o.pairs]
            obj = pick(objs)
            obj.pairs.pop(draw(st.integers(0, len(obj.pairs) - 1)))
        elif kind == "extra_field":
            obj = pick(_containers(root, Obj))
            obj.pairs.append(
                [draw(st.sampled_from(EXTRA_KEYS)), copy.deepcopy(draw(st.sampled_from(OTHER_VALUES)))]
            )
    return root
