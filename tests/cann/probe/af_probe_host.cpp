// Positive control of the host check: a tiling function, its TilingParse, infer-shape, infer-datatype
// and the OpDef registration of one operator, written against the CANN host API. It must pass.
#include <cstdint>

#include "af_probe_tiling.h"
#include "register/op_def_registry.h"
#include "register/op_impl_registry.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
static ge::graphStatus AfProbeTiling(gert::TilingContext* context)
{
    const gert::StorageShape* xShape = context->GetInputShape(0);
    if (xShape == nullptr) {
        return ge::GRAPH_FAILED;
    }
    const int64_t rows = xShape->GetStorageShape().GetDim(0);
    const int64_t cols = xShape->GetStorageShape().GetDim(1);
    const AfProbeCompileInfo* info = context->GetCompileInfo<AfProbeCompileInfo>();
    AfProbeTilingData* tiling = context->GetTilingData<AfProbeTilingData>();
    tiling->totalLength = static_cast<uint32_t>(rows * cols);
    tiling->tileLength = static_cast<uint32_t>(cols);
    tiling->ubSize = static_cast<uint32_t>(info->ubSize);
    context->GetRawTilingData()->SetDataSize(sizeof(AfProbeTilingData));
    context->SetBlockDim(info->coreNum);
    context->SetTilingKey(1);
    size_t* workspaces = context->GetWorkspaceSizes(1);
    workspaces[0] = info->sysWorkspaceSize;
    return ge::GRAPH_SUCCESS;
}

static ge::graphStatus AfProbeTilingParse(gert::TilingParseContext* context)
{
    AfProbeCompileInfo* info = context->GetCompiledInfo<AfProbeCompileInfo>();
    auto platform = platform_ascendc::PlatformAscendC(context->GetPlatformInfo());
    info->coreNum = platform.GetCoreNumAiv();
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, info->ubSize);
    info->sysWorkspaceSize = platform.GetLibApiWorkSpaceSize();
    return ge::GRAPH_SUCCESS;
}

IMPL_OP_OPTILING(AfProbe).Tiling(AfProbeTiling).TilingParse<AfProbeCompileInfo>(AfProbeTilingParse);
}  // namespace optiling

namespace ge {
static ge::graphStatus AfProbeInferShape(gert::InferShapeContext* context)
{
    const gert::Shape* x = context->GetInputShape(0);
    gert::Shape* y = context->GetOutputShape(0);
    if (x == nullptr || y == nullptr) {
        return ge::GRAPH_FAILED;
    }
    *y = *x;
    return ge::GRAPH_SUCCESS;
}

static ge::graphStatus AfProbeInferDataType(gert::InferDataTypeContext* context)
{
    return context->SetOutputDataType(0, context->GetInputDataType(0));
}

IMPL_OP_INFERSHAPE(AfProbe).InferShape(AfProbeInferShape).InferDataType(AfProbeInferDataType);
}  // namespace ge

namespace ops {
class AfProbe : public OpDef {
public:
    explicit AfProbe(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->Input("index").ParamType(REQUIRED).DataType({ge::DT_INT32}).Format({ge::FORMAT_ND});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT}).Format({ge::FORMAT_ND});
        this->AICore().AddConfig("ascend950");
    }
};

OP_ADD(AfProbe);
}  // namespace ops
