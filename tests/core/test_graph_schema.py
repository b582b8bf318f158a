"""The JSON Schema shipped beside the reader, the field reference and the reader's table agree.

graph.schema.json and the tables of docs/graph-format.md are generated from
the table in af_core/ir/schema.py (tools/graph_schema.py); these tests fail
when either is stale, and they check the JSON Schema's meaning with a small
validator of the keywords it uses (no jsonschema dependency): on mutated
graph files, every file the reader accepts is valid under the JSON Schema,
and every file the reader refuses for a rule the JSON Schema can say is
invalid under it.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
from importlib.resources import files
from pathlib import Path
from typing import Any

from graph_mutations import BASES, SCHEMA_KINDS, documents, dump
from hypothesis import HealthCheck, given, settings

from af_core.errors import AscirError
from af_core.ir import schema as table
from af_core.ir.serialize import from_json
from af_core.ir.validate import validate
from af_core.registry import registry_ops

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "graph_schema.py"
DOC = ROOT / "docs" / "graph-format.md"
SHIPPED = json.loads((files("af_core.ir") / "graph.schema.json").read_text(encoding="utf-8"))

# -- a validator of the JSON Schema keywords graph.schema.json uses (draft 2020-12 meaning) ---------------

ANNOTATIONS = {"$schema", "title", "description", "$defs"}
KEYWORDS = {
    "$ref",
    "anyOf",
    "type",
    "const",
    "enum",
    "minimum",
    "maximum",
    "maxLength",
    "items",
    "properties",
    "required",
    "additionalProperties",
}


def _is(value: Any, kind: str) -> bool:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    return {
        "null": value is None,
        "boolean": isinstance(value, bool),
        "integer": number and (isinstance(value, int) or math.isfinite(value) and value == int(value)),
        "number": number,
        "string": isinstance(value, str),
        "array": isinstance(value, list),
        "object": isinstance(value, dict),
    }[kind]


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def valid(schema: dict, value: Any, root: dict = SHIPPED) -> bool:
    if "$ref" in schema and not valid(root["$defs"][schema["$ref"].removeprefix("#/$defs/")], value, root):
        return False
    if "anyOf" in schema and not any(valid(s, value, root) for s in schema["anyOf"]):
        return False
    kinds = schema.get("type")
    if kinds is not None and not any(_is(value, k) for k in ([kinds] if isinstance(kinds, str) else kinds)):
        return False
    if "const" in schema and not _same(value, schema["const"]):
        return False
    if "enum" in schema and not any(_same(value, e) for e in schema["enum"]):
        return False
    if _is(value, "number"):
        if "minimum" in schema and not value >= schema["minimum"]:
            return False
        if "maximum" in schema and not value <= schema["maximum"]:
            return False
    if isinstance(value, str) and len(value) > schema.get("maxLength", len(value)):
        return False
    if isinstance(value, list) and "items" in schema:
        return all(valid(schema["items"], v, root) for v in value)
    if isinstance(value, dict):
        if any(name not in value for name in schema.get("required", ())):
            return False
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, v in value.items():
            if key in properties:
                if not valid(properties[key], v, root):
                    return False
            elif extra is False or (isinstance(extra, dict) and not valid(extra, v, root)):
                return False
    return True


def _keywords(schema: Any) -> set[str]:
    if isinstance(schema, list):
        return set().union(*map(_keywords, schema)) if schema else set()
    if not isinstance(schema, dict):
        return set()
    found = set(schema)
    for key, sub in schema.items():
        if key in ("properties", "$defs"):
            found |= set().union(*map(_keywords, sub.values())) if sub else set()
        elif key in ("items", "anyOf", "additionalProperties"):
            found |= _keywords(sub)
    return found


def test_the_validator_knows_every_keyword_of_the_shipped_schema():
    assert _keywords(SHIPPED) <= ANNOTATIONS | KEYWORDS


# -- generated files are current ---------------------------------------------------------------------------


def load_tool():
    spec = importlib.util.spec_from_file_location("graph_schema", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_shipped_json_schema_is_the_table():
    text = (files("af_core.ir") / "graph.schema.json").read_text(encoding="utf-8")
    assert text == table.json_schema_text(), (
        "graph.schema.json is out of date: run python tools/graph_schema.py"
    )


def test_the_field_reference_of_the_doc_is_the_table():
    text = DOC.read_text(encoding="utf-8")
    assert load_tool().doc_text(text) == text, (
        "docs/graph-format.md is out of date: run python tools/graph_schema.py"
    )


def test_table_and_json_schema_have_the_same_fields_required_and_nulls():
    for record in table.RECORDS:
        body = SHIPPED if record is table.GRAPH else SHIPPED["$defs"][record.ref]
        assert list(body["properties"]) == [f.name for f in record.fields]
        assert body["required"] == [f.name for f in record.fields if f.required]
        assert body["additionalProperties"] is False
        for f in record.fields:
            prop = body["properties"][f.name]
            assert ({"type": "null"} in prop.get("anyOf", [])) == f.nullable, (record.ref, f.name)
            assert valid(prop, None) == f.nullable, (record.ref, f.name)
    assert set(SHIPPED["$defs"]) == {r.ref for r in table.RECORDS if r is not table.GRAPH} | {
        "sizeExpression"
    }


def test_the_doc_example_is_a_valid_graph():
    (example,) = re.findall(r"```json\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    graph = from_json(example, registry_ops())
    validate(graph)
    assert valid(SHIPPED, json.loads(example))
    assert [n.name for n in graph.nodes()][-1] == "out"


# -- reader and JSON Schema agree on mutated files -----------------------------------------------------------

#: rules of the reader that the JSON Schema says too (outside ir_attr, whose kinds depend on the op, and attrs,
#: whose nesting limit it cannot say)
SAID_BY_THE_SCHEMA = {
    "json-format",
    "json-type",
    "json-required",
    "json-unknown-field",
    "json-range",
    "dtype-known",
}


def test_the_unmutated_files_are_valid():
    for data in BASES:
        assert valid(SHIPPED, data)


@settings(max_examples=600, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(doc=documents(SCHEMA_KINDS))
def test_reader_and_json_schema_agree_on_mutated_files(doc):
    text = dump(doc)
    value = json.loads(text)  # what any JSON Schema validator sees: the last value of a key given twice
    try:
        from_json(text, registry_ops())
    except AscirError as exc:
        said = exc.rule in SAID_BY_THE_SCHEMA and not re.match(
            r"(ir_attr|attrs)\b", getattr(exc, "field", "")
        )
        # JSON Schema's integer is a mathematical one: 8.0 is an integer to it, a float to the reader
        integral_float = re.search(r"got the number -?\d+\.0$", str(exc))
        if said and not integral_float:
            assert not valid(SHIPPED, value), str(exc)
    else:
        assert valid(SHIPPED, value), text
