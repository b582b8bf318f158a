"""The format of JSON graph files (``af-hintgraph/1``): one table of fields, and the check against it.

Every field of a graph file is declared once, in :data:`GRAPH`: its JSON
type, whether it must be there, whether it may be ``null``, its limits and
what it means. :func:`check` walks a parsed file along the table before
anything is built from it and raises a :class:`~af_core.errors.GraphFormatError`
at the first value that breaks a rule, naming the node (or the size, the
axis, the top-level field), the field and the rule. :func:`loads` parses the
text so that what ``json`` would let through unseen reaches the check: a key
given twice in one object, and the literals ``NaN``, ``Infinity`` and
``-Infinity``. The same table gives the JSON Schema shipped beside this
module (``graph.schema.json``, :func:`json_schema_text`) and the field
reference of docs/graph-format.md (:func:`field_reference`);
``python tools/graph_schema.py`` rewrites both.

Types are exact: a bool is no integer and an integer no bool (Python's
``bool`` is a subclass of ``int``, so every test looks for a bool first), a
string is no list, a float no integer, and every number is finite.

Rules (the ``rule`` of the error):

- ``json-format``: ``format`` is missing or is not ``af-hintgraph/1``;
- ``json-type``: a value of the wrong JSON type;
- ``json-required``: a required field is missing;
- ``json-unknown-field``: a field the format does not have;
- ``json-range``: a number, a text or a nesting outside its limits;
- ``json-finite``: ``NaN``, ``Infinity``, or a number too large for a float (``1e400``);
- ``json-duplicate-key``: a key given more than once in one object;
- ``size-name``: a size name that is not an identifier;
- ``size-unique-name``, ``axis-unique-name``, ``node-unique-name``: two sizes, axes or nodes with one name;
- ``dtype-known``: a dtype that is not one of :data:`af_core.dtypes.NAMES`.

What needs more than the file's own text is checked while the graph is
built, with the rules of the graph API: an op type no plugin registers
(``op-known``), an IR attribute the op does not declare (``attr-known``), a
port it does not have (``port-known``), an input wired to no node
(``port-producer``), an unknown axis (``axis-known``), a size text the size
grammar refuses (``size-expression``).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from af_core import dtypes as dt
from af_core.errors import GraphFormatError
from af_core.ir.sizes import MAX_LITERAL, MAX_TEXT
from af_core.naming import printable

#: The ``format`` of the files this reader reads.
FORMAT = "af-hintgraph/1"
INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
#: Deepest nesting of lists and objects inside a value of ``attrs``.
MAX_NESTING = 32

#: op type -> {IR attribute name: kind} of the op, or None for an op type no plugin registers.
AttrKinds = Callable[[str], Mapping[str, str] | None]


class Constant:
    """A ``NaN``, ``Infinity`` or ``-Infinity`` of the text (no JSON number): :func:`check` refuses it."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


class DuplicateKeys(dict[str, Any]):
    """An object of the text that gives some keys more than once (the last value of each is kept)."""

    __slots__ = ("duplicates",)

    def __init__(self, pairs: list[tuple[str, Any]], duplicates: tuple[str, ...]) -> None:
        super().__init__(pairs)
        self.duplicates = duplicates


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    seen: set[str] = set()
    twice: list[str] = []
    for key, _ in pairs:
        if key in seen and key not in twice:
            twice.append(key)
        seen.add(key)
    return DuplicateKeys(pairs, tuple(twice))


def loads(text: str) -> Any:
    """Parse the text of a graph file, keeping what :func:`check` refuses and ``json`` would hide.

    A key given twice in one object makes a :class:`DuplicateKeys`, and
    ``NaN``, ``Infinity`` and ``-Infinity`` a :class:`Constant`. Text that is
    not JSON raises ``json.JSONDecodeError`` (a ValueError).
    """
    return json.loads(text, object_pairs_hook=_object, parse_constant=Constant)


