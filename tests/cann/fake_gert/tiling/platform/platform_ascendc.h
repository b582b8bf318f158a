// fake: the platform queries a generated TilingParse makes, answered from fe::PlatFormInfos.
#ifndef AF_FAKE_PLATFORM_ASCENDC_H
#define AF_FAKE_PLATFORM_ASCENDC_H
#include "af_fake_gert.h"

namespace platform_ascendc {
enum class CoreMemType { L0_A, L0_B, L0_C, L1, L2, UB, HBM };
class PlatformAscendC {
public:
    explicit PlatformAscendC(fe::PlatFormInfos* info) : info_(info) {}
    uint32_t GetCoreNumAiv() const { return info_->core_num; }
    void GetCoreMemSize(const CoreMemType type, uint64_t& size) const { size = type == CoreMemType::UB ? info_->ub_size : 0; }
    uint32_t GetLibApiWorkSpaceSize() const { return info_->system_workspace; }

private:
    fe::PlatFormInfos* info_;
};
}  // namespace platform_ascendc
#endif
