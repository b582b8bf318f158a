// af_twin/reg_mask_logic.h
// One family of the register API that af_twin/reg.h includes (reg.h says what the twin emulates, checks and
// counts): And / Or / Xor / Not of mask registers.
#ifndef AF_TWIN_REG_MASK_LOGIC_H
#define AF_TWIN_REG_MASK_LOGIC_H

#include "reg_bitwise.h"

namespace AscendC {
namespace Reg {

// ---------------------------------------------------------------------------
// Mask-register logic (a run's LogicalAnd / Or / Xor / Not on predicates made by Compare): And / Or / Xor of
// two MaskRegs and Not of one, the non-template overloads of kernel_reg_compute_maskreg_intf.h (MaskAndImpl /
// MaskOrImpl / MaskXorImpl / MaskNotImpl of the 3510 implementation: pand / por / pxor / pnot). The mask
// argument says which predicate bits take part; a bit it leaves off is 0 in dst (zeroing, as Move with a
// mask documents: "invalid elements filled with 0"), so Not never turns on a lane past a tail. The twin keeps
// one predicate per lane: the sources and the mask must be masks of one element width (the width of a run's
// comparisons), else reg-mask -- a predicate of another width would pair unrelated bits. Counts one mask
// instruction (reg_masks) of one cycle each: table 5 of the throughput appendix (MaskReg计算) gives 1 cycle
// for every MaskReg computation it lists and does not list these four.

}  // namespace Reg
}  // namespace AscendC

namespace AfTwin {

inline void RegMaskLogic(const char* api, AscendC::Reg::MaskReg& dst, const AscendC::Reg::MaskReg& src0,
                         const AscendC::Reg::MaskReg* src1, const AscendC::Reg::MaskReg& mask, int op) {
    CoreCtx* c = RegCore(api);
    auto check = [api](const AscendC::Reg::MaskReg& m, const char* operand) {
        if (m.afWidth == 0)
            Fail("reg-mask", "Reg::%s: mask %s was never set (UpdateMask, CreateMask or Compare make a mask)", api,
                 operand);
    };
    check(mask, "mask");
    check(src0, "src0");
    if (src1 != nullptr) check(*src1, "src1");
    const uint32_t width = mask.afWidth;
    if (src0.afWidth != width || (src1 != nullptr && src1->afWidth != width))
        Fail("reg-mask", "Reg::%s: the masks were made for %u-, %u- and %u-byte elements (mask, src0, src1); the "
             "twin combines masks of one element width only", api, width, src0.afWidth,
             src1 != nullptr ? src1->afWidth : src0.afWidth);
    ++c->c.regMasks;
    c->c.regCycles += 1;
    AscendC::Reg::MaskReg out;
    out.afWidth = width;
    for (uint32_t i = 0; i < AscendC::Reg::kVecBytes / width; ++i) {
        if (!mask.afOn[i]) continue;
        const bool a = src0.afOn[i];
        const bool b = src1 != nullptr && src1->afOn[i];
        out.afOn[i] = op == 0 ? (a && b) : op == 1 ? (a || b) : op == 2 ? (a != b) : !a;
    }
    dst = out;
}

}  // namespace AfTwin

namespace AscendC {
namespace Reg {

inline void And(MaskReg& dst, MaskReg& src0, MaskReg& src1, MaskReg& mask) {
    AfTwin::RegMaskLogic("And", dst, src0, &src1, mask, 0);
}
inline void Or(MaskReg& dst, MaskReg& src0, MaskReg& src1, MaskReg& mask) {
    AfTwin::RegMaskLogic("Or", dst, src0, &src1, mask, 1);
}
inline void Xor(MaskReg& dst, MaskReg& src0, MaskReg& src1, MaskReg& mask) {
    AfTwin::RegMaskLogic("Xor", dst, src0, &src1, mask, 2);
}
inline void Not(MaskReg& dst, MaskReg& src, MaskReg& mask) { AfTwin::RegMaskLogic("Not", dst, src, nullptr, mask, 3); }

}  // namespace Reg
}  // namespace AscendC

#endif  // AF_TWIN_REG_MASK_LOGIC_H
