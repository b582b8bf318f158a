"""A register access is checked against the one buffer it starts in: a queue's InitBuffer makes `num`
buffers, and a vector that runs from one into the next is reported, as one past the last buffer always was."""

from __future__ import annotations

import af_v35_twin_build as twin_build  # loaded by conftest.py
import pytest

PROGRAM = r"""
#include <cstdio>
#include <string>
#include "kernel_operator.h"

using namespace AscendC;

namespace {

int gStart = 0;  // byte offset of the load from the first buffer's start

__simd_vf__ inline void Load(__ubuf__ float* src)
{
    Reg::RegTensor<float> a;
    Reg::LoadAlign(a, src);
}

void LoadAt() {
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        TQue<TPosition::VECIN, 2> q;
        pipe.InitBuffer(q, 2, 512);  // two buffers of 512 bytes, one after the other
        LocalTensor<float> t = q.AllocTensor<float>();
        asc_vf_call<Load>((__ubuf__ float*)t.GetPhyAddr() + gStart / 4);
        q.FreeTensor(t);
    });
}

}  // namespace

int main(int, char** argv) {
    gStart = std::stoi(argv[1]);
    LoadAt();
    std::printf("ok\n");
    return 0;
}
"""


@pytest.fixture(scope="module")
def program(twin_compile):
    return twin_compile(PROGRAM)


@pytest.mark.parametrize("start", [0, 256])
def test_a_vector_inside_one_buffer_loads(program, start):
    rc, out, err = program(str(start), race="on")
    assert rc == 0 and out.strip() == "ok", err


@pytest.mark.parametrize("start", [288, 480])
def test_a_vector_running_into_the_next_buffer_is_reported(program, start):
    rc, _out, err = program(str(start), race="on")
    error = twin_build.twin_abort(rc, err)
    assert error["kind"] == "ub-out-of-bounds", err
    assert f"touches UB bytes [{start}, {start + 256}) but its buffer is [0, 512)" in error["message"], err
