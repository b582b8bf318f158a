// af_twin/reg_mask.h
// One family of the register API that af_twin/reg.h includes (reg.h says what the twin emulates, checks and
// counts): UpdateMask and CreateMask.
#ifndef AF_TWIN_REG_MASK_H
#define AF_TWIN_REG_MASK_H

#include "reg_core.h"

namespace AscendC {
namespace Reg {

// ---------------------------------------------------------------------------
// Masks.

template <typename T, const RegTrait& regTrait = RegTraitNumOne>
inline MaskReg UpdateMask(uint32_t& scalarValue) {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8,
                  "UpdateMask: element type must be b8/b16/b32/b64");
    static_assert(sizeof(T) != 8 || regTrait.REG_NUM == 1, "UpdateMask: the twin emulates RegTraitNumOne");
    AfTwin::CoreCtx* c = AfTwin::RegCore("UpdateMask");
    ++c->c.regMasks;
    constexpr uint32_t lanes = LanesOf<T>();
    const uint32_t on = scalarValue < lanes ? scalarValue : lanes;
    MaskReg m;
    m.afWidth = sizeof(T);
    for (uint32_t i = 0; i < on; ++i) m.afOn[i] = true;
    scalarValue = scalarValue < lanes ? 0u : scalarValue - lanes;
    return m;
}

template <typename T, MaskPattern mode = MaskPattern::ALL, const RegTrait& regTrait = RegTraitNumOne>
inline MaskReg CreateMask() {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4, "CreateMask: the twin emulates 1-, 2- and "
                  "4-byte elements only");
    static_assert(mode != MaskPattern::M3 && mode != MaskPattern::M4, "CreateMask: M3 / M4 are not emulated");
    AfTwin::CoreCtx* c = AfTwin::RegCore("CreateMask");
    ++c->c.regMasks;
    constexpr uint32_t lanes = LanesOf<T>();
    uint32_t on = lanes;
    switch (mode) {
        case MaskPattern::ALL: on = lanes; break;
        case MaskPattern::ALLF: on = 0; break;
        case MaskPattern::VL1: on = 1; break;
        case MaskPattern::VL2: on = 2; break;
        case MaskPattern::VL3: on = 3; break;
        case MaskPattern::VL4: on = 4; break;
        case MaskPattern::VL8: on = 8; break;
        case MaskPattern::VL16: on = 16; break;
        case MaskPattern::VL32: on = 32; break;
        case MaskPattern::VL64: on = 64; break;
        case MaskPattern::VL128: on = 128; break;
        case MaskPattern::H: on = lanes / 2; break;
        case MaskPattern::Q: on = lanes / 4; break;
        default: break;
    }
    if (on > lanes) on = lanes;
    MaskReg m;
    m.afWidth = sizeof(T);
    for (uint32_t i = 0; i < on; ++i) m.afOn[i] = true;
    return m;
}

}  // namespace Reg
}  // namespace AscendC

#endif  // AF_TWIN_REG_MASK_H
