"""The two ApiCalls of the dedup template (C++ in ``af_dedup_gather.h``).

``DedupGatherApiCall`` renders the gather step of a work item: inputs the
table's and the index's GM tensors; outputs the UB tile (a queue of
``chunk x pitch`` elements) and the two scratch tensors ``keys`` (int64)
and ``ids`` (int32); attrs ``view`` (as the rowcopy example's: sizes,
index and table strides of the output axes up to the gathered one, the
gathered axis' extent, the row width, the two index checks),
``first_row`` / ``rows`` (the chunk), ``column`` / ``columns`` (the column
tile), ``pitch``, ``hash_size``, ``tile_rows`` and ``zero_fill``.

``DedupStoreApiCall`` writes the tile's slot rows to every output position
that selects them: inputs the tile to store and ``ids``; output the GM
output; attrs ``first_row``, ``rows``, ``width``, ``column``, ``columns``,
``pitch``, ``hash_size``.
"""

from __future__ import annotations

from typing import ClassVar

from af_v35_regbase.row_select import render_row_select

from af_core.template_api import ApiCall
from af_indirect_load_dedup.plugin import DEDUP_SOURCE  # the API source both calls inline


class DedupGatherApiCall(ApiCall):
    """Numbers a chunk's distinct rows and copies each distinct column tile into UB once."""

    name: ClassVar[str] = "DedupGatherApiCall"
    sources: ClassVar[tuple[str, ...]] = (DEDUP_SOURCE,)

    def generate_api_call_string(self) -> str:
        ctx, a = self.ctx, self.node.attrs
        table, index = self.node.inputs
        tile, keys, ids = self.node.outputs
        view = a["view"]
        name = ctx.unique("dedupview")
        lines = render_row_select(ctx, name, view)
        ctype = ctx.cpp_type(ctx.impl.tensor(tile).dtype)
        itype = ctx.cpp_type(ctx.impl.tensor(index).dtype)
        make_tile, dst = ctx.produce(tile)
        make_keys, keys_var = ctx.produce(keys)
        make_ids, ids_var = ctx.produce(ids)
        distinct = ctx.unique("distinct")
        hash_size = ctx.expr(a["hash_size"])
        lines += [
            make_tile,
            make_keys,
            make_ids,
            f"const int64_t {distinct} = AfDedupSlots<{itype}>({keys_var}, {ids_var}, {ctx.gm(index)}, {name}, "
            f"{ctx.expr(a['first_row'])}, {ctx.expr(a['rows'])}, {hash_size});",
            f"AfDedupLoad<{ctype}>({dst}, {ctx.gm(table)}, {keys_var}, {name}, {hash_size}, {distinct}, "
            f"{ctx.expr(a['column'])}, {ctx.expr(a['columns'])}, {ctx.expr(a['pitch'])}, "
            f"{ctx.expr(a['tile_rows'])}, {'true' if a['zero_fill'] else 'false'});",
            ctx.finish(tile),
        ]
        return "\n".join(line for line in lines if line)


class DedupStoreApiCall(ApiCall):
    """Writes each slot row of a tile to every output position whose index selected it."""

    name: ClassVar[str] = "DedupStoreApiCall"
    sources: ClassVar[tuple[str, ...]] = (DEDUP_SOURCE,)

    def generate_api_call_string(self) -> str:
        ctx, a = self.ctx, self.node.attrs
        src_name, ids = self.node.inputs
        out = self.node.outputs[0]
        ctype = ctx.cpp_type(ctx.impl.tensor(src_name).dtype)
        take, src = ctx.use(src_name)
        _, ids_var = ctx.use(ids)
        # the store waits for what V wrote (the chain's VECOUT tile carries that itself; a zero slot of the
        # gathered tile does not); what MTE2 wrote comes through the tile's queue (VECIN_VECOUT). Nothing after
        # the store: the next writer of the buffer waits for MTE3 through its AllocTensor (MTE3_V of a VECOUT
        # queue, MTE3_MTE2 of the bound one, which the zero slot's Duplicate follows through AfDedupLoad's
        # MTE2_V)
        lines = [
            take,
            ctx.sync(src_name, "V", "MTE3") if a.get("vector_writes", True) else "",
            f"AfDedupStore<{ctype}>({ctx.gm(out)}, {src}, {ids_var}, {ctx.expr(a['hash_size'])}, "
            f"{ctx.expr(a['first_row'])}, {ctx.expr(a['rows'])}, {ctx.expr(a['width'])}, "
            f"{ctx.expr(a['column'])}, {ctx.expr(a['columns'])}, {ctx.expr(a['pitch'])});",
        ]
        return "\n".join(line for line in lines if line)
