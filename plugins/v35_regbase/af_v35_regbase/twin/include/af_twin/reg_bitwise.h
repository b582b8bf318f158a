// af_twin/reg_bitwise.h
// One family of the register API that af_twin/reg.h includes (reg.h says what the twin emulates, checks and
// counts): And / Or / Xor / Not of registers.
#ifndef AF_TWIN_REG_BITWISE_H
#define AF_TWIN_REG_BITWISE_H

#include "reg_reduce.h"

namespace AscendC {
namespace Reg {

// ---------------------------------------------------------------------------
// Bitwise instructions (a run's BitwiseAnd / Or / Xor / Not): And / Or / Xor of two registers and Not of one,
// on the bits of each masked-on lane, in the element types of the 3510 AndImpl / OrImpl / XorImpl / NotImpl
// (af_twin/api_dtypes.h). The throughput table gives one vector per cycle for each (256 / sizeof(T) elements):
// RegRate lists no rate, which counts the same one cycle. On int64_t / uint64_t the 3510 implementation
// applies the op to each half of a register pair (AndB64Impl ... NotB64Impl) -- the same bits as on the whole
// lane -- and the twin counts that sequence (AfTwin::RegPairSequence).

#define AF_TWIN_REG_BITS2(NAME, OP)                                                                        \
    template <typename T = DefaultType, MaskMergeMode mode = MaskMergeMode::ZEROING, typename U>          \
    inline void NAME(U& dstReg, U& srcReg0, U& srcReg1, MaskReg& mask) {                                   \
        using ActualT = typename U::ActualT;                                                               \
        static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, ActualT>::value,              \
                      "Reg::" #NAME ": T type is not the register's element type");                        \
        static_assert(mode == MaskMergeMode::ZEROING, "Reg::" #NAME ": the twin emulates ZEROING only");   \
        static_assert(AfTwin::AcceptsReg##NAME<ActualT>, "Reg::" #NAME ": element type not accepted by "   \
                      "the 3510 register implementation (af_twin/api_dtypes.h)");                          \
        AfTwin::RegPairSequence<ActualT>(#NAME);                                                           \
        AfTwin::RegMap2(#NAME, dstReg, srcReg0, srcReg1, mask,                                             \
                        [](ActualT a, ActualT b) { return static_cast<ActualT>(a OP b); });               \
    }

AF_TWIN_REG_BITS2(And, &)
AF_TWIN_REG_BITS2(Or, |)
AF_TWIN_REG_BITS2(Xor, ^)
#undef AF_TWIN_REG_BITS2

template <typename T = DefaultType, MaskMergeMode mode = MaskMergeMode::ZEROING, typename U>
inline void Not(U& dstReg, U& srcReg, MaskReg& mask) {
    using ActualT = typename U::ActualT;
    static_assert(std::is_same<T, DefaultType>::value || std::is_same<T, ActualT>::value,
                  "Reg::Not: T type is not the register's element type");
    static_assert(mode == MaskMergeMode::ZEROING, "Reg::Not: the twin emulates ZEROING only");
    static_assert(AfTwin::AcceptsRegNot<ActualT>, "Reg::Not: element type not accepted by the 3510 register "
                  "implementation (af_twin/api_dtypes.h)");
    AfTwin::RegPairSequence<ActualT>("Not");
    AfTwin::RegMap1("Not", dstReg, srcReg, mask, [](ActualT a) {
        unsigned char bytes[sizeof(ActualT)];
        std::memcpy(bytes, &a, sizeof(ActualT));
        for (unsigned char& b : bytes) b = static_cast<unsigned char>(~b);
        ActualT r;
        std::memcpy(&r, bytes, sizeof(ActualT));
        return r;
    });
}

}  // namespace Reg
}  // namespace AscendC

#endif  // AF_TWIN_REG_BITWISE_H
