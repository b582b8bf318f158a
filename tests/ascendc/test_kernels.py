"""Every kernel of the broad set (kernel_set.py) type-checks against the official headers.

The selected kernels are generated and checked once per test run, two g++ at a
time; each test then reads its own verdict, so every failing kernel is named.
KNOWN_FAILING lists the kernels that fail today with their first error; they
are strict xfails: fixing one turns its test red until its entry is removed.
No kernel, failing or not, may fail in our stand-ins (that would be a gap of
the check, not of the kernel).
"""

from __future__ import annotations

import pytest
from kernel_set import kernel_cases

from af_core.autofuser import Autofuser
from af_core.platform import reset_platform

CASES = {c.name: c for c in kernel_cases()}

# First errors (paths relative to the asc-devkit tree). The SIMT one hides a second error behind it:
# GlobalTensor::GetPhyAddr() returns `const __gm__ T*` (include/basic_api/kernel_tensor.h) and the SIMT
# entry's parameters are non-const (the official simt_stub.h reports "invalid conversion from
# 'const T*' to 'T*'" once LAUNCH_BOUND is replaced by __launch_bounds__).
SIMT = ("kernel.cpp: error: expected constructor, destructor, or type conversion before '(' token "
        "(LAUNCH_BOUND is no AscendC macro; the headers know __launch_bounds__)")
ABS = ("impl/basic_api/dav_3510/kernel_operator_vec_unary_impl.h:597:72: error: static assertion failed: "
       "current data type is not supported on current device! (Abs on bfloat16)")
RELU = ("impl/basic_api/dav_3510/kernel_operator_vec_unary_impl.h:719:55: error: static assertion failed: "
        "current data type is not supported on current device! (Relu on int16)")
MUL = ("impl/basic_api/dav_3510/kernel_operator_vec_binary_continuous_impl.h:121:23: error: static assertion "
       "failed: current data type is not supported on current device! (Mul on int8/uint8)")
ADDS = ("impl/basic_api/dav_3510/kernel_operator_vec_binary_scalar_impl.h:246:116: error: static assertion failed: "
        "Adds not support current datatype! (uint16/uint32)")
MULS = ("impl/basic_api/dav_3510/kernel_operator_vec_binary_scalar_impl.h:300:108: error: static assertion failed: "
        "Muls not support current datatype! (int8/uint8/uint16/uint32)")
REDUCESUM = ("impl/basic_api/dav_3510/kernel_operator_vec_reduce_impl.h:739:75: error: static assertion failed: "
             "The data type is not supported by ReduceSum. (int8/uint8/int16/uint16)")

