// Shared pieces of the SIMT lanes generated for IndirectLoad.
//
// SIMT lanes address global memory (and UB) through raw pointers. On the
// device the access macros below are plain dereferences; on the CPU twin
// (AF_CPU_TWIN) they go through the twin's checked, counted accessors, and
// AF_SIMT_CHECK_INDEX reports an index outside [0, n) that need_check_bound
// would not have caught (on the device such a read is undefined).
#ifndef AF_SIMT_COMMON_H
#define AF_SIMT_COMMON_H

#if defined(AF_CPU_TWIN)
#define AF_SIMT_GM_LOAD(p) (AfTwin::SimtGmLoad(p))
#define AF_SIMT_GM_STORE(p, v) (AfTwin::SimtGmStore((p), (v)))
#define AF_SIMT_UB_STORE(p, v) (AfTwin::SimtUbStore((p), (v)))
#define AF_SIMT_CHECK_INDEX(i, n, what)                                                             \
    do {                                                                                            \
        if ((i) < 0 || (i) >= (n)) {                                                                \
            AfTwin::Fail("gather-out-of-range",                                                     \
                         "%s: index %lld is outside [0, %lld) and need_check_bound is off", (what), \
                         static_cast<long long>(i), static_cast<long long>(n));                     \
        }                                                                                           \
    } while (0)
#else
#define AF_SIMT_GM_LOAD(p) (*(p))
#define AF_SIMT_GM_STORE(p, v) (*(p) = (v))
#define AF_SIMT_UB_STORE(p, v) (*(p) = (v))
#define AF_SIMT_CHECK_INDEX(i, n, what) ((void)0)
#endif

// Most threads one SIMT VF may launch on SoC 3510.
constexpr int64_t AF_SIMT_MAX_THREADS = 2048;

#endif  // AF_SIMT_COMMON_H
