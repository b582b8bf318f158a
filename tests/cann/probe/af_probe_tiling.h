// The tiling data and compile info of the AfProbe control operator (shared by its host and kernel code).
#ifndef AF_PROBE_TILING_H
#define AF_PROBE_TILING_H

#include <cstdint>

struct AfProbeTilingData {
    uint32_t totalLength;
    uint32_t tileLength;
    uint32_t ubSize;
};

struct AfProbeCompileInfo {
    uint32_t coreNum;
    uint64_t ubSize;
    uint32_t sysWorkspaceSize;
};

#endif  // AF_PROBE_TILING_H