#: kernel name -> the first error it fails with today; remove an entry once its kernel passes
KNOWN_FAILING: dict[str, str] = {
    "sample_embedding_post": SIMT,
    "sample_gather_rows": SIMT,
    "sample_index_select_sum": SIMT,
    "sample_seed_minimal": SIMT,
    "seed_script": SIMT,
    "simd_elementwise_bfloat16": ABS,
    "simd_elementwise_int16": RELU,
    "simd_elementwise_int8": MUL,
    "simd_elementwise_uint16": ADDS,
    "simd_elementwise_uint32": ADDS,
    "simd_elementwise_uint8": MUL,
    "simd_reduce_max_int16": REDUCESUM,
    "simd_reduce_max_int8": REDUCESUM,
    "simd_reduce_max_uint16": REDUCESUM,
    "simd_reduce_max_uint8": REDUCESUM,
    "simd_reduce_mean_int16": REDUCESUM,
    "simd_reduce_mean_int8": MULS,
    "simd_reduce_mean_uint16": MULS,
    "simd_reduce_mean_uint32": MULS,
    "simd_reduce_mean_uint8": MULS,
    "simd_reduce_min_int16": REDUCESUM,
    "simd_reduce_min_int8": REDUCESUM,
    "simd_reduce_min_uint16": REDUCESUM,
    "simd_reduce_min_uint8": REDUCESUM,
    "simd_reduce_sum_int16": REDUCESUM,
    "simd_reduce_sum_int8": REDUCESUM,
    "simd_reduce_sum_uint16": REDUCESUM,
    "simd_reduce_sum_uint8": REDUCESUM,
    "simt_cast_bfloat16": SIMT,
    "simt_cast_float16": SIMT,
    "simt_cast_float32": SIMT,
    "simt_cast_int16": SIMT,
    "simt_cast_int32": SIMT,
    "simt_cast_int64": SIMT,
    "simt_cast_int8": SIMT,
    "simt_cast_uint16": SIMT,
    "simt_cast_uint32": SIMT,
    "simt_cast_uint8": SIMT,
    "simt_elementwise_bfloat16": SIMT,
    "simt_elementwise_float16": SIMT,
    "simt_elementwise_float32": SIMT,
    "simt_elementwise_int16": SIMT,
    "simt_elementwise_int32": SIMT,
    "simt_elementwise_int64": SIMT,
    "simt_elementwise_int8": SIMT,
    "simt_elementwise_uint16": SIMT,
    "simt_elementwise_uint32": SIMT,
    "simt_elementwise_uint8": SIMT,
    "simt_index_select_sum": SIMT,
    "simt_seed_minimal": SIMT,
    "sklike_elementwise_bfloat16": ABS,
    "sklike_elementwise_int16": RELU,
    "sklike_elementwise_int8": MUL,
    "sklike_elementwise_uint16": ADDS,
    "sklike_elementwise_uint32": ADDS,
    "sklike_elementwise_uint8": MUL,
    "sklike_reduce_max_int16": REDUCESUM,
    "sklike_reduce_max_int8": REDUCESUM,
    "sklike_reduce_max_uint16": REDUCESUM,
    "sklike_reduce_max_uint8": REDUCESUM,
    "sklike_reduce_mean_int16": REDUCESUM,
    "sklike_reduce_mean_int8": MULS,
    "sklike_reduce_mean_uint16": MULS,
    "sklike_reduce_mean_uint32": MULS,
    "sklike_reduce_mean_uint8": MULS,
    "sklike_reduce_min_int16": REDUCESUM,
    "sklike_reduce_min_int8": REDUCESUM,
    "sklike_reduce_min_uint16": REDUCESUM,
    "sklike_reduce_min_uint8": REDUCESUM,
    "sklike_reduce_sum_int16": REDUCESUM,
    "sklike_reduce_sum_int8": REDUCESUM,
    "sklike_reduce_sum_uint16": REDUCESUM,
    "sklike_reduce_sum_uint8": REDUCESUM,
    "workload_beam_reorder_kv": SIMT,
    "workload_dcnv2_bag27_sum": SIMT,
    "workload_dlrm_kaggle_d16": SIMT,
    "workload_dlrm_tb_d64": SIMT,
    "workload_dsv3_gate_gather_sum": SIMT,
    "workload_eta_fuxictr_d20": SIMT,
    "workload_eta_mask_gather": SIMT,
    "workload_gather_dim_mid_small_rows": SIMT,
    "workload_gather_last_axis_negative": SIMT,
    "workload_gemma_scaled_embedding": SIMT,
    "workload_grpo_selective_log_softmax": SIMT,
    "workload_hstu_neg_dot_ml20m": SIMT,
    "workload_liger_emb_d768": SIMT,
    "workload_llama3_token_embedding": SIMT,
    "workload_mlperf_dlrm_d128_bf16": SIMT,
    "workload_moe_permute_mixtral": SIMT,
    "workload_moe_unpermute_dsv3_k8": SIMT,
    "workload_nll_ignore_index": SIMT,
    "workload_paged_kv_blocks": SIMT,
    "workload_sim_L10k_k100_bf16": SIMT,
    "workload_sim_L54000_k50_ta": SIMT,
    "workload_sim_nv_masked_mean_k50": SIMT,
    "workload_tbe_default_bag20": SIMT,
    "workload_tbe_fp16_cast_bag20": SIMT,
    "workload_twin_L100k_k100": SIMT,
    "workload_vllm_gather_logprobs": SIMT,
}


def _generate(name: str) -> str:
    case = CASES[name]
    try:
        fuser = Autofuser(case.options())
        return fuser.generate(fuser.schedule(case.build())).kernel
    finally:
        reset_platform()  # the seed script sets a platform of its own


@pytest.fixture(scope="session")
def verdicts(request, checker):
    """Generate and check every kernel this test run selected (once, in parallel)."""
    selected = sorted({item.callspec.params["name"] for item in request.session.items
                       if getattr(item, "callspec", None) and item.callspec.params.get("name") in CASES})
    texts, failures = {}, {}
    for name in selected:
        try:
            texts[name] = _generate(name)
        except Exception as exc:  # reported by the kernel's own test
            failures[name] = exc
    names = sorted(texts)
    return dict(zip(names, checker.check_many([texts[n] for n in names]))), failures


def _result(name, verdicts):
    results, failures = verdicts
    if name in failures:
        raise failures[name]
    return results[name]


def _param(name: str):
    marks = [pytest.mark.xfail(strict=True, reason=KNOWN_FAILING[name])] if name in KNOWN_FAILING else []
    return pytest.param(name, id=name, marks=marks)


@pytest.mark.parametrize("name", [_param(n) for n in CASES])
def test_kernel_passes_official_check(name, verdicts):
    result = _result(name, verdicts)
    assert result.ok, f"kernel '{name}' fails the official AscendC check:\n{result.describe(limit=8)}"


@pytest.mark.parametrize("name", [pytest.param(n, id=n) for n in CASES])
def test_no_error_comes_from_the_standins(name, verdicts):
    result = _result(name, verdicts)
    blamed = [e.format() for e in result.errors if e.origin == "stand-in"]
    assert blamed == [], "the stand-ins miss something the official headers need:\n" + "\n".join(blamed)


def test_known_failing_names_exist():
    assert sorted(set(KNOWN_FAILING) - set(CASES)) == []
