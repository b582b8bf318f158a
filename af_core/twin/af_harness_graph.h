// af_harness_graph.h: what the CPU-twin harness needs to know of one generated kernel.
//
// The harness main (af_harness_main.cpp) does not depend on the graph: it is compiled once per
// twin-header version and flag set and linked with each kernel. A small table generated per
// graph (harness.cpp) describes the kernel: its sizes, inputs, outputs, tiling-data fields, and
// calls into the host tiling, the shape inference and the kernel.
#ifndef AF_HARNESS_GRAPH_H
#define AF_HARNESS_GRAPH_H

#include <cstddef>
#include <cstdint>

struct AfHarnessIo {
    const char* name;  // the Data or Output node, as registered with the twin
    int64_t itemsize;  // bytes per element in global memory
};

struct AfHarnessGraph {
    int32_t sizeCount;
    int32_t inputCount;
    int32_t outputCount;
    int32_t fieldCount;   // int64 fields of AutofuseTilingData
    int32_t maxRank;      // row length of AutofuseInferShape's dims
    int32_t tilingKeyField;
    int32_t blockDimField;
    int32_t workspaceSizeField;
    const AfHarnessIo* inputs;
    const AfHarnessIo* outputs;
    const char* const* fields;
    // AutofuseTiling with the sizes in order; data is fieldCount int64 values
    int64_t (*tiling)(const int64_t* sizes, int64_t* data, uint32_t* workspaceSize, uint32_t* blockDim,
                      uint32_t coreNum, uint32_t ubSize);
    int64_t (*inferShape)(const int64_t* sizes, int64_t* dims, int64_t* ranks);
    // the kernel with gm = inputs then outputs (inputCount + outputCount buffers)
    void (*kernel)(uint8_t* const* gm, uint8_t* workspace, uint8_t* tiling);
};

extern "C" const AfHarnessGraph kAfHarnessGraph;

#endif  // AF_HARNESS_GRAPH_H
