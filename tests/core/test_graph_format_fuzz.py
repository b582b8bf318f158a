"""Mutated graph files are read or refused with an AscirError that names the place, never another error.

The mutations (tests/core/graph_mutations.py) swap types, put a string for a
list, a bool for an int and back, give a key twice, repeat a size, an axis or
a node, write huge, negative and non-finite numbers, delete fields and add
fields. Whatever the reader makes of one, it either builds a graph (which
then reads back unchanged from what the writer makes of it) or raises an
AscirError whose message starts with the node (or the size, the axis,
``graph``), the field when it has one, and the rule.
"""

from __future__ import annotations

import re

import pytest
from graph_mutations import documents, dump
from hypothesis import HealthCheck, given, settings

from af_core.errors import AscirError, GraphFormatError
from af_core.graph_files import load_graph
from af_core.ir.serialize import from_json, to_json
from af_core.registry import registry_ops

PLACE = re.compile(
    r"(node '[^\n]*?'( port '[^\n]*?')?|size '[^\n]*?'|axis '[^\n]*?'|graph)( field '[^\n]+?')?"
    r": rule '[a-z0-9-]+': \S"
)


def assert_names_the_place(exc: AscirError) -> None:
    text = str(exc)
    assert PLACE.match(text), text
    assert text.isprintable(), text
    if isinstance(exc, GraphFormatError):
        # only a whole object is named without a field: the top level that is no object, a key given twice
        assert exc.field or exc.rule in ("json-type", "json-duplicate-key"), text
        assert exc.rule != "json-format" or exc.field == "format", text
    else:  # graph building: unknown op, attribute, port, axis or producer, a size text the grammar refuses
        assert exc.node is not None, text


@settings(max_examples=1000, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(doc=documents())
def test_a_mutated_graph_file_is_read_or_refused_naming_the_place(doc):
    text = dump(doc)
    try:
        graph = from_json(text, registry_ops())
    except AscirError as exc:
        assert_names_the_place(exc)
    else:  # what was read is a graph the writer writes and the reader reads back unchanged
        again = to_json(graph)
        assert to_json(from_json(again, registry_ops())) == again


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(doc=documents())
def test_graph_files_give_the_same_answer(doc, tmp_path_factory):
    text = dump(doc)
    path = tmp_path_factory.getbasetemp() / "mutated.json"
    path.write_text(text, encoding="utf-8")
    try:
        expected = str(from_json(text, registry_ops()).name)
    except AscirError as exc:
        expected = str(exc)
        with pytest.raises(type(exc)) as info:
            load_graph(path)
        assert str(info.value) == expected
    else:
        assert load_graph(path).name == expected
