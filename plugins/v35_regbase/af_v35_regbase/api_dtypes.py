"""Element types each AscendC vector API accepts on Ascend 3510: the one table.

Every row was read from the official dav_3510 implementation of the count
form the kernels call (``API(dst, src..., count)``), i.e. the
``static_assert(SupportType<T, ...>())`` of the ``...Impl`` function that
form reaches; the comment of each row names the file under
``impl/basic_api/dav_3510/`` of asc-devkit. Types the project does not model
(complex, fp8, int4...) are left out.

The table has two readers, so the real API's rules live in one place:

- the v35 ApiCalls (:mod:`af_v35_regbase.api_calls.legalize`) emit only calls it
  allows, computing in a wider type where AscendC needs it, and report the
  cases with no legal form so the scheduler keeps SIMT for them;
- the CPU twin ``static_assert``\\ s it: ``af_twin/api_dtypes.h`` is generated
  from this module (``python -m af_v35_regbase.api_dtypes`` rewrites it) and
  a test fails when the committed header differs.
"""

from __future__ import annotations

from pathlib import Path

import attrs

from af_core.template_api import dtypes as dt

# ASCIR dtype names, short.
F16, BF16, F32 = "float16", "bfloat16", "float32"
I8, U8, I16, U16, I32, U32, I64, U64 = (
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
)
BOOL = "bool"


@attrs.frozen
class ApiRow:
    """One vector API: the element types of its data operands and, for masks, of the mask operand."""

    api: str
    types: tuple[str, ...]
    source: str  # file under impl/basic_api/dav_3510/ the row was read from
    masks: tuple[str, ...] = ()  # Compare / Compares / Select: element types of the bit-mask tensor

    def accepts(self, dtype: dt.DType | str) -> bool:
        return dt.get(dtype).name in self.types


_BIN = "kernel_operator_vec_binary_continuous_impl.h"
_SCALAR = "kernel_operator_vec_binary_scalar_impl.h"
_UNARY = "kernel_operator_vec_unary_impl.h"
_ARITH = (U8, I8, F16, U16, I16, BF16, U32, I32, F32, I64, U64)