def describe(value: Any) -> str:
    """How an error message shows a value it did not expect (user text through :func:`printable`)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "the bool true" if value else "the bool false"
    if isinstance(value, int):  # str() of a huge int raises, and would be too long to show
        return (
            f"the integer {value}"
            if value.bit_length() <= 128
            else f"an integer of {value.bit_length()} bits"
        )
    if isinstance(value, float):
        return f"the number {value!r}" + ("" if math.isfinite(value) else ", which is not finite")
    if isinstance(value, str):
        return f"the string '{printable(value, 60)}'"
    if isinstance(value, list):
        return f"a list of {len(value)} item{'' if len(value) == 1 else 's'}"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, Constant):
        return f"{value.text}, which is not a JSON number"
    return f"a Python {type(value).__name__}, which is no JSON value"


@dataclass(frozen=True)
class _At:
    """Where a value is: its node, else its owner (``size 's0'``, ``graph``), and the field path inside."""

    node: str | None
    owner: str
    field: str
    lookup: AttrKinds | None
    kinds: Mapping[str, str] | None = None  # the IR attribute kinds of the node's op, once known

    def key(self, name: str) -> _At:
        return replace(self, field=f"{self.field}.{name}" if self.field else name)

    def index(self, i: int) -> _At:
        return replace(self, field=f"{self.field}[{i}]")

    def error(self, rule: str, detail: str) -> GraphFormatError:
        return GraphFormatError(rule, detail, field=self.field, node=self.node, owner=self.owner)


def _no_duplicates(value: dict[str, Any], at: _At) -> None:
    if isinstance(value, DuplicateKeys):
        key = printable(value.duplicates[0], 60)
        raise at.error("json-duplicate-key", f"key '{key}' is given more than once in one object")


class Type:
    """A JSON type of the table: what it accepts (:meth:`check`) and its JSON Schema (:meth:`schema`)."""

    #: what a message says is expected: "an integer", "a list of size expressions"
    expects = "a JSON value"

    def check(self, value: Any, at: _At, nullable: bool = False) -> None:
        """Raise a GraphFormatError at ``at`` unless ``value`` has this type (or is null when ``nullable``)."""
        if isinstance(value, Constant) or (isinstance(value, float) and not math.isfinite(value)):
            raise at.error("json-finite", f"expects {self.wanted(nullable)}, got {describe(value)}")
        self._check(value, at, nullable)

    def wanted(self, nullable: bool) -> str:
        return self.expects + (" or null" if nullable else "")

    def wrong(self, value: Any, at: _At, nullable: bool) -> GraphFormatError:
        return at.error("json-type", f"expects {self.wanted(nullable)}, got {describe(value)}")

    def _check(self, value: Any, at: _At, nullable: bool) -> None:
        raise NotImplementedError

    def schema(self, defs: dict[str, Any]) -> dict[str, Any]:
        """The JSON Schema of the type; named parts go to ``defs`` and are referred to."""
        raise NotImplementedError

    def limits(self) -> str:
        """The limits of the type in words, for the field reference ("" when none)."""
        return ""


class String(Type):
    def __init__(
        self,
        *,
        const: str | None = None,
        enum: tuple[str, ...] = (),
        enum_rule: str = "json-type",
        identifier: bool = False,
    ) -> None:
        self.const = const
        self.enum = enum
        self.enum_rule = enum_rule
        self.identifier = identifier
        self.expects = f"the string '{const}'" if const is not None else "a string"

    def _check(self, value: Any, at: _At, nullable: bool) -> None:
        if not isinstance(value, str):
            raise self.wrong(value, at, nullable)
        if self.const is not None and value != self.const:
            raise at.error(self.enum_rule, f"expects '{self.const}', got {describe(value)}")
        if self.enum and value not in self.enum:
            raise at.error(self.enum_rule, f"expects one of {', '.join(self.enum)}, got {describe(value)}")
        if self.identifier and not value.isidentifier():
            raise at.error(
                "size-name",
                f"expects an identifier (letters, digits and _, not starting with a digit), got {describe(value)}",
            )

    def schema(self, defs: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "string"}
        if self.const is not None:
            out["const"] = self.const
        if self.enum:
            out["enum"] = list(self.enum)
        return out

    def limits(self) -> str:
        if self.enum:
            return "one of " + ", ".join(f"`{v}`" for v in self.enum)
        if self.identifier:
            return "an identifier (Python's `str.isidentifier()`: letters, digits and `_`, no leading digit)"
        return ""


class Integer(Type):
    expects = "an integer"

    def __init__(self, minimum: int, maximum: int) -> None:
        self.minimum = minimum
        self.maximum = maximum

    def _check(self, value: Any, at: _At, nullable: bool) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.wrong(value, at, nullable)
        if not self.minimum <= value <= self.maximum:
            raise at.error(
                "json-range",
                f"expects an integer from {self.minimum} to {self.maximum}"
                f"{' or null' if nullable else ''}, got {describe(value)}",
            )

    def schema(self, defs: dict[str, Any]) -> dict[str, Any]:
        return {"type": "integer", "minimum": self.minimum, "maximum": self.maximum}

    def limits(self) -> str:
        return f"from {self.minimum} to {self.maximum}"


class Number(Type):
    expects = "a number"

    def _check(self, value: Any, at: _At, nullable: bool) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.wrong(value, at, nullable)
        if isinstance(value, int) and abs(value) > sys.float_info.max:
            raise at.error("json-range", f"expects a number a float can hold, got {describe(value)}")

    def schema(self, defs: dict[str, Any]) -> dict[str, Any]:
        return {"type": "number"}

    def limits(self) -> str:
        return "finite, within the range of a 64-bit float"


class Bool(Type):
    expects = "a bool (true or false)"

    def _check(self, value: Any, at: _At, nullable: bool) -> None:
        if not isinstance(value, bool):
            raise self.wrong(value, at, nullable)

    def schema(self, defs: dict[str, Any]) -> dict[str, Any]:
        return {"type": "boolean"}


class SizeExpr(Type):
    """A size expression: a text in the size grammar (:func:`af_core.ir.sizes.parse`) or an integer."""

    expects = "a size expression (a text such as 's0*s1' or an integer)"

    def _check(self, value: Any, at: _At, nullable: bool) -> None:
        if isinstance(value, str):
            if len(value) > MAX_TEXT:
                raise at.error(
                    "json-range",
                    f"expects a size expression of at most {MAX_TEXT} characters, got a text of {len(value)}",
                )
            return
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.wrong(value, at, nullable)
        if abs(value) > MAX_LITERAL:
            raise at.error(
                "json-range",
                f"expects an integer from -{MAX_LITERAL} to {MAX_LITERAL}, got {describe(value)}",
            )

    def schema(self, defs: dict[str, Any]) -> dict[str, Any]:
        defs["sizeExpression"] = {
            "description": "A size expression: a text in the size grammar (integers, size names, + - * /, "
            "parentheses, Max, Min, Mod, floor, ceiling), or an integer.",
            "anyOf": [
                {"type": "string", "maxLength": MAX_TEXT},
                {"type": "integer", "minimum": -MAX_LITERAL, "maximum": MAX_LITERAL},
            ],
        }
        return {"$ref": "#/$defs/sizeExpression"}

    def limits(self) -> str:
        return f"a text of at most {MAX_TEXT} characters, or an integer from -(2^63-1) to 2^63-1"


class ListOf(Type):
    def __init__(self, item: Type, expects: str, *, unique: str = "") -> None:
        self.item = item
        self.expects = expects
        self.unique = unique  # the rule broken by two items with one "name", "" when names may repeat

    def _check(self, value: Any, at: _At, nullable: bool) -> None:
        if not isinstance(value, list):
            raise self.wrong(value, at, nullable)
        seen: dict[str, int] = {}
        for i, item in enumerate(value):
            self.item.check(item, at.index(i))
            if self.unique and isinstance(self.item, Record):
                name = item["name"]
                if name in seen:
                    where = self.item.located(item, at.index(i)).key("name")
                    raise where.error(
                        self.unique, f"{at.field}[{seen[name]}] has this name too; names are unique"
                    )
                seen[name] = i

    def schema(self, defs: dict[str, Any]) -> dict[str, Any]:
        return {"type": "array", "items": self.item.schema(defs)}

    def limits(self) -> str:
        if self.unique:
            return "names unique"
        item = self.item.limits()
        return f"each {item}" if item else ""


class Map(Type):
    """An object whose keys are names of the user's choice (ports, attributes) and values of one type."""

    def __init__(self, value: Type, expects: str) -> None:
        self.value = value
        self.expects = expects

    def _check(self, value: Any, at: _At, nullable: bool) -> None:
        if not isinstance(value, dict):
            raise self.wrong(value, at, nullable)
        _no_duplicates(value, at)
        for key, item in value.items():
            if not isinstance(key, str):
                raise at.error("json-type", f"expects string keys, got {describe(key)}")
            self.value_type(key, at).check(item, at.key(printable(key, 60)))

    def value_type(self, key: str, at: _At) -> Type:
        return self.value

    def schema(self, defs: dict[str, Any]) -> dict[str, Any]:
        return {"type": "object", "additionalProperties": self.value.schema(defs)}


