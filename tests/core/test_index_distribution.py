"""Index distributions are parsed before anything is drawn: a bad name is an error naming it, never uniform."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from af_core.errors import UsageError
from af_core.index_distribution import DistributionKind, IndexDistribution, parse_distribution
from af_core.inputs import _DRAW, make_inputs
from af_core.samples import index_select_sum
from af_core.workloads import corpus_text, load_workloads

SIZES = {"N": 50, "H": 8, "K": 64}
GOOD = [
    "uniform",
    "zipf",
    "zipf1.1",
    "zipf2",
    "unique",
    "unique_per_row",
    "repeat",
    "repeat4",
    "duplicates",
    "with_negative",
]


@pytest.mark.parametrize("name", GOOD)
def test_every_corpus_form_parses_and_names_itself_back(name):
    parsed = parse_distribution(name)
    assert parse_distribution(parsed.name) == parsed
    assert parsed.name.startswith(parsed.kind.value)


def test_parameters_and_their_defaults():
    assert parse_distribution("zipf") == IndexDistribution(DistributionKind.ZIPF, alpha=1.1)
    assert parse_distribution("zipf1.5").alpha == 1.5
    assert parse_distribution("repeat") == IndexDistribution(DistributionKind.REPEAT, repeat=2)
    assert parse_distribution("repeat7").repeat == 7


@pytest.mark.parametrize(
    ("name", "rule"),
    [
        ("no such", "unknown name"),
        ("Uniform", "unknown name"),
        ("zipf_1.2", "plain decimal number"),
        ("zipf1", "alpha must be above 1"),
        ("zipf0.5", "alpha must be above 1"),
        ("zipf" + "9" * 400, "alpha must be above 1"),
        ("zipfnan", "plain decimal number"),
        ("repeat0", "at least 1"),
        ("repeat2.5", "whole number"),
        ("repeat-3", "plain decimal number"),
        ("", "unknown name"),
    ],
)
def test_a_bad_name_is_refused_naming_it_and_the_rule(name, rule):
    with pytest.raises(UsageError, match=rule) as info:
        parse_distribution(name)
    assert "the forms are uniform, zipf<alpha>" in str(info.value)


def test_a_hostile_name_is_shown_printable_and_short():
    with pytest.raises(UsageError) as info:
        parse_distribution("\x1b[31m" + "x" * 500)
    text = str(info.value)
    assert "\x1b" not in text and len(text) < 400


def test_a_name_that_is_not_text_is_refused():
    with pytest.raises(UsageError, match="not int"):
        parse_distribution(3)  # type: ignore[arg-type]


@given(st.text(max_size=30))
def test_any_text_parses_or_is_a_usage_error(text):
    try:
        parsed = parse_distribution(text)
    except UsageError:
        return
    assert parse_distribution(parsed.name) == parsed


def test_every_kind_has_a_drawing_function():
    assert set(_DRAW) == set(DistributionKind)


def test_make_inputs_refuses_an_unknown_distribution_before_drawing():
    with pytest.raises(UsageError, match="'zipf_1.2'"):
        make_inputs(index_select_sum(), SIZES, distribution="zipf_1.2")


@pytest.mark.parametrize("fraction", [-0.1, 1.5, float("nan")])
def test_make_inputs_refuses_an_out_of_range_fraction_outside_0_1(fraction):
    with pytest.raises(UsageError, match="0 .. 1"):
        make_inputs(index_select_sum(), SIZES, out_of_range=fraction)


@pytest.mark.parametrize("name", GOOD)
def test_a_parsed_distribution_draws_what_its_name_draws(name):
    graph = index_select_sum()
    by_name = make_inputs(graph, SIZES, seed=4, distribution=name).storage["idx"]
    parsed = make_inputs(graph, SIZES, seed=4, distribution=parse_distribution(name)).storage["idx"]
    assert np.array_equal(by_name, parsed)


def test_repeat_draws_runs_of_its_count():
    idx = make_inputs(index_select_sum(), SIZES, seed=3, distribution="repeat4").storage["idx"]
    assert (idx.reshape(16, 4) == idx.reshape(16, 4)[:, :1]).all()


def test_a_workload_with_a_bad_distribution_fails_at_load_naming_the_workload(tmp_path):
    data = json.loads(corpus_text())
    case = data["cases"][0]
    case["index"]["distribution"] = "zipfian"
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps({**data, "cases": [case]}), encoding="utf-8")
    with pytest.raises(UsageError, match=f"workload '{case['name']}': index.distribution: .*'zipfian'"):
        load_workloads(path)


def test_every_shipped_workload_distribution_parses():
    pytest.importorskip("af_elementwise", reason="the corpus graphs use the elementwise plugin's ops")
    for workload in load_workloads():
        assert parse_distribution(workload.distribution).name.startswith(workload.distribution[:4])