ROWS: tuple[ApiRow, ...] = (
    # AddImpl / SubImpl (Level 2)
    ApiRow("Add", _ARITH, _BIN),
    ApiRow("Sub", _ARITH, _BIN),
    # MulImpl (Level 2): no 8-bit types
    ApiRow("Mul", (F16, U16, I16, BF16, U32, I32, F32, I64, U64), _BIN),
    # DivImpl (Level 2): no bfloat16, no 8-bit types
    ApiRow("Div", (U16, I16, U32, I32, F16, F32, I64, U64), _BIN),
    # MaxImpl / MinImpl (Level 2)
    ApiRow("Max", _ARITH, _BIN),
    ApiRow("Min", _ARITH, _BIN),
    # AndImpl / OrImpl (Level 2)
    ApiRow("And", (U8, I8, I16, U16, U32, I32, I64, U64), _BIN),
    ApiRow("Or", (U8, I8, I16, U16, U32, I32, I64, U64), _BIN),
    # AddsImpl (Level 2): no uint16 / uint32
    ApiRow("Adds", (U8, I8, F16, BF16, F32, I16, I32, I64, U64), _SCALAR),
    # MulsImpl (Level 2): no 8-bit types, no uint16 / uint32
    ApiRow("Muls", (F16, BF16, F32, I16, I32, I64, U64), _SCALAR),
    # MaxsImpl / MinsImpl (Level 2): no uint16 / uint32
    ApiRow("Maxs", (U8, I8, F16, BF16, F32, I16, I32, I64, U64), _SCALAR),
    ApiRow("Mins", (U8, I8, F16, BF16, F32, I16, I32, I64, U64), _SCALAR),
    # AndsImpl / OrsImpl (Level 2)
    ApiRow("Ands", (I16, U16, I64, U64), _SCALAR),
    ApiRow("Ors", (I16, U16, I64, U64), _SCALAR),
    # ShiftLeftImpl / ShiftRightImpl (Level 2)
    ApiRow("ShiftLeft", (U8, I8, I16, U16, I32, U32, I64, U64), _SCALAR),
    ApiRow("ShiftRight", (U8, I8, I16, U16, I32, U32, I64, U64), _SCALAR),
    # ExpImpl / LnImpl / SqrtImpl / RsqrtImpl (count forms): half and float only
    ApiRow("Exp", (F16, F32), _UNARY),
    ApiRow("Ln", (F16, F32), _UNARY),
    ApiRow("Sqrt", (F16, F32), _UNARY),
    ApiRow("Rsqrt", (F16, F32), _UNARY),
    # ReciprocalImpl (count form)
    ApiRow("Reciprocal", (F16, F32, I64, U64), _UNARY),
    # AbsImpl (count form, same-type)
    ApiRow("Abs", (I8, F16, I16, F32, I32, I64), _UNARY),
    # ReluImpl (count form)
    ApiRow("Relu", (F16, F32, I32, I64), _UNARY),
    # NegImpl (Level 2)
    ApiRow("Neg", (I8, I16, I32, F16, F32, I64), _UNARY),
    # NotImpl (count form)
    ApiRow("Not", (I8, U8, F16, F32, U16, I16, U32, I32, U64, I64), _UNARY),
    # CheckDuplicateSupportedType (DuplicateImpl, count form)
    ApiRow(
        "Duplicate",
        (BOOL, I8, U8, F16, BF16, I16, U16, I32, U32, F32, I64, U64),
        "kernel_operator_vec_duplicate_impl.h",
    ),
    # VcmpvImpl (Level 2): the mask is uint8_t / int8_t
    ApiRow(
        "Compare",
        (F16, I16, U16, I32, U32, F32, U8, I8, BF16, U64, I64),
        "kernel_operator_vec_compare_continuous_impl.h",
        masks=(U8, I8),
    ),
    # VcmpvsImpl (Level 2): the mask is uint8_t
    ApiRow(
        "Compares",
        (U8, I8, BF16, F16, I16, U16, I32, U32, F32, U64, I64),
        "kernel_operator_vec_cmp_impl.h",
        masks=(U8,),
    ),
    # VselImpl (Level 2, tensor/tensor and tensor/scalar modes)
    ApiRow(
        "Select",
        (U8, I8, BF16, F16, I16, U16, I32, U32, F32, U64, I64),
        "kernel_operator_vec_sel_impl.h",
        masks=(U8, U16, U32, U64),
    ),
    # ReduceSumImpl (count form)
    ApiRow("ReduceSum", (F16, F32, U32, I32, U64, I64), "kernel_operator_vec_reduce_impl.h"),
    # ReduceMaxImpl / ReduceMinImpl (count form)
    ApiRow("ReduceMax", (I16, U16, I32, U32, F16, F32, U64, I64), "kernel_operator_vec_reduce_impl.h"),
    ApiRow("ReduceMin", (I16, U16, I32, U32, F16, F32, U64, I64), "kernel_operator_vec_reduce_impl.h"),
    # CheckCreateVecIndexL2SupportedType (Level 2)
    ApiRow("CreateVecIndex", (I8, I16, I32, F16, F32, I64), "kernel_operator_vec_createvecindex_impl.h"),
    # GatherImpl (Level 2 count mode) takes SupportBytes<T, 1, 2, 4, 8>, but the count-form Gather that
    # reaches it (../kernel_operator_vec_gather_intf_impl.h, __NPU_ARCH__ 3510) asserts this narrower list:
    # no 64-bit types; 1/2-byte types pack offsets to uint16
    ApiRow("Gather", (U8, I8, F16, BF16, U16, I16, F32, U32, I32), "kernel_operator_vec_gather_impl.h"),
    # TruncateImpl (Level 2): rounds to an integral value in the same float type (modes: TRUNCATE_MODES)
    ApiRow("Truncate", (F16, F32, BF16), "kernel_operator_vec_vconv_impl.h"),
)

BY_API: dict[str, ApiRow] = {row.api: row for row in ROWS}

