// af_twin/reg.h
// Emulates: the register-based vector API of the A5 vector core (namespace AscendC::Reg) that generated
// vector functions use, and the SIMD VF launch asc_vf_call<func>(args...). A vector register holds 256
// bytes (64 lanes of a 4-byte type, 128 of a 2-byte type, 256 of a 1-byte type):
//   RegTensor<T>, MaskReg, UpdateMask<T>, CreateMask<T, MaskPattern>, LoadAlign / StoreAlign (DIST_NORM),
//   the register Gather (Reg::Gather from a UB base by element indices, reg_gather.h),
//   Add Sub Mul Div Max Min, Adds Muls Maxs Mins, Abs Exp Ln Sqrt Relu Neg, Truncate, Duplicate,
//   Compare / Compares (into a MaskReg), Select (by a MaskReg), Cast between float and half / bfloat16_t
//   (RegLayout::ZERO: the 2-byte elements sit in the even lanes, as LoadAlign DIST_UNPACK_B16 puts them and
//   StoreAlign DIST_PACK_B32 takes them) and between float and int32_t, and the 2-byte integer / half <->
//   bfloat16_t pairs of the part of reg_compute.h before Cast (int16_t <-> float, 2-byte <-> 4-byte integers, int16_t <->
//   half, half <-> bfloat16_t) and the 1-byte <-> 2-byte pairs (int8_t / uint8_t in the even byte lanes,
//   LoadAlign DIST_UNPACK_B8, StoreAlign DIST_PACK_B16; or every fourth, LoadAlign DIST_UNPACK4_B8, for a
//   byte widened to 4 bytes in two Casts); the block-masked LoadAlign<T,
//   DataCopyMode::DATA_BLOCK_COPY>, Reduce (SUM / MAX / MIN) and StoreAlign DIST_FIRST_ELEMENT_B32 / B16 (reg_reduce.h);
//   And / Or / Xor / Not (reg_bitwise.h), and their MaskReg overloads (reg_mask_logic.h); LoadUnAlignPre /
//   LoadUnAlign with an UnalignRegForLoad (reg_unaligned_load.h); the moves of a MaskReg to and from a
//   bit-mask tile (reg_mask_moves.h).
// This header includes one header per family, in dependency order (reg_core.h first: the register types,
// the checks, and the helpers through which every register load and store is counted).
// Semantics: every computing instruction takes a mask and zeroes the lanes the mask leaves off
// (MaskMergeMode::ZEROING, the official default); half / bfloat16_t compute in float and round to nearest
// even, integers wrap, Max / Min propagate NaN -- the same per-element rules as the memory-based API in
// vector.h, so a chain gives the same bits in registers and in UB.
// Checks, at compile time: the element types of every call against the 3510 register table in api_dtypes.h
// (AcceptsRegX, read from impl/basic_api/reg_compute/dav_3510); the pointer type of LoadAlign / StoreAlign equals
// the register's element type; only DIST_NORM and RegTraitNumOne (and the RegTraitNumTwo pair of 64-bit elements
// below); the arguments of asc_vf_call are raw pointers or arithmetic values (the documented limit). At run time: a
// Reg call outside a VF launched by asc_vf_call (reg-outside-vf); LoadAlign / StoreAlign addresses start 32-byte
// aligned (ub-misaligned) and the bytes they touch -- all 256 for a load, the masked-on lanes for a store -- lie in
// one live TPipe buffer of the running core (ub-out-of-bounds); a mask that was never set or was made for another
// element width (reg-mask); reading a register lane that no instruction under the current mask wrote, e.g. a store
// whose mask reaches lanes computed under a narrower mask (reg-mask).
// Counts: vf_calls, reg_loads / reg_stores (instructions) with reg_load_bytes (256 per load) and
// reg_store_bytes (the masked-on bytes), reg_compute (computing, compare, select, duplicate and cast
// instructions), reg_masks (UpdateMask / CreateMask), reg_cycles (modelled: each load, store and
// computing instruction takes ceil(vector elements / the documented elements per cycle), see RegRate;
// mask instructions are not in that table and count nothing; no dual issue).
// Cast traits: the twin emulates the CastTrait values the documented table lists for its pairs with
// ZEROING, NO_SAT for float narrowing, bfloat16_t -> half and 4-byte -> 2-byte integers, SAT for float ->
// int32_t and float / half -> int16_t (static_assert otherwise).
// 64-bit elements: RegTensor<int64_t / uint64_t> (RegTraitNumOne, 32 lanes) with UpdateMask, LoadAlign /
// StoreAlign (DIST_NORM), Duplicate, Add / Sub / Mul / Max / Min, And / Or / Xor / Not, Adds / Muls / Maxs /
// Mins (Duplicate + the binary instruction, as AddsImpl ... MinsImpl do), Compare / Compares (Duplicate +
// Compare) / Select and, on int64_t, Abs / Relu / Neg -- each computed half by half over a register pair as the
// 3510 sequence does and counted per call of it (see "64-bit lanes over a register pair").
// The dual load LoadAlign(dst0, dst1, src) with DIST_DINTLV_B8 / B16 / B32 (even / odd elements).
// RegTensor<int64_t, RegTraitNumTwo> (the low and high words of 64 elements) with its LoadAlign (the dual load)
// and its Cast to float (see the Cast of a RegTraitNumTwo register).
// Not emulated: the other LoadDist / StoreDist modes, post-update and AddrReg addressing, MERGING masks,
// other RegTraitNumTwo forms and the other 64-bit instructions, other Cast pairs (those with 1-byte types among them) and RegLayout::ONE, the widening and 64-bit Reduce forms, the precision-mode template
// arguments; the lanes of one instruction are computed in index order.
#ifndef AF_TWIN_REG_H
#define AF_TWIN_REG_H

#include "reg_core.h"
#include "reg_mask.h"
#include "reg_load_store.h"
#include "reg_compute.h"
#include "reg_reduce.h"
#include "reg_bitwise.h"
#include "reg_mask_logic.h"
#include "reg_gather.h"
#include "reg_unaligned_load.h"
#include "reg_mask_moves.h"

#endif  // AF_TWIN_REG_H
