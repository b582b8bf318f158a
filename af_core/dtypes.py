"""Data types known to ASCIR and how each maps to numpy and to AscendC C++.

bfloat16 has no numpy type; the reference interpreter keeps bfloat16 tensors
as float32 arrays whose values are exactly representable in bfloat16 (see
:mod:`af_core.reference.bfloat16`), and the twin boundary converts to and
from the 16-bit pattern.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

import attrs

if TYPE_CHECKING:
    import numpy as np

# numpy is imported by the properties that return numpy dtypes: op definitions name dtypes at
# import, and building the registry must not load numpy.

# inside DType the name ``np`` is the property below, so annotations there use this alias
NumpyDType: TypeAlias = "np.dtype[Any]"


@attrs.frozen
class DType:
    """One element type: its ASCIR name, byte size, C++ spelling and numpy view."""

    name: str
    itemsize: int
    cpp: str
    kind: str  # "f" float, "i" signed int, "u" unsigned int, "b" bool
    numpy_name: str  # numpy dtype used by the reference interpreter

    @property
    def is_float(self) -> bool:
        return self.kind == "f"

    @property
    def is_int(self) -> bool:
        return self.kind in ("i", "u")

    @property
    def is_bool(self) -> bool:
        return self.kind == "b"

    @property
    def np(self) -> NumpyDType:
        import numpy

        return numpy.dtype(self.numpy_name)

    @property
    def storage_np(self) -> NumpyDType:
        """numpy dtype of the raw bytes in global memory (bfloat16 -> uint16)."""
        import numpy

        if self.name == "bfloat16":
            return numpy.dtype(numpy.uint16)
        if self.name == "bool":
            return numpy.dtype(numpy.uint8)
        return self.np

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"dtypes.{self.name}"


float16 = DType("float16", 2, "half", "f", "float16")
bfloat16 = DType("bfloat16", 2, "bfloat16_t", "f", "float32")
float32 = DType("float32", 4, "float", "f", "float32")
int8 = DType("int8", 1, "int8_t", "i", "int8")
uint8 = DType("uint8", 1, "uint8_t", "u", "uint8")
int16 = DType("int16", 2, "int16_t", "i", "int16")
uint16 = DType("uint16", 2, "uint16_t", "u", "uint16")
int32 = DType("int32", 4, "int32_t", "i", "int32")
uint32 = DType("uint32", 4, "uint32_t", "u", "uint32")
int64 = DType("int64", 8, "int64_t", "i", "int64")
uint64 = DType("uint64", 8, "uint64_t", "u", "uint64")
bool_ = DType("bool", 1, "bool", "b", "bool")

ALL: tuple[DType, ...] = (
    float16,
    bfloat16,
    float32,
    int8,
    uint8,
    int16,
    uint16,
    int32,
    uint32,
    int64,
    uint64,
    bool_,
)

_BY_NAME = {d.name: d for d in ALL}
_BY_NAME["bool_"] = bool_
_BY_NAME["half"] = float16
_BY_NAME["float"] = float32
#: Every name :func:`get` accepts: the dtypes' names and the aliases ``bool_``, ``half`` and ``float``.
NAMES: tuple[str, ...] = tuple(_BY_NAME)

#: dtypes IndirectLoad accepts on its data input (x1).
INDIRECT_LOAD_INPUT = (float16, bfloat16, float32, int8, uint8, int16, uint16, int32, uint32, int64)
#: dtypes IndirectLoad accepts on its index input (x2).
INDEX = (int32, int64)
FLOATS = (float16, bfloat16, float32)
INTS = (int8, uint8, int16, uint16, int32, uint32, int64, uint64)


def get(name: str | DType) -> DType:
    """Look a dtype up by name; raises KeyError with the known names."""
    if isinstance(name, DType):
        return name
    try:
        return _BY_NAME[str(name)]
    except KeyError:
        known = ", ".join(d.name for d in ALL)
        raise KeyError(f"unknown dtype '{name}' (known: {known})") from None