# ---------------------------------------------------------------------------
# The register API (namespace AscendC::Reg) that vector functions use: the element types of each
# instruction, read from the ``static_assert(SupportType<ActualT, ...>())`` of its ``...Impl`` function
# under ``impl/basic_api/reg_compute/dav_3510/``. 64-bit types are listed where generated code uses them:
# a RegTensor<int64_t> (RegTraitNumOne) holds 32 elements in one register; LoadAlign / StoreAlign move
# its 256 bytes, Max / Min unpack it into a register pair and Compare + Select there, Maxs / Mins are
# Duplicate + Max / Min; Add / Sub / Mul / And / Or / Xor / Not (int64 and uint64) and Abs / Relu / Neg
# (int64 only, their static_asserts) compute over the register pair too, Adds / Muls are Duplicate + Add /
# Mul, Compare / Select over the pair too, Compares is Duplicate + Compare
# (af_v35_regbase.reg_cost.B64_SEQUENCES / B64_COMPARE count each sequence). The other instructions' 64-bit
# forms are not generated and not listed.
_R_BIN = "kernel_reg_compute_vec_binary_impl.h"
_R_SCALAR = "kernel_reg_compute_vec_binary_scalar_impl.h"
_R_UNARY = "kernel_reg_compute_vec_unary_impl.h"
_R_CMPSEL = "kernel_reg_compute_vec_cmpsel_impl.h"
_R_ALL = (U8, I8, U16, I16, U32, I32, F16, F32, BF16)
_R_B64 = (I64, U64)

REG_ROWS: tuple[ApiRow, ...] = (
    # LoadAlign / StoreAlign (DIST_NORM): SupportBytes<ActualT, 1, 2, 4, 8>
    ApiRow("LoadAlign", (*_R_ALL, *_R_B64), "kernel_reg_compute_datacopy_load_impl.h"),
    ApiRow("StoreAlign", (*_R_ALL, *_R_B64), "kernel_reg_compute_datacopy_store_impl.h"),
    # AddImpl / SubImpl / MaxImpl / MinImpl
    ApiRow("Add", (*_R_ALL, *_R_B64), _R_BIN),
    ApiRow("Sub", (*_R_ALL, *_R_B64), _R_BIN),
    ApiRow("Max", (*_R_ALL, *_R_B64), _R_BIN),
    ApiRow("Min", (*_R_ALL, *_R_B64), _R_BIN),
    # MulImpl: no 8-bit types
    ApiRow("Mul", (U16, I16, U32, I32, F16, F32, BF16, *_R_B64), _R_BIN),
    # DivImpl: no 8-bit types, no bfloat16
    ApiRow("Div", (U16, I16, U32, I32, F16, F32), _R_BIN),
    # AddsImpl / MaxsImpl / MinsImpl (also the scalar's type)
    ApiRow("Adds", (*_R_ALL, *_R_B64), _R_SCALAR),
    ApiRow("Maxs", (*_R_ALL, *_R_B64), _R_SCALAR),
    ApiRow("Mins", (*_R_ALL, *_R_B64), _R_SCALAR),
    # MulsImpl: no 8-bit types, no bfloat16
    ApiRow("Muls", (U16, I16, U32, I32, F16, F32, *_R_B64), _R_SCALAR),
    # ExpImpl / LogImpl (Ln) / SqrtImpl: half and float
    ApiRow("Exp", (F16, F32), _R_UNARY),
    ApiRow("Ln", (F16, F32), _R_UNARY),
    ApiRow("Sqrt", (F16, F32), _R_UNARY),
    # AbsImpl (same type), ReluImpl, NegImpl
    ApiRow("Abs", (I8, I16, I32, F16, F32, I64), _R_UNARY),
    ApiRow("Relu", (I32, F16, F32, I64), _R_UNARY),
    ApiRow("Neg", (I8, I16, I32, F16, F32, I64), _R_UNARY),
    # DuplicateImpl
    ApiRow("Duplicate", (BOOL, *_R_ALL, *_R_B64), "kernel_reg_compute_vec_duplicate_impl.h"),
    # TruncateImpl (kernel_reg_compute_vec_vconv_impl.h): half, float, bfloat16 (the vector path's modes)
    ApiRow("Truncate", (F16, F32, BF16), "kernel_reg_compute_vec_vconv_impl.h"),
    # CompareImpl / CompareScalarImpl (64-bit: CompareB64Impl over a register pair; Compares: Duplicate +
    # Compare)
    ApiRow("Compare", (*_R_ALL, *_R_B64), _R_CMPSEL),
    ApiRow("Compares", (*_R_ALL, *_R_B64), _R_CMPSEL),
    # SelectImpl: SupportBytes<ActualT, 1, 2, 4, 8> (64-bit: vsel of each half of a register pair)
    ApiRow("Select", (BOOL, *_R_ALL, *_R_B64), _R_CMPSEL),
    # AndImpl / OrImpl / XorImpl: bool and the integers (64-bit: And / Or / Xor of each half of the pair)
    ApiRow("And", (U8, I8, U16, I16, U32, I32, *_R_B64), _R_BIN),
    ApiRow("Or", (U8, I8, U16, I16, U32, I32, *_R_B64), _R_BIN),
    ApiRow("Xor", (U8, I8, U16, I16, U32, I32, *_R_B64), _R_BIN),
    # NotImpl: the integers, half and float (bitwise on the element's bits; 64-bit: Not of each half)
    ApiRow("Not", (U8, I8, U16, I16, U32, I32, F16, F32, *_R_B64), _R_UNARY),
)

