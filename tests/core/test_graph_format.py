"""The JSON graph reader checks every field against the format's table (af_core/ir/schema.py).

Each finding below used to be read without a word (a string taken as a
list, an int as a bool, a repeated size, a negative or infinite maximum,
attrs as a list, a key given twice, NaN); each rule of the table has a case
that breaks it and the message that names the place; files that fit the
format keep loading.
"""

from __future__ import annotations

import json

import pytest

from af_core.cli import main
from af_core.errors import AscirError, GraphFormatError
from af_core.graph_files import load_graph
from af_core.ir.serialize import from_json, graph_from_dict, to_json
from af_core.ir.validate import validate
from af_core.registry import registry_ops
from af_core.samples import seed_minimal
from af_core.testing import seed_style_gather


def base() -> dict:
    return json.loads(to_json(seed_style_gather()))


def node(data: dict, name: str) -> dict:
    (found,) = [n for n in data["nodes"] if n["name"] == name]
    return found


def refused(text: str) -> GraphFormatError:
    with pytest.raises(GraphFormatError) as info:
        from_json(text, registry_ops())
    return info.value


# -- the findings -----------------------------------------------------------------------------------


def test_a_string_where_a_list_is_expected_is_refused_not_split_into_characters():
    data = base()
    node(data, "x")["y"]["size"] = "B18"
    exc = refused(json.dumps(data))
    assert str(exc) == (
        "node 'x' field 'y.size': rule 'json-type': "
        "expects a list of size expressions or null, got the string 'B18'"
    )
    assert (exc.rule, exc.node, exc.field) == ("json-type", "x", "y.size")


@pytest.mark.parametrize(
    "attr, value, expects",
    [
        ("need_check_negative", 1, "expects a bool (true or false), got the integer 1"),
        ("need_check_bound", 0, "expects a bool (true or false), got the integer 0"),
        ("dim", True, "expects an integer, got the bool true"),
        ("dim", 2.0, "expects an integer, got the number 2.0"),
        ("dim", "2", "expects an integer, got the string '2'"),
    ],
)
def test_no_int_as_bool_and_no_bool_as_int(attr, value, expects):
    data = base()
    node(data, "indirect_load")["ir_attr"][attr] = value
    exc = refused(json.dumps(data))
    assert str(exc) == f"node 'indirect_load' field 'ir_attr.{attr}': rule 'json-type': {expects}"


@pytest.mark.parametrize(
    "where, value",
    [("max", True), ("max", False), ("index", True)],
)
def test_a_bool_is_no_integer_anywhere(where, value):
    data = base()
    if where == "max":
        data["sizes"][0]["max"] = value
        expected = "size 's0' field 'max'"
    else:
        node(data, "x")["ir_attr"]["index"] = value
        expected = "node 'x' field 'ir_attr.index'"
    assert str(refused(json.dumps(data))).startswith(f"{expected}: rule 'json-type': ")


def test_duplicate_size_names_are_refused():
    data = base()
    data["sizes"].append({"name": "s1", "max": 8})
    exc = refused(json.dumps(data))
    assert str(exc) == (
        "size 's1' field 'name': rule 'size-unique-name': sizes[1] has this name too; names are unique"
    )


@pytest.mark.parametrize(
    "literal, rule, got",
    [
        ("-1", "json-range", "got the integer -1"),
        ("0", "json-range", "got the integer 0"),
        ("9223372036854775808", "json-range", "got the integer 9223372036854775808"),
        ("1e400", "json-finite", "got the number inf, which is not finite"),
        ("-1e400", "json-finite", "got the number -inf, which is not finite"),
        ("NaN", "json-finite", "got NaN, which is not a JSON number"),
        ("Infinity", "json-finite", "got Infinity, which is not a JSON number"),
        ("-Infinity", "json-finite", "got -Infinity, which is not a JSON number"),
        ("4.5", "json-type", "got the number 4.5"),
    ],
)
def test_size_maxima_are_positive_finite_int64(literal, rule, got):
    text = to_json(seed_style_gather()).replace('"max": null', f'"max": {literal}', 1)
    exc = refused(text)
    assert str(exc).startswith(f"size 's0' field 'max': rule '{rule}': expects ")
    assert str(exc).endswith(got)


