"""Which aten ops a fused region can take, and the af op each becomes.

The tables are the whole vocabulary of the front end: an aten op not named
here stays in torch. Scalar operands become the ``*s`` forms of af-elementwise
(``Adds``, ``Lts``, ...); ``div`` by a Python scalar has no exact fused form
(``x / 3`` is not ``x * (1/3)`` bit for bit) and stays in torch.
"""

from __future__ import annotations

import torch

aten = torch.ops.aten

#: one-input pointwise ops -> af op type
UNARY = {
    aten.relu.default: "Relu",
    aten.sigmoid.default: "Sigmoid",
    aten.exp.default: "Exp",
    aten.log.default: "Log",
    aten.sqrt.default: "Sqrt",
    aten.rsqrt.default: "Rsqrt",
    aten.neg.default: "Neg",
    aten.abs.default: "Abs",
    aten.tanh.default: "Tanh",
    aten.logical_not.default: "LogicalNot",
}

#: two-operand pointwise ops -> (af op for two tensors, af op with a scalar second operand or None)
BINARY = {
    aten.add.Tensor: ("Add", "Adds"),
    aten.sub.Tensor: ("Sub", "Subs"),
    aten.mul.Tensor: ("Mul", "Muls"),
    aten.div.Tensor: ("Div", None),
    aten.maximum.default: ("Maximum", None),
    aten.minimum.default: ("Minimum", None),
    aten.lt.Tensor: ("Lt", "Lts"),
    aten.le.Tensor: ("Le", "Les"),
    aten.gt.Tensor: ("Gt", "Gts"),
    aten.ge.Tensor: ("Ge", "Ges"),
    aten.eq.Tensor: ("Eq", "Eqs"),
    aten.ne.Tensor: ("Ne", "Nes"),
    aten.lt.Scalar: (None, "Lts"),
    aten.le.Scalar: (None, "Les"),
    aten.gt.Scalar: (None, "Gts"),
    aten.ge.Scalar: (None, "Ges"),
    aten.eq.Scalar: (None, "Eqs"),
    aten.ne.Scalar: (None, "Nes"),
    aten.logical_and.default: ("LogicalAnd", None),
    aten.logical_or.default: ("LogicalOr", None),
    aten.bitwise_and.Tensor: ("BitwiseAnd", None),
    aten.bitwise_or.Tensor: ("BitwiseOr", None),
    aten.bitwise_xor.Tensor: ("BitwiseXor", None),
}

#: on bool tensors the bitwise ops are the logical ones (af's bitwise ops take integers)
BOOL_FORMS = {"BitwiseAnd": "LogicalAnd", "BitwiseOr": "LogicalOr", "BitwiseXor": "LogicalXor"}

#: reductions after the gather -> af reduce kind
REDUCE = {
    aten.sum.dim_IntList: "Sum",
    aten.mean.dim: "Mean",
    aten.amax.default: "Max",
    aten.amin.default: "Min",
}

WHERE = aten.where.self
TO_COPY = aten._to_copy.default
SCALAR_TENSOR = aten.scalar_tensor.default

#: the gathers a region grows around
EMBEDDING = aten.embedding.default
INDEX_SELECT = aten.index_select.default
GATHER = aten.gather.default
INDEX = aten.index.Tensor
EMBEDDING_BAG = aten._embedding_bag.default
ANCHORS = (EMBEDDING, INDEX_SELECT, GATHER, INDEX, EMBEDDING_BAG)

#: embedding_bag's mode argument -> reduce kind (0 sum, 1 mean, 2 max)
BAG_MODES = {0: "Sum", 1: "Mean", 2: "Max"}

#: torch dtypes a region's tensors may have -> af dtype names
DTYPES = {
    torch.float32: "float32",
    torch.float16: "float16",
    torch.bfloat16: "bfloat16",
    torch.int64: "int64",
    torch.int32: "int32",
    torch.int16: "int16",
    torch.int8: "int8",
    torch.uint8: "uint8",
    torch.bool: "bool",
}


def op_name(target: object) -> str:
    """``aten.embedding.default`` -> ``aten.embedding``, for tables and reasons."""
    name = getattr(target, "__name__", None) or str(target)
    text = str(getattr(target, "_overloadpacket", name))
    return text if text.startswith("aten.") else f"aten.{text}" if "." not in text else text