class AttrValue(Type):
    """An IR attribute of an op the reader does not know yet: any value some attribute kind allows."""

    expects = "a bool, a number, a size expression or a list of integers"

    def _check(self, value: Any, at: _At, nullable: bool) -> None:
        if isinstance(value, bool):
            return
        if isinstance(value, (int, float)):
            NUMBER.check(value, at)
        elif isinstance(value, str):
            SIZE_EXPR.check(value, at)
        elif isinstance(value, list):
            INT_LIST.check(value, at)
        else:
            raise self.wrong(value, at, nullable)

    def schema(self, defs: dict[str, Any]) -> dict[str, Any]:
        return {"anyOf": [ATTR_KINDS[kind].schema(defs) for kind in ATTR_KINDS]}


class IrAttrs(Map):
    """``ir_attr``: each value has the type of its attribute's kind once the op is known."""

    def value_type(self, key: str, at: _At) -> Type:
        if at.kinds is not None and key in at.kinds and at.kinds[key] in ATTR_KINDS:
            return ATTR_KINDS[at.kinds[key]]
        return self.value  # an attribute the op does not declare: attr-known says so while building


class AnyJSON(Type):
    """Any JSON value: numbers finite, keys once per object, nested at most :data:`MAX_NESTING` deep."""

    expects = "a JSON value"

    def _check(self, value: Any, at: _At, nullable: bool) -> None:
        stack = [(value, at, 0)]
        while stack:
            item, where, depth = stack.pop()
            if isinstance(item, Constant) or (isinstance(item, float) and not math.isfinite(item)):
                raise where.error("json-finite", f"expects a finite number, got {describe(item)}")
            if depth > MAX_NESTING:
                raise where.error("json-range", f"nests lists and objects more than {MAX_NESTING} deep")
            if isinstance(item, dict):
                _no_duplicates(item, where)
                for key, sub in item.items():
                    if not isinstance(key, str):
                        raise where.error("json-type", f"expects string keys, got {describe(key)}")
                    stack.append((sub, where.key(printable(key, 60)), depth + 1))
            elif isinstance(item, list):
                stack.extend((sub, where.index(i), depth + 1) for i, sub in enumerate(item))
            elif item is not None and not isinstance(item, (bool, int, float, str)):
                raise where.error("json-type", f"expects {self.expects}, got {describe(item)}")

    def schema(self, defs: dict[str, Any]) -> dict[str, Any]:
        return {}

    def limits(self) -> str:
        return f"values nested at most {MAX_NESTING} deep"


