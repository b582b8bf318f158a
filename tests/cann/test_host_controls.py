"""Controls of the host check itself.

A hand-written operator (tiling, TilingParse with the platform queries,
infer-shape, infer-datatype, OpDef registration) passes against the CANN
host headers; each known-wrong variant fails, with its error located in the
probe file, at the line of the wrong statement.
"""

from __future__ import annotations

import re

import pytest
from host_probe import HOST, MACRO_TILING, TILING_HEADER, host_probe, mutated, probe_files

from af_core.cann import HostChecker

#: name -> (text in the probe, its replacement, where the error is (None: the replaced line), message)
WRONG = {
    "set_block_dim_string": (
        "context->SetBlockDim(info->coreNum);",
        'context->SetBlockDim("x");',
        None,
        r"invalid conversion from .const char\*",
    ),
    "no_such_method": (
        "context->SetBlockDim(info->coreNum);",
        "context->SetBlockNum(info->coreNum);",
        None,
        r"has no member named .SetBlockNum",
    ),
    "set_tiling_key_two_arguments": (
        "context->SetTilingKey(1);",
        "context->SetTilingKey(1, 2);",
        None,
        r"no matching function for call to .gert::TilingContext::SetTilingKey\(int, int\)",
    ),
    "undeclared_param_type": (
        'this->Input("x").ParamType(REQUIRED)',
        'this->Input("x").ParamType(MANDATORY)',
        None,
        r".MANDATORY. was not declared",
    ),
    "no_op_def_header": (
        '#include "register/op_def_registry.h"\n',
        "",
        "class AfProbe : public OpDef",
        r"expected class-name",
    ),
    "no_registration_headers": (
        '#include "register/op_def_registry.h"\n#include "register/op_impl_registry.h"\n',
        "",
        "IMPL_OP_OPTILING(AfProbe)",
        r"expected constructor, destructor, or type conversion",
    ),
}


def test_positive_control_passes(host_checker):
    result = host_checker.check(host_probe())
    assert result.ok, result.describe()
    assert [f.name for f in result.files] == [HOST]  # headers are not compiled on their own


@pytest.mark.parametrize("define", ["OP_TILING_LIB", "OP_PROTO_LIB"])
def test_positive_control_passes_in_the_other_op_add_forms(host_checker, define):
    result = host_checker.check(host_probe(), defines=[define])
    assert result.ok, result.describe()


@pytest.mark.parametrize("name", sorted(WRONG))
def test_wrong_host_code_fails_in_the_probe(host_checker, name):
    old, new, where, message = WRONG[name]
    files, line = mutated(host_probe(), HOST, old, new)
    if where is not None:
        line = files[HOST][: files[HOST].index(where)].count("\n") + 1
    result = host_checker.check(files)
    assert not result.ok
    errors = result.file(HOST).errors
    assert errors, result.describe()
    assert (errors[0].file, errors[0].origin) == (HOST, "source"), result.describe()
    at_line = [e for e in errors if e.file == HOST and e.line == line]
    assert any(re.search(message, e.message) for e in at_line), result.describe(limit=20)


def test_error_in_a_generated_header_is_located_there(host_checker):
    files, line = mutated(host_probe(), TILING_HEADER, "uint32_t tileLength;", "uint32_tt tileLength;")
    result = host_checker.check(files)
    first = result.file(HOST).first_error
    assert not result.ok and first is not None
    assert (first.file, first.line, first.origin) == (TILING_HEADER, line, "source"), result.describe()


def test_each_source_is_checked_on_its_own(host_checker):
    files = probe_files(HOST, TILING_HEADER, MACRO_TILING)
    result = host_checker.check(files)
    assert result.ok, result.describe()
    assert [f.name for f in result.files] == [HOST, MACRO_TILING]
    wrong, line = mutated(files, MACRO_TILING, "tiling.set_totalLength(", "tiling.set_total_length(")
    result = host_checker.check(wrong)
    assert result.file(HOST).ok
    failed = result.file(MACRO_TILING)
    assert [f.name for f in result.failures] == [MACRO_TILING]
    assert failed.first_error is not None
    assert (failed.first_error.file, failed.first_error.line) == (MACRO_TILING, line)
    assert "set_total_length" in failed.first_error.message


def test_verdicts_are_cached_by_content(host_headers, tmp_path):
    checker = HostChecker(host_headers, cache_dir=tmp_path)
    first = checker.check(host_probe())
    again = checker.check(host_probe())
    assert first.ok and again.ok
    assert (first.cached, again.cached) == (False, True)
    assert again.key == first.key and again.files == first.files
    changed, _ = mutated(host_probe(), HOST, "context->SetTilingKey(1);", "context->SetTilingKey(2);")
    assert checker.key(changed) != first.key
    assert checker.key(host_probe(), defines=["OP_TILING_LIB"]) != first.key
