// Runs a generated TilingParse once and TilingFunc per line of stdin, against the fake context.
// stdin: "core_num ub_size system_workspace fields" once, then per call "n_inputs (rank dims...)*".
// stdout per call: "rc key block_dim workspace dyn_ub word0 word1 ...".
#include <cstdio>
#include <iostream>
#include "af_fake_gert.h"

AfFakeOpImpl& AfFakeRegistered()
{
    static AfFakeOpImpl impl;
    return impl;
}

int main()
{
    fe::PlatFormInfos platform;
    size_t fields = 0;
    if (!(std::cin >> platform.core_num >> platform.ub_size >> platform.system_workspace >> fields)) {
        return 2;
    }
    AfFakeOpImpl& impl = AfFakeRegistered();
    if (impl.tiling == nullptr || impl.parse == nullptr) {
        return 3;
    }
    void* info = impl.make_compile_info();
    gert::TilingParseContext parse;
    parse.compile_info = info;
    parse.platform = &platform;
    if (impl.parse(&parse) != ge::GRAPH_SUCCESS) {
        return 4;
    }
    size_t n = 0;
    while (std::cin >> n) {
        gert::TilingContext context;
        context.compile_info = info;
        context.tiling.assign(fields, -1);
        context.inputs.resize(n);
        for (size_t i = 0; i < n; ++i) {
            size_t rank = 0;
            std::cin >> rank;
            context.inputs[i].storage.dims.resize(rank);
            for (size_t d = 0; d < rank; ++d) {
                std::cin >> context.inputs[i].storage.dims[d];
            }
        }
        const ge::graphStatus rc = impl.tiling(&context);
        std::printf("%u %llu %u %zu %u", rc == ge::GRAPH_SUCCESS ? 0u : 1u,
                    static_cast<unsigned long long>(context.tiling_key), context.block_dim, context.workspace[0],
                    context.dyn_ub);
        for (int64_t word : context.tiling) {
            std::printf(" %lld", static_cast<long long>(word));
        }
        std::printf("\n");
    }
    return 0;
}
