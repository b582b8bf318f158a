"""Reading g++'s errors: locations, the kernel line behind a header error, the origin of each error."""

from __future__ import annotations

from af_core.ascendc.diagnostics import parse_errors

LOG = """In file included from /x/asc/include/kernel_operator.h:26,
                 from kernel.cpp:1:
/x/asc/impl/basic_api/dav_3510/vec_impl.h: In instantiation of 'void AscendC::DivImpl(T*) [with T = bfloat16_t]':
kernel.cpp:42:17:   required from here
/x/asc/impl/basic_api/dav_3510/../dav_3510/vec_impl.h:142:116: error: static assertion failed: not supported
/x/asc/impl/basic_api/dav_3510/other_impl.h:10:5: error: 'vfoo' was not declared in this scope
/x/standins/stub_def.h:3:1: error: 'bar' does not name a type
kernel.cpp:50:3: error: 'Nope' was not declared in this scope
/usr/include/c++/12/cmath:1:1: fatal error: boom
/x/asc/impl/a.h:1:1: warning: unused
"""


def _classify(path: str) -> str:
    if path.startswith("/x/asc/"):
        return "official"
    if path.startswith("/x/standins/"):
        return "stand-in"
    return "other"


def test_errors_with_origin_and_kernel_line():
    errors = parse_errors(LOG, _classify, "kernel.cpp")
    assert [(e.origin, e.line) for e in errors] == [
        ("official", 142),
        ("stand-in", 10),
        ("stand-in", 3),
        ("kernel", 50),
        ("other", 1),
    ]
    first = errors[0]
    assert first.file == "/x/asc/impl/basic_api/dav_3510/vec_impl.h"  # ../ folded
    assert first.kernel_line == 42 and first.message == "static assertion failed: not supported"
    assert errors[1].kernel_line is None  # the "required from" belongs to the first error only
    assert "(from kernel.cpp:42)" in first.format()


def test_an_undeclared_intrinsic_in_the_official_headers_blames_the_standins():
    errors = parse_errors(LOG, _classify, "kernel.cpp")
    assert errors[1].message.startswith("'vfoo' was not declared") and errors[1].origin == "stand-in"
    assert errors[3].message.startswith("'Nope'") and errors[3].origin == "kernel"
