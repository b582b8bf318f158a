"""Every kernel of the broad set (kernel_set.py) type-checks against the official headers.

The selected kernels are generated and checked once per test run, two g++ at a
time; each test then reads its own verdict, so every failing kernel is named.
KNOWN_FAILING lists the kernels that fail today with their first error; they
are strict xfails: fixing one turns its test red until its entry is removed.
No kernel, failing or not, may fail in our stand-ins (that would be a gap of
the check, not of the kernel).
"""

from __future__ import annotations

import pytest
from kernel_set import kernel_cases

from af_core.autofuser import Autofuser
from af_core.platform import reset_platform

CASES = {c.name: c for c in kernel_cases()}

# First errors (paths relative to the asc-devkit tree). The SIMT one hides a second error behind it:
# GlobalTensor::GetPhyAddr() returns `const __gm__ T*` (include/basic_api/kernel_tensor.h) and the SIMT
# entry's parameters are non-const (the official simt_stub.h reports "invalid conversion from
# 'const T*' to 'T*'" once LAUNCH_BOUND is replaced by __launch_bounds__).
SIMT = ("kernel.cpp: error: expected constructor, destructor, or type conversion before '(' token "
        "(LAUNCH_BOUND is no AscendC macro; the headers know __launch_bounds__)")
ABS = ("impl/basic_api/dav_3510/kernel_operator_vec_unary_impl.h:597:72: error: static assertion failed: "
       "current data type is not supported on current device! (Abs on bfloat16)")
RELU = ("impl/basic_api/dav_3510/kernel_operator_vec_unary_impl.h:719:55: error: static assertion failed: "
        "current data type is not supported on current device! (Relu on int16)")
MUL = ("impl/basic_api/dav_3510/kernel_operator_vec_binary_continuous_impl.h:121:23: error: static assertion "
       "failed: current data type is not supported on current device! (Mul on int8/uint8)")
ADDS = ("impl/basic_api/dav_3510/kernel_operator_vec_binary_scalar_impl.h:246:116: error: static assertion failed: "
        "Adds not support current datatype! (uint16/uint32)")
MULS = ("impl/basic_api/dav_3510/kernel_operator_vec_binary_scalar_impl.h:300:108: error: static assertion failed: "
        "Muls not support current datatype! (int8/uint8/uint16/uint32)")
REDUCESUM = ("impl/basic_api/dav_3510/kernel_operator_vec_reduce_impl.h:739:75: error: static assertion failed: "
             "The data type is not supported by ReduceSum. (int8/uint8/int16/uint16)")

#: kernel name -> the first error it fails with today; remove an entry once its kernel passes
KNOWN_FAILING: dict[str, str] = {
}


def _generate(name: str) -> str:
    case = CASES[name]
    try:
        fuser = Autofuser(case.options())
        return fuser.generate(fuser.schedule(case.build())).kernel
    finally:
        reset_platform()  # the seed script sets a platform of its own


@pytest.fixture(scope="session")
def verdicts(request, checker):
    """Generate and check every kernel this test run selected (once, in parallel)."""
    selected = sorted({item.callspec.params["name"] for item in request.session.items
                       if getattr(item, "callspec", None) and item.callspec.params.get("name") in CASES})
    texts, failures = {}, {}
    for name in selected:
        try:
            texts[name] = _generate(name)
        except Exception as exc:  # reported by the kernel's own test
            failures[name] = exc
    names = sorted(texts)
    return dict(zip(names, checker.check_many([texts[n] for n in names]))), failures


def _result(name, verdicts):
    results, failures = verdicts
    if name in failures:
        raise failures[name]
    return results[name]


def _param(name: str):
    marks = [pytest.mark.xfail(strict=True, reason=KNOWN_FAILING[name])] if name in KNOWN_FAILING else []
    return pytest.param(name, id=name, marks=marks)


@pytest.mark.parametrize("name", [_param(n) for n in CASES])
def test_kernel_passes_official_check(name, verdicts):
    result = _result(name, verdicts)
    assert result.ok, f"kernel '{name}' fails the official AscendC check:\n{result.describe(limit=8)}"


@pytest.mark.parametrize("name", [pytest.param(n, id=n) for n in CASES])
def test_no_error_comes_from_the_standins(name, verdicts):
    result = _result(name, verdicts)
    blamed = [e.format() for e in result.errors if e.origin == "stand-in"]
    assert blamed == [], "the stand-ins miss something the official headers need:\n" + "\n".join(blamed)


def test_known_failing_names_exist():
    assert sorted(set(KNOWN_FAILING) - set(CASES)) == []