@dataclass(frozen=True)
class Field:
    """One field of an object of the format."""

    name: str
    type: Type
    doc: str
    required: bool = False
    nullable: bool = False
    #: the rule of every error at this field itself (``format``: json-format), "" for the usual ones
    rule: str = ""


class Record(Type):
    """An object with the fields of the table and no others.

    ``label`` (``"size"``, ``"axis"``, ``"node"``) makes errors inside an
    item name it by its ``name`` instead of its place in the list;
    ``op_field`` is the field whose value is the op type that decides the
    kinds of ``ir_attr``.
    """

    def __init__(
        self, ref: str, what: str, doc: str, fields: tuple[Field, ...], *, label: str = "", op_field: str = ""
    ) -> None:
        self.ref = ref
        self.what = what
        self.doc = doc
        self.fields = fields
        self.label = label
        self.op_field = op_field
        self.expects = f"{what} (a JSON object)"
        self.names = tuple(f.name for f in fields)

    def located(self, value: dict[str, Any], at: _At) -> _At:
        """Where errors inside this object are: named by its ``name`` when it has a label and a name."""
        name = value.get("name")
        if not self.label or not isinstance(name, str):
            return at
        shown = printable(name)
        if self.label == "node":
            return _At(node=shown, owner="graph", field="", lookup=at.lookup)
        return _At(node=None, owner=f"{self.label} '{shown}'", field="", lookup=at.lookup)

    def _check(self, value: Any, at: _At, nullable: bool) -> None:
        if not isinstance(value, dict):
            raise self.wrong(value, at, nullable)
        at = self.located(value, at)
        _no_duplicates(value, at)
        for f in self.fields:
            where = at.key(f.name)
            if f.name not in value:
                if f.required:
                    raise where.error(
                        f.rule or "json-required", f"{self.what} needs this field ({f.type.expects})"
                    )
                continue
            item = value[f.name]
            if not (item is None and f.nullable):
                try:
                    f.type.check(item, where, f.nullable)
                except GraphFormatError as exc:
                    if not f.rule or exc.field != where.field:
                        raise
                    raise where.error(f.rule, exc.detail) from None
            if f.name == self.op_field and at.lookup is not None:
                at = replace(at, kinds=at.lookup(item))
        for key in value:
            if key not in self.names:
                raise at.key(printable(str(key), 60)).error(
                    "json-unknown-field",
                    f"{self.what} has no such field (its fields: {', '.join(self.names)})",
                )

    def schema(self, defs: dict[str, Any]) -> dict[str, Any]:
        defs[self.ref] = self.body(defs)
        return {"$ref": f"#/$defs/{self.ref}"}

    def body(self, defs: dict[str, Any]) -> dict[str, Any]:
        """The JSON Schema of the object itself (what :meth:`schema` refers to)."""
        properties: dict[str, Any] = {}
        for f in self.fields:
            schema = f.type.schema(defs)
            if f.nullable:
                schema = {"anyOf": [schema, {"type": "null"}]}
            limits = f.type.limits()
            properties[f.name] = {"description": f.doc + (f" Limits: {limits}." if limits else ""), **schema}
        return {
            "description": self.doc,
            "type": "object",
            "properties": properties,
            "required": [f.name for f in self.fields if f.required],
            "additionalProperties": False,
        }


