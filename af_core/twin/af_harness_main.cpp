// CPU-twin harness main, the same for every generated kernel (the kernel is described by the
// kAfHarnessGraph table generated with it; see af_harness_graph.h).
//
// Usage: harness RUN_DIR. RUN_DIR/run.txt holds "core_num ub_size dcache_reserve l2_size l2_line
// l2_ways" (the platform's figures; the L2 ones feed the twin's shared-L2 model), the graph's sizes and
// the byte count of each input; inputs are RUN_DIR/in<i>.bin (raw global-memory bytes,
// Data index order). Runs host tiling (or reads RUN_DIR/tiling.txt), launches the kernel on
// block_dim emulated cores and writes RUN_DIR/out<i>.bin and RUN_DIR/result.json (status, tiling
// data, counters).
#include "kernel_operator.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "af_harness_graph.h"

namespace {

// Global-memory buffers start on a 512-byte boundary, like the blocks a framework's caching
// allocator hands to kernels. The counters do not depend on it: the twin's data-cache model sees
// the device addresses RegisterGm assigns in registration order, not these host addresses.
constexpr std::size_t kGmAlign = 512;

template <typename T>
struct GmAllocator {
    using value_type = T;
    GmAllocator() = default;
    template <typename U>
    GmAllocator(const GmAllocator<U>&) {}
    T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(kGmAlign))); }
    void deallocate(T* p, std::size_t) { ::operator delete(p, std::align_val_t(kGmAlign)); }
    template <typename U>
    bool operator==(const GmAllocator<U>&) const { return true; }
    template <typename U>
    bool operator!=(const GmAllocator<U>&) const { return false; }
};
using GmBuffer = std::vector<uint8_t, GmAllocator<uint8_t>>;

GmBuffer ReadFile(const std::string& path, size_t expected)
{
    GmBuffer data(expected);
    FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr || (expected > 0 && std::fread(data.data(), 1, expected, f) != expected)) {
        std::fprintf(stderr, "harness: cannot read %zu bytes from %s\n", expected, path.c_str());
        std::exit(2);
    }
    std::fclose(f);
    return data;
}

void WriteFile(const std::string& path, const GmBuffer& data)
{
    FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr || (!data.empty() && std::fwrite(data.data(), 1, data.size(), f) != data.size())) {
        std::fprintf(stderr, "harness: cannot write %s\n", path.c_str());
        std::exit(2);
    }
    std::fclose(f);
}

}  // namespace

