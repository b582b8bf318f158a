"""Every kernel of the broad set (kernel_set.py) type-checks against the official headers.

The selected kernels are generated and checked once per test run, two g++ at a
time; each test then reads its own verdict, so every failing kernel is named.
KNOWN_FAILING would list kernels known to fail, with their first error, as
strict xfails (fixing one turns its test red until its entry is removed); it
is empty.
No kernel, failing or not, may fail in our stand-ins (that would be a gap of
the check, not of the kernel).
"""

from __future__ import annotations

import pytest
from kernel_set import kernel_cases

from af_core.autofuser import Autofuser
from af_core.codegen.codegen import CodegenResult
from af_core.platform import reset_platform

CASES = {c.name: c for c in kernel_cases()}

#: kernel name -> the first error it fails with (strict xfail); empty: every kernel of the set passes
KNOWN_FAILING: dict[str, str] = {}


def _generate(name: str) -> CodegenResult:
    case = CASES[name]
    try:
        fuser = Autofuser(case.options())
        return fuser.generate(fuser.schedule(case.build()))
    finally:
        reset_platform()  # the seed script sets a platform of its own


@pytest.fixture(scope="session")
def verdicts(request, checker):
    """Generate and check every kernel this test run selected (once, in parallel)."""
    selected = sorted(
        {
            item.callspec.params["name"]
            for item in request.session.items
            if getattr(item, "callspec", None) and item.callspec.params.get("name") in CASES
        }
    )
    texts, failures = {}, {}
    for name in selected:
        try:
            texts[name] = _generate(name)
        except Exception as exc:  # reported by the kernel's own test
            failures[name] = exc
    names = sorted(texts)
    checked = checker.check_many(
        [texts[n].kernel for n in names], headers=[texts[n].kernel_headers() for n in names]
    )
    return dict(zip(names, checked)), failures


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