INT64 = Integer(INT64_MIN, INT64_MAX)
NUMBER = Number()
SIZE_EXPR = SizeExpr()
INT_LIST = ListOf(INT64, "a list of integers")

#: The JSON type of an IR attribute of each kind (:data:`af_core.ops.opdef.ATTR_KINDS`).
ATTR_KINDS: dict[str, Type] = {
    "bool": Bool(),
    "int": INT64,
    "float": NUMBER,
    "expr": SIZE_EXPR,
    "int_list": INT_LIST,
}

AXIS_NAMES = ListOf(String(), "a list of axis names")

SIZE = Record(
    "size",
    "a size",
    "A dynamic size: a positive integer known when the kernel runs.",
    (
        Field(
            "name",
            String(identifier=True),
            "The size's name, used in size expressions and given a value by `--shape NAME=N`.",
            required=True,
        ),
        Field(
            "max",
            Integer(1, INT64_MAX),
            "The largest value the size takes; with every size of a tensor bounded, validation proves "
            "its byte offsets fit int64. null: no bound declared.",
            nullable=True,
        ),
    ),
    label="size",
)

AXIS = Record(
    "axis",
    "an axis",
    "A named loop axis and its size.",
    (
        Field("name", String(), "The axis's name, as `sched_axis` and `y.axis` give it.", required=True),
        Field("size", SIZE_EXPR, "How long the axis is.", required=True),
    ),
    label="axis",
)

TENSOR = Record(
    "tensor",
    "a node's output",
    "The output tensor of a node (`node.y`).",
    (
        Field("dtype", String(enum=dt.NAMES, enum_rule="dtype-known"), "Element type.", nullable=True),
        Field("axis", AXIS_NAMES, "The axes of the dimensions, outermost first.", nullable=True),
        Field(
            "size",
            ListOf(SIZE_EXPR, "a list of size expressions"),
            "Length of each dimension, outermost first.",
            nullable=True,
        ),
        Field(
            "strides",
            ListOf(SIZE_EXPR, "a list of size expressions"),
            "Elements between neighbours of each dimension; null: contiguous.",
            nullable=True,
        ),
    ),
)

