// Positive control of the macro form of tiling data (register/tilingdata_base.h): a tiling function
// that fills a BEGIN_TILING_DATA_DEF class and saves it into the raw tiling buffer.
#include <cstdint>

#include "register/op_impl_registry.h"
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(AfProbeMacroTilingData)
TILING_DATA_FIELD_DEF(uint32_t, totalLength);
TILING_DATA_FIELD_DEF_ARR(uint32_t, 4, tileLengths);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(AfProbeMacro, AfProbeMacroTilingData)

static ge::graphStatus AfProbeMacroTiling(gert::TilingContext* context)
{
    AfProbeMacroTilingData tiling;
    tiling.set_totalLength(static_cast<uint32_t>(context->GetInputShape(0)->GetStorageShape().GetShapeSize()));
    gert::TilingData* raw = context->GetRawTilingData();
    tiling.SaveToBuffer(raw->GetData(), raw->GetCapacity());
    raw->SetDataSize(tiling.GetDataSize());
    context->SetBlockDim(1);
    return ge::GRAPH_SUCCESS;
}

IMPL_OP_OPTILING(AfProbeMacro).Tiling(AfProbeMacroTiling);
}  // namespace optiling
