"""One elementwise op of the fake back end, with its scalar C++ and the API sources that C++ needs.

``FakeOffset`` adds a scalar attribute: float data in float32, integer data
with two's-complement wrap-around. It lets the core's scalar emitter, its
API-source inlining (a source that requires another) and the twin's
tolerance comparison run without the elementwise plugin.
"""

from __future__ import annotations

import numpy as np

from af_core import dtypes as dt
from af_core.codegen.api_source import ApiSource
from af_core.ops.opdef import AttrSpec, InferContext, OpDef, OutSpec, RefContext, require_dtype_in

#: The dtypes FakeOffset accepts.
ALLOWED = (dt.float32, dt.int32, dt.int64)


def _infer(ctx: InferContext) -> OutSpec:
    require_dtype_in(ctx, "x", ALLOWED, "fake-offset-dtype")
    if ctx.attrs.get("value") is None:
        ctx.fail("fake-offset-value", "attribute 'value' (the offset) is required")
    source = ctx.input("x")
    return OutSpec(source.dtype, source.sizes)


def _reference(ctx: RefContext) -> np.ndarray:
    x, value = ctx.inputs["x"], ctx.attrs["value"]
    if ctx.in_dtypes["x"].is_float:
        return x.astype(np.float32) + np.float32(value)
    return x.astype(np.int64) + np.int64(int(value))  # the interpreter wraps the result to x's dtype


FAKE_OFFSET = OpDef(
    name="FakeOffset",
    inputs=("x",),
    compute_type="elementwise",
    attrs=(AttrSpec("value", "float", None, "the offset"),),
    infer=_infer,
    reference=_reference,
    scalar_cpp="AfFakeOffset({x}, ({C})({value}))",
    cpp_sources=("af_fake_offset",),
    doc="x + value (floats in float32, integers wrapping).",
)

WRAP_SOURCE = ApiSource(
    "af_fake_wrap",
    """\
template <typename T>
__aicore__ inline T AfFakeWrapAdd(T a, T b)
{
    using U = typename std::make_unsigned<T>::type;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
""",
)

OFFSET_SOURCE = ApiSource(
    "af_fake_offset",
    """\
__aicore__ inline float AfFakeOffset(float a, float b) { return a + b; }
__aicore__ inline int32_t AfFakeOffset(int32_t a, int32_t b) { return AfFakeWrapAdd(a, b); }
__aicore__ inline int64_t AfFakeOffset(int64_t a, int64_t b) { return AfFakeWrapAdd(a, b); }
""",
    requires=("af_fake_wrap",),
)

API_SOURCES = (OFFSET_SOURCE, WRAP_SOURCE)