REG_BY_API: dict[str, ApiRow] = {row.api: row for row in REG_ROWS}


def reg_accepts(api: str, dtype: dt.DType | str) -> bool:
    """Whether the register instruction ``AscendC::Reg::<api>`` takes elements of ``dtype`` on 3510."""
    row = REG_BY_API.get(api)
    return row is not None and row.accepts(dtype)


# ---------------------------------------------------------------------------
# Cast (CastImpl, Level 2, kernel_operator_vec_vconv_impl.h): which (dst, src) pairs take which RoundMode.
# The count form has no static_assert: an unlisted pair or mode reaches ASCENDC_ASSERT(false) at run time
# (CPU debug) and does nothing on the device. The conversion runs with SatMode::SAT.

CAST_SOURCE = "kernel_operator_vec_vconv_impl.h"
ROUNDING = ("CAST_RINT", "CAST_FLOOR", "CAST_CEIL", "CAST_ROUND", "CAST_TRUNC")
ROUND_MODES = ("CAST_NONE", *ROUNDING, "CAST_ODD")  # the twin's RoundMode values, in enum order

# cast_round_all: CAST_RINT / FLOOR / CEIL / ROUND / TRUNC
_ROUND_ALL = (
    (F16, F32),
    (I64, F32),
    (I32, F32),
    (I16, F32),
    (BF16, F32),
    (I32, F16),
    (I16, F16),
    (I8, F16),
    (U8, F16),
    (BF16, F16),
    (F16, I16),
    (F32, I32),
    (F32, I64),
    (I32, BF16),
    (F16, BF16),
    (F16, I32),
    (F32, F32),
)
# cast_none and using_cast_rint: CAST_NONE (the latter round to nearest even)
_NONE = (
    (F16, I32),
    (F32, F16),
    (F32, BF16),
    (F16, U8),
    (U16, U8),
    (U32, U8),
    (F16, I8),
    (I16, I8),
    (I32, I8),
    (U8, U16),
    (U32, U16),
    (F32, I16),
    (U8, I16),
    (U32, I16),
    (I32, I16),
    (U8, U32),
    (U16, U32),
    (I16, U32),
    (I64, I32),
    (I16, I32),
    (U8, I32),
    (U16, I32),
    (I32, I64),
    (I8, F16),
    (U8, F16),
    (F16, F32),
    (F16, I16),
    (F32, I32),
)
# cast_odd: CAST_ODD
_ODD = ((F16, F32), (F16, I32))


def _cast_table() -> dict[tuple[str, str], tuple[str, ...]]:
    modes: dict[tuple[str, str], set[str]] = {}
    for pairs, names in ((_ROUND_ALL, ROUNDING), (_NONE, ("CAST_NONE",)), (_ODD, ("CAST_ODD",))):
        for pair in pairs:
            modes.setdefault(pair, set()).update(names)
    return {pair: tuple(m for m in ROUND_MODES if m in found) for pair, found in sorted(modes.items())}


#: (dst, src) -> the RoundModes the 3510 Cast implements for it
CAST: dict[tuple[str, str], tuple[str, ...]] = _cast_table()

#: the RoundModes TruncateImpl accepts (its SupportEnum static_assert)
TRUNCATE_MODES = ROUNDING