@pytest.mark.parametrize("attrs", [[], [["a", 1]], "a", 1, True])
def test_attrs_must_be_an_object(attrs):
    data = base()
    data["attrs"] = attrs
    exc = refused(json.dumps(data))
    assert str(exc).startswith("graph field 'attrs': rule 'json-type': expects an object or null, got ")


@pytest.mark.parametrize(
    "old, new, where",
    [
        ('"name": "gather_graph"', '"name": "gather_graph", "name": "other"', "graph"),
        ('"dim": 2', '"dim": 2, "dim": 3', "node 'indirect_load' field 'ir_attr'"),
        ('"name": "s3",', '"name": "s3", "max": 4,', "size 's3'"),
        ('"attrs": {}', '"attrs": {"a": {"k": 1, "k": 2}}', "graph field 'attrs.a'"),
        ('"x1": "input_load"', '"x1": "input_load", "x1": "x"', "node 'indirect_load' field 'inputs'"),
    ],
)
def test_a_key_given_twice_in_one_object_is_refused(old, new, where):
    text = to_json(seed_style_gather())
    assert old in text
    exc = refused(text.replace(old, new, 1))
    assert str(exc).startswith(f"{where}: rule 'json-duplicate-key': key '")
    assert "is given more than once in one object" in str(exc)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_literals_are_refused_wherever_they_are(literal):
    text = to_json(seed_style_gather()).replace('"attrs": {}', f'"attrs": {{"t": [1, {literal}]}}')
    exc = refused(text)
    assert str(exc) == (
        f"graph field 'attrs.t[1]': rule 'json-finite': expects a finite number, "
        f"got {literal}, which is not a JSON number"
    )


