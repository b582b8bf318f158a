// A fake of the few CANN host types a generated tiling function uses, to RUN it on the CPU.
//
// The real headers (metadef) declare these classes over the runtime's kernel-context layout, which
// only CANN's libraries build. The type check runs the generated sources against the real headers;
// this fake runs the same sources to compare what they compute with AutofuseTiling. It offers only
// the calls the real TilingContext offers, with the same signatures, so a source that type-checks
// against the real headers compiles here as well.
#ifndef AF_FAKE_GERT_H
#define AF_FAKE_GERT_H
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ge {
using graphStatus = uint32_t;
constexpr graphStatus GRAPH_SUCCESS = 0;
constexpr graphStatus GRAPH_FAILED = 0xFFFFFFFFu;
}  // namespace ge

namespace fe {
struct PlatFormInfos {
    uint32_t core_num = 0;
    uint64_t ub_size = 0;
    uint32_t system_workspace = 0;
};
}  // namespace fe

namespace gert {
class Shape {
public:
    std::vector<int64_t> dims;
    size_t GetDimNum() const { return dims.size(); }
    int64_t GetDim(size_t i) const { return i < dims.size() ? dims[i] : 0; }
};

class StorageShape {
public:
    Shape storage;
    const Shape& GetStorageShape() const { return storage; }
};

class TilingContext {
public:
    std::vector<StorageShape> inputs;
    const void* compile_info = nullptr;
    std::vector<int64_t> tiling;  // int64 words, as many as the fake's capacity
    size_t workspace[1] = {0};
    uint32_t block_dim = 0;
    uint64_t tiling_key = UINT64_MAX;
    uint32_t dyn_ub = 0;

    template <typename T>
    const T* GetCompileInfo() const { return static_cast<const T*>(compile_info); }
    const StorageShape* GetInputShape(const size_t index) const
    {
        return index < inputs.size() ? &inputs[index] : nullptr;
    }
    template <typename T>
    auto GetTilingData() -> T*
    {
        if (tiling.size() * sizeof(int64_t) < sizeof(T)) {
            return nullptr;
        }
        return reinterpret_cast<T*>(tiling.data());
    }
    size_t* GetWorkspaceSizes(const size_t workspace_count) { return workspace_count == 1 ? workspace : nullptr; }
    ge::graphStatus SetSimdNumBlocks(const uint32_t n) { block_dim = n; return ge::GRAPH_SUCCESS; }
    ge::graphStatus SetTilingKey(const uint64_t key) { tiling_key = key; return ge::GRAPH_SUCCESS; }
    ge::graphStatus SetDynUBufSize(const uint32_t n) { dyn_ub = n; return ge::GRAPH_SUCCESS; }
};

class TilingParseContext {
public:
    void* compile_info = nullptr;
    fe::PlatFormInfos* platform = nullptr;
    template <typename T>
    T* GetCompiledInfo() { return static_cast<T*>(compile_info); }
    fe::PlatFormInfos* GetPlatformInfo() const { return platform; }
};
}  // namespace gert

// IMPL_OP_OPTILING(Op).Tiling(f).TilingParse<CompileInfo>(p): the one registration the harness runs.
struct AfFakeOpImpl {
    ge::graphStatus (*tiling)(gert::TilingContext*) = nullptr;
    ge::graphStatus (*parse)(gert::TilingParseContext*) = nullptr;
    void* (*make_compile_info)() = nullptr;
    const char* op = nullptr;

    AfFakeOpImpl& Tiling(ge::graphStatus (*f)(gert::TilingContext*)) { tiling = f; return *this; }
    template <typename T>
    AfFakeOpImpl& TilingParse(ge::graphStatus (*f)(gert::TilingParseContext*))
    {
        parse = f;
        make_compile_info = []() -> void* { return new T(); };
        return *this;
    }
};
AfFakeOpImpl& AfFakeRegistered();
inline AfFakeOpImpl& AfFakeRegister(const char* op)
{
    AfFakeRegistered().op = op;
    return AfFakeRegistered();
}
#define IMPL_OP_OPTILING(op) static AfFakeOpImpl& af_fake_registration_##op = AfFakeRegister(#op)
#endif