def accepts(api: str, dtype: dt.DType | str) -> bool:
    """Whether the 3510 count form of ``api`` accepts ``dtype`` data (False for APIs not in the table)."""
    row = BY_API.get(api)
    return row is not None and row.accepts(dtype)


def cast_modes(dst: dt.DType | str, src: dt.DType | str) -> tuple[str, ...]:
    """The RoundModes the 3510 Cast implements from ``src`` to ``dst`` (empty: no such conversion)."""
    return CAST.get((dt.get(dst).name, dt.get(src).name), ())


# ---------------------------------------------------------------------------
# The twin's C++ copy of the table.

HEADER = Path(__file__).parent / "twin" / "include" / "af_twin" / "api_dtypes.h"


def _cpp(name: str) -> str:
    return "bool" if name == BOOL else dt.get(name).cpp


def render_header() -> str:
    """The text of ``af_twin/api_dtypes.h``: one constexpr trait per table row and the Cast modes."""
    out = [
        "// af_twin/api_dtypes.h",
        "// GENERATED from af_v35_regbase/api_dtypes.py by `python -m af_v35_regbase.api_dtypes`; do not edit.",
        "// The element types each AscendC vector API accepts on 3510 (count forms), read from the",
        "// dav_3510 implementation; vector.h static_asserts them so the twin rejects what the real API",
        "// rejects. AcceptsX<T>: T is a legal data type of X; MaskX<U>: U is a legal mask type of X;",
        "// kCastModes<D, S>: bit m set when Cast<D, S> implements RoundMode m (0: no such conversion);",
        "// kTruncateModes: bit m set when Truncate<T, m> is implemented.",
        "#ifndef AF_TWIN_API_DTYPES_H",
        "#define AF_TWIN_API_DTYPES_H",
        "",
        "#include <cstdint>",
        "#include <type_traits>",
        "",
        '#include "types.h"',
        "",
        "namespace AfTwin {",
        "",
        "template <class T, class... Us>",
        "struct OneOf : std::disjunction<std::is_same<T, Us>...> {};",
        "",
    ]
    for row in ROWS:
        out.append(f"// {row.api}: {row.source}")
        out.append(
            f"template <class T>\ninline constexpr bool Accepts{row.api} = "
            f"OneOf<T, {', '.join(_cpp(t) for t in row.types)}>::value;"
        )
        if row.masks:
            out.append(
                f"template <class U>\ninline constexpr bool Mask{row.api} = "
                f"OneOf<U, {', '.join(_cpp(t) for t in row.masks)}>::value;"
            )
    out += ["", "// Register API (AscendC::Reg), impl/basic_api/reg_compute/dav_3510/"]
    for row in REG_ROWS:
        out.append(f"// Reg::{row.api}: {row.source}")
        out.append(
            f"template <class T>\ninline constexpr bool AcceptsReg{row.api} = "
            f"OneOf<T, {', '.join(_cpp(t) for t in row.types)}>::value;"
        )
    out += [
        "",
        f"// Cast: {CAST_SOURCE} (CastImpl, Level 2)",
        "template <class D, class S>",
        "inline constexpr uint32_t kCastModes = 0u;",
    ]
    for (dst, src), modes in CAST.items():
        bits = " | ".join(f"(1u << {ROUND_MODES.index(m)})" for m in modes)
        names = ", ".join(modes)
        out.append(
            f"template <>\ninline constexpr uint32_t kCastModes<{_cpp(dst)}, {_cpp(src)}> = {bits};  // {names}"
        )
    bits = " | ".join(f"(1u << {ROUND_MODES.index(m)})" for m in TRUNCATE_MODES)
    out += [
        "",
        f"// Truncate round modes: {CAST_SOURCE} (TruncateImpl)",
        f"inline constexpr uint32_t kTruncateModes = {bits};  // {', '.join(TRUNCATE_MODES)}",
    ]
    out += ["", "}  // namespace AfTwin", "", "#endif  // AF_TWIN_API_DTYPES_H", ""]
    return "\n".join(out)


def main() -> None:
    HEADER.write_text(render_header())
    print(f"wrote {HEADER}")


if __name__ == "__main__":
    main()