NODE = Record(
    "node",
    "a node",
    "One op of the graph.",
    (
        Field("name", String(), "The node's name: any text, unique in the graph.", required=True),
        Field(
            "type",
            String(),
            "The op type (`Data`, `Load`, `IndirectLoad`, ...); a plugin registers it.",
            required=True,
        ),
        Field(
            "inputs",
            Map(String(), "an object of port names to node names"),
            "Each input port of the op wired to the node that produces it: port name -> node name.",
            nullable=True,
        ),
        Field(
            "ir_attr",
            IrAttrs(AttrValue(), "an object of attribute names to values"),
            "The op's IR attributes that differ from their defaults: name -> value, its type given by the "
            "attribute's kind (see the kinds table).",
            nullable=True,
        ),
        Field("sched_axis", AXIS_NAMES, "Scheduling hint: the loop axes of the node.", nullable=True),
        Field("y", TENSOR, "The node's output tensor.", nullable=True),
    ),
    label="node",
    op_field="type",
)

#: The table: a graph file is this object.
GRAPH = Record(
    "graph",
    "a graph",
    "A graph file of af: an ASCIR hint graph of gather / index_select / embedding ops.",
    (
        Field(
            "format",
            String(const=FORMAT),
            f"The format and its version; always `{FORMAT}`.",
            required=True,
            rule="json-format",
        ),
        Field("name", String(), "The graph's name: any text; the kernel is named after it.", required=True),
        Field(
            "sizes",
            ListOf(SIZE, "a list of sizes", unique="size-unique-name"),
            "The dynamic sizes, declared before the expressions that use them; none when left out.",
        ),
        Field(
            "axes",
            ListOf(AXIS, "a list of axes", unique="axis-unique-name"),
            "The loop axes; none when left out.",
        ),
        Field(
            "attrs",
            Map(AnyJSON(), "an object"),
            "Graph-level annotations (template metadata): name -> any JSON value.",
            nullable=True,
        ),
        Field(
            "nodes",
            ListOf(NODE, "a list of nodes", unique="node-unique-name"),
            "The ops; an input may name a node that comes later in the list. None when left out.",
        ),
    ),
)

#: Every object type of the format, in the order the field reference shows them.
RECORDS = (GRAPH, SIZE, AXIS, NODE, TENSOR)


def check(data: Any, attr_kinds: AttrKinds | None = None) -> None:
    """Check a parsed graph file against :data:`GRAPH`; raises GraphFormatError at the first broken rule.

    ``attr_kinds`` gives the IR attribute kinds of an op type, so that each
    ``ir_attr`` value is checked against its kind; without it (or for an op
    no plugin registers) a value need only be of some kind.
    """
    if not isinstance(data, dict):
        raise GraphFormatError(
            "json-type", f"expects a graph (a JSON object), got {describe(data)}", field="", owner="graph"
        )
    GRAPH.check(data, _At(node=None, owner="graph", field="", lookup=attr_kinds))


def json_schema() -> dict[str, Any]:
    """The table as a JSON Schema (draft 2020-12), what ``graph.schema.json`` holds."""
    defs: dict[str, Any] = {}
    body = GRAPH.body(defs)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"af graph file ({FORMAT})",
        **body,
        "$defs": {name: defs[name] for name in sorted(defs)},
    }


def json_schema_text() -> str:
    """The text of ``graph.schema.json``: :func:`json_schema`, indented, with a final newline."""
    return json.dumps(json_schema(), indent=2) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def field_reference() -> str:
    """The field tables of docs/graph-format.md (Markdown), one per object type, and the attribute kinds."""
    lines: list[str] = []
    for record in RECORDS:
        where = "the top-level object" if record is GRAPH else f"`#/$defs/{record.ref}` in the JSON Schema"
        lines += [f"### {record.what[0].upper()}{record.what[1:]} ({where})", "", record.doc, ""]
        lines += ["| field | type | required | meaning | limits |", "| --- | --- | --- | --- | --- |"]
        for f in record.fields:
            wanted = f.type.wanted(f.nullable)
            lines.append(
                f"| `{f.name}` | {_cell(wanted)} | {'yes' if f.required else 'no'} | {_cell(f.doc)} "
                f"| {_cell(f.type.limits()) or '-'} |"
            )
        lines.append("")
    lines += ["### IR attribute kinds", "", "| kind | JSON value | limits |", "| --- | --- | --- |"]
    for kind, typ in ATTR_KINDS.items():
        lines.append(f"| `{kind}` | {_cell(typ.expects)} | {_cell(typ.limits()) or '-'} |")
    return "\n".join(lines) + "\n"