int main(int argc, char** argv)
{
    const AfHarnessGraph& g = kAfHarnessGraph;
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s RUN_DIR\n", argv[0]);
        return 2;
    }
    const std::string dir = argv[1];
    FILE* run = std::fopen((dir + "/run.txt").c_str(), "r");
    if (run == nullptr) {
        std::fprintf(stderr, "harness: no run.txt in %s\n", dir.c_str());
        return 2;
    }
    long long coreNum = 0, ubSize = 0, dcache = 0, l2Size = 0, l2Line = 0, l2Ways = 0;
    std::vector<int64_t> sizes(g.sizeCount > 0 ? g.sizeCount : 1, 0);
    std::vector<long long> inBytes(g.inputCount > 0 ? g.inputCount : 1, 0);
    bool ok = std::fscanf(run, "%lld %lld %lld %lld %lld %lld", &coreNum, &ubSize, &dcache, &l2Size, &l2Line,
                          &l2Ways) == 6;
    ok = ok && l2Size > 0 && l2Line > 0 && l2Line <= 0xFFFFFFFFLL && l2Ways > 0 && l2Ways <= 0xFFFFFFFFLL;
    for (int i = 0; ok && i < g.sizeCount; ++i) {
        long long v = 0;
        ok = std::fscanf(run, "%lld", &v) == 1;
        sizes[i] = v;
    }
    for (int i = 0; ok && i < g.inputCount; ++i) {
        ok = std::fscanf(run, "%lld", &inBytes[i]) == 1;
    }
    std::fclose(run);
    if (!ok) {
        std::fprintf(stderr, "harness: malformed run.txt\n");
        return 2;
    }
    FILE* result = std::fopen((dir + "/result.json").c_str(), "w");
    std::vector<int64_t> tiling(g.fieldCount, 0);
    uint32_t workspaceSize = 0;
    uint32_t blockDim = 0;
    // RUN_DIR/tiling.txt, when present, holds tiling data computed elsewhere (a case chosen by the
    // caller); otherwise the generated host tiling chooses.
    int64_t rc = 0;
    FILE* given = std::fopen((dir + "/tiling.txt").c_str(), "r");
    if (given != nullptr) {
        for (int i = 0; i < g.fieldCount; ++i) {
            long long v = 0;
            if (std::fscanf(given, "%lld", &v) != 1) {
                std::fprintf(stderr, "harness: malformed tiling.txt\n");
                return 2;
            }
            tiling[i] = v;
        }
        std::fclose(given);
        workspaceSize = static_cast<uint32_t>(tiling[g.workspaceSizeField]);
        blockDim = static_cast<uint32_t>(tiling[g.blockDimField]);
    } else {
        rc = g.tiling(sizes.data(), tiling.data(), &workspaceSize, &blockDim, static_cast<uint32_t>(coreNum),
                      static_cast<uint32_t>(ubSize));
    }
    if (rc != 0) {
        std::fprintf(result, "{\"status\": \"tiling\", \"code\": %lld}\n", static_cast<long long>(rc));
        std::fclose(result);
        return 0;
    }
    const int outRows = g.outputCount > 0 ? g.outputCount : 1;
    std::vector<int64_t> dims(static_cast<size_t>(outRows) * g.maxRank, 0);
    std::vector<int64_t> ranks(outRows, 0);
    g.inferShape(sizes.data(), dims.data(), ranks.data());
    AfTwin::Configure(static_cast<uint32_t>(ubSize), static_cast<uint32_t>(dcache));
    AfTwin::ConfigureL2(static_cast<uint64_t>(l2Size), static_cast<uint32_t>(l2Line), static_cast<uint32_t>(l2Ways));
    std::vector<GmBuffer> buffers;  // inputs, then outputs
    for (int i = 0; i < g.inputCount; ++i) {
        buffers.push_back(ReadFile(dir + "/in" + std::to_string(i) + ".bin", static_cast<size_t>(inBytes[i])));
    }
    for (int o = 0; o < g.outputCount; ++o) {
        int64_t n = 1;
        for (int64_t d = 0; d < ranks[o]; ++d) {
            n *= dims[static_cast<size_t>(o) * g.maxRank + d];
        }
        buffers.emplace_back(static_cast<size_t>(n) * g.outputs[o].itemsize, 0);
    }
    GmBuffer workspace(workspaceSize > 0 ? workspaceSize : 1, 0);
    GmBuffer tilingGm(tiling.size() * sizeof(int64_t));
    std::memcpy(tilingGm.data(), tiling.data(), tilingGm.size());
    for (int i = 0; i < g.inputCount + g.outputCount; ++i) {
        const char* name = i < g.inputCount ? g.inputs[i].name : g.outputs[i - g.inputCount].name;
        AfTwin::RegisterGm(buffers[i].data(), buffers[i].size(), name);
    }
    if (workspaceSize > 0) {
        AfTwin::RegisterGm(workspace.data(), workspaceSize, "workspace");
    }
    AfTwin::RegisterGm(tilingGm.data(), tilingGm.size(), "tiling");
    // Inputs and the tiling are only read by a kernel: the race check need not shadow them, and a write to
    // one is reported (gm-readonly).
    for (int i = 0; i < g.inputCount; ++i) {
        if (!buffers[i].empty()) AfTwin::SetGmReadOnly(buffers[i].data());
    }
    AfTwin::SetGmReadOnly(tilingGm.data());
    AfTwin::SetTilingKey(tiling[g.tilingKeyField]);
    std::vector<uint8_t*> gm;
    for (GmBuffer& b : buffers) {
        gm.push_back(b.data());
    }
    AfTwin::Launch(blockDim, [&]() { g.kernel(gm.data(), workspace.data(), tilingGm.data()); });
    for (int o = 0; o < g.outputCount; ++o) {
        WriteFile(dir + "/out" + std::to_string(o) + ".bin", buffers[g.inputCount + o]);
    }
    std::fprintf(result, "{\"status\": \"ok\", \"struct\": {");
    for (int i = 0; i < g.fieldCount; ++i) {
        std::fprintf(result, "%s\"%s\": %lld", i == 0 ? "" : ", ", g.fields[i], static_cast<long long>(tiling[i]));
    }
    std::fprintf(result, "}, \"counters\": ");
    AfTwin::WriteReportJson(result);
    std::fprintf(result, "}\n");
    std::fclose(result);
    return 0;
}