def test_graph_files_report_the_same_errors(tmp_path, capsys):
    data = base()
    node(data, "x")["y"]["size"] = "B18"
    path = tmp_path / "g.json"
    path.write_text(json.dumps(data))
    with pytest.raises(GraphFormatError, match=r"node 'x' field 'y\.size': rule 'json-type'"):
        load_graph(path)
    path.write_text(to_json(seed_style_gather()).replace('"max": null', '"max": NaN', 1))
    assert main(["compile", str(path), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err == (
        "afc: error: size 's0' field 'max': rule 'json-finite': "
        "expects an integer or null, got NaN, which is not a JSON number\n"
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "field, values, rule",
    [
        ("size", ["", "s1", "s2", "s3"], "size-expression"),
        ("strides", ["s0 +* 1", 1, 1, 1], "strides-expression"),
        ("size", ["s0", "s1", "s2", "Max()"], "size-expression"),
    ],
)
def test_a_tensor_size_text_the_grammar_refuses_names_the_node(field, values, rule):
    data = base()
    node(data, "x")["y"][field] = values
    with pytest.raises(AscirError) as info:
        from_json(json.dumps(data), registry_ops())
    assert str(info.value).startswith(f"node 'x' port 'y': rule '{rule}': y.{field} holds something")


# -- one case per rule -------------------------------------------------------------------------------


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def _at(data: dict, *path: object) -> dict:
    for key in path:
        data = node(data, key[1:]) if isinstance(key, str) and key.startswith("@") else data[key]
    return data


RULE_CASES = [
    # (rule, mutation on the dict, expected start of the message)
    ("json-format", lambda d: d.update(format="af-hintgraph/2"), "graph field 'format'"),
    ("json-format", lambda d: d.pop("format"), "graph field 'format'"),
    ("json-format", lambda d: d.update(format=1), "graph field 'format'"),
    ("json-type", lambda d: d.update(name=5), "graph field 'name'"),
    ("json-type", lambda d: d.update(sizes={"s0": None}), "graph field 'sizes'"),
    ("json-type", lambda d: d.update(nodes="x"), "graph field 'nodes'"),
    ("json-type", lambda d: d["nodes"].__setitem__(0, "x"), "graph field 'nodes[0]'"),
    (
        "json-type",
        lambda d: _at(d, "@indirect_load", "inputs").update(x1=3),
        "node 'indirect_load' field 'inputs.x1'",
    ),
    ("json-type", lambda d: _at(d, "@store").update(sched_axis="z4"), "node 'store' field 'sched_axis'"),
    ("json-type", lambda d: _at(d, "@store", "y").update(dtype=3), "node 'store' field 'y.dtype'"),
    ("json-type", lambda d: _at(d, "@store", "y").update(axis=[0]), "node 'store' field 'y.axis[0]'"),
    ("json-type", lambda d: _at(d, "@store", "y").update(strides=[1.5]), "node 'store' field 'y.strides[0]'"),
    ("json-type", lambda d: _at(d, "axes", 1).update(size=None), "axis 'z1' field 'size'"),
    ("json-type", lambda d: _at(d, "sizes", 2).update(max="10"), "size 's2' field 'max'"),
    ("json-type", lambda d: _at(d, "@y").update(y=[]), "node 'y' field 'y'"),
    ("json-type", lambda d: _at(d, "@x").update(ir_attr={"index": None}), "node 'x' field 'ir_attr.index'"),
    ("json-required", lambda d: d.pop("name"), "graph field 'name'"),
    ("json-required", lambda d: _at(d, "@store").pop("type"), "node 'store' field 'type'"),
    ("json-required", lambda d: _at(d, "nodes", 1).pop("name"), "graph field 'nodes[1].name'"),
    ("json-required", lambda d: _at(d, "sizes", 0).pop("name"), "graph field 'sizes[0].name'"),
    ("json-required", lambda d: _at(d, "axes", 3).pop("size"), "axis 'z3' field 'size'"),
    ("json-unknown-field", lambda d: d.update(extra=1), "graph field 'extra'"),
    ("json-unknown-field", lambda d: _at(d, "@store").update(colour="red"), "node 'store' field 'colour'"),
    ("json-unknown-field", lambda d: _at(d, "@store", "y").update(shape=[1]), "node 'store' field 'y.shape'"),
    ("json-unknown-field", lambda d: _at(d, "sizes", 1).update(min=1), "size 's1' field 'min'"),
    ("json-range", lambda d: _at(d, "sizes", 1).update(max=-1), "size 's1' field 'max'"),
    (
        "json-range",
        lambda d: _at(d, "@indirect_load", "ir_attr").update(dim=1 << 63),
        "node 'indirect_load' field 'ir_attr.dim'",
    ),
    ("json-range", lambda d: _at(d, "axes", 0).update(size="s0+" * 2000), "axis 'z0' field 'size'"),
    ("json-range", lambda d: _at(d, "@x", "y").update(size=[-(1 << 63)]), "node 'x' field 'y.size[0]'"),
    ("json-range", lambda d: d.update(attrs={"deep": _nested(40)}), "graph field 'attrs.deep[0][0]"),
    ("json-finite", lambda d: _at(d, "sizes", 1).update(max=float("inf")), "size 's1' field 'max'"),
    ("json-finite", lambda d: d.update(attrs={"f": float("nan")}), "graph field 'attrs.f'"),
    ("json-finite", lambda d: _at(d, "@x", "y").update(size=[float("-inf")]), "node 'x' field 'y.size[0]'"),
    ("size-name", lambda d: _at(d, "sizes", 1).update(name="1x"), "size '1x' field 'name'"),
    ("size-name", lambda d: _at(d, "sizes", 1).update(name="a-b"), "size 'a-b' field 'name'"),
    ("size-unique-name", lambda d: d["sizes"].append({"name": "s7"}), "size 's7' field 'name'"),
    ("axis-unique-name", lambda d: d["axes"].append({"name": "z0", "size": "s0"}), "axis 'z0' field 'name'"),
    ("node-unique-name", lambda d: d["nodes"].append(dict(_at(d, "@y"))), "node 'y' field 'name'"),
    (
        "dtype-known",
        lambda d: _at(d, "@store", "y").update(dtype="complex64"),
        "node 'store' field 'y.dtype'",
    ),
    ("size-expression", lambda d: _at(d, "axes", 2).update(size="s2 +* 1"), "axis 'z2' field 'size'"),
]


@pytest.mark.parametrize(
    "rule, mutation, where", RULE_CASES, ids=[f"{r}-{i}" for i, (r, _, _) in enumerate(RULE_CASES)]
)
def test_each_rule_names_the_place_and_the_rule(rule, mutation, where):
    data = base()
    mutation(data)
    with pytest.raises(GraphFormatError) as info:
        graph_from_dict(data, registry_ops())
    exc = info.value
    assert exc.rule == rule, str(exc)
    assert str(exc).startswith(where), str(exc)
    assert f": rule '{rule}': " in str(exc)
    with pytest.raises(GraphFormatError) as again:  # the same place and rule through the text
        from_json(json.dumps(data), registry_ops())
    assert str(again.value).split(": ")[:2] == str(exc).split(": ")[:2]


def test_every_rule_of_the_format_has_a_case():
    from af_core.ir import schema

    rules = {line.split("``")[1] for line in schema.__doc__.splitlines() if line.startswith("- ``")}
    rules |= {"size-unique-name", "axis-unique-name", "node-unique-name"}
    # a key given twice exists only in text: test_a_key_given_twice_in_one_object_is_refused
    assert rules - {"json-duplicate-key"} <= {rule for rule, _, _ in RULE_CASES}


def test_the_top_level_must_be_an_object():
    for text in ("[]", "1", '"graph"', "null", "true"):
        exc = refused(text)
        assert str(exc).startswith("graph: rule 'json-type': expects a graph (a JSON object), got ")


def test_hostile_names_in_messages_are_printable_and_bounded():
    data = base()
    data["sizes"][0]["name"] = "a\nb\u202e" + "x" * 500
    exc = refused(json.dumps(data))
    text = str(exc)
    assert text.isprintable() and text.isascii() and len(text) < 400
    assert text.startswith("size 'a\\u000ab\\u202e") and "rule 'size-name'" in text


# -- what fits the format keeps loading ----------------------------------------------------------------


@pytest.mark.parametrize("build", [seed_minimal, seed_style_gather])
def test_written_graphs_read_back(build):
    text = to_json(build())
    assert to_json(from_json(text, registry_ops())) == text


def test_optional_fields_may_be_left_out_or_null_and_aliases_and_integers_are_kept():
    data = base()
    data.pop("attrs")
    data["sizes"][0].pop("max")
    data["sizes"][1]["max"] = 1 << 20
    data["axes"][4]["size"] = "s4"
    for item in data["nodes"]:
        item.pop("sched_axis")
        if item["name"] == "y":
            item.update(inputs={"x": "store"}, y=None)
        if item["name"] == "x":
            item["y"].update(dtype="half", size=["s0", "s1", "s2", 4], strides=["s1*s2*4", "s2*4", 4, 1])
        if item["name"] == "input_load":
            item["y"].update(strides=None, size=["s0", "s1", "s2", 4])
    data["sizes"] = [s for s in data["sizes"] if s["name"] != "s3"]
    data["axes"][3]["size"] = 4
    data["attrs"] = {"note": "made by hand", "n": [1, 2.5, None, True, {"k": "v"}]}
    graph = graph_from_dict(data, registry_ops())
    validate(graph)
    assert graph.node("x").y.dtype.name == "float16"
    assert graph.size_var("s1").max_value == 1 << 20 and graph.size_var("s0").max_value is None
    assert graph.attrs["n"][4] == {"k": "v"}


def test_an_integer_too_long_to_print_is_described_by_its_size():
    data = base()
    data["sizes"][0]["max"] = 10**5000
    with pytest.raises(
        GraphFormatError, match=r"size 's0' field 'max': rule 'json-range': .*an integer of 16610 bits"
    ):
        graph_from_dict(data, registry_ops())


def test_a_python_dict_with_non_json_values_is_refused():
    data = base()
    data["attrs"] = {"s": {1, 2}}
    with pytest.raises(GraphFormatError, match=r"graph field 'attrs\.s': rule 'json-type': .*Python set"):
        graph_from_dict(data, registry_ops())
    data = base()
    node(data, "x")["y"]["size"] = ("s0", "s1", "s2", "s3")
    with pytest.raises(AscirError, match=r"node 'x' field 'y\.size': rule 'json-type'"):
        graph_from_dict(data, registry_ops())
