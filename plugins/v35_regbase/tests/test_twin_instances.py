"""The twin's common template instances: declared extern in kernels, defined once in another object.

``af_twin/instances.h`` only changes where code is generated: a program whose
kernel unit declares the instances extern and whose other unit defines them
computes what the same program computes as one self-contained unit; without
the defining unit it does not link (so the kernel unit really left them out).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import twin_build

from af_core import toolchain

KERNEL = r"""
#include "kernel_operator.h"
#include <cstdio>
#include <vector>
using namespace AscendC;

int main() {
    AfTwin::Configure(253952, 32768);
    std::vector<float> x(16);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.5f;
    std::vector<float> y(16, -1.0f);
    AfTwin::RegisterGm(x.data(), x.size() * 4, "x");
    AfTwin::RegisterGm(y.data(), y.size() * 4, "y");
    AfTwin::Launch(1, [&] {
        TPipe pipe;
        TQue<TPosition::VECIN, 2> in;
        TBuf<TPosition::VECCALC> tmp;
        pipe.InitBuffer(in, 2, 64);
        pipe.InitBuffer(tmp, 64);
        GlobalTensor<float> gx;
        GlobalTensor<float> gy;
        gx.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x.data()), 16);
        gy.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y.data()), 16);
        LocalTensor<float> a = in.AllocTensor<float>();
        DataCopyPad(a, gx, DataCopyExtParams(1, 64, 0, 0, 0), DataCopyPadExtParams<float>());
        in.EnQue(a);
        LocalTensor<float> b = in.DeQue<float>();
        LocalTensor<float> c = tmp.Get<float>();
        Adds(c, b, 1.0f, 16);
        SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
        WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
        DataCopyPad(gy, c, DataCopyExtParams(1, 64, 0, 0, 0));
        in.FreeTensor(b);
    });
    for (float v : y) std::printf("%g ", v);
    std::printf("\n");
    return 0;
}
"""
EXPECTED = " ".join(f"{i * 0.5 + 1:g}" for i in range(16)) + " \n"
INSTANCES = '#include "kernel_operator.h"\n'


def _flags(define: str | None) -> toolchain.Flags:
    extra = ("-Wshadow", "-Wpedantic", *((define,) if define else ()))
    return toolchain.TWIN_STRICT.replace(extra=extra)


def _objects(work: Path, units: dict[str, str | None]) -> list[str]:
    """Each source compiled on its own with its define (or none)."""
    return toolchain.compile_units(
        [
            toolchain.Unit((name,), name, _flags(define), (str(twin_build.INCLUDE_DIR),))
            for name, define in units.items()
        ],
        work,
    )


def _run(exe: Path) -> str:
    done = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def work(tmp_path):
    if twin_build.compiler() is None:
        pytest.skip("no C++ compiler")
    (tmp_path / "kernel.cpp").write_text(KERNEL)
    (tmp_path / "instances.cpp").write_text(INSTANCES)
    return tmp_path


def test_extern_instances_compute_what_a_self_contained_program_does(work):
    whole = _objects(work, {"kernel.cpp": None})
    alone = toolchain.link(whole, "alone", work, toolchain.TWIN, what="self-contained")
    assert _run(alone) == EXPECTED
    split = _objects(
        work, {"kernel.cpp": toolchain.TWIN_EXTERN_INSTANCES, "instances.cpp": toolchain.TWIN_INSTANTIATE}
    )
    linked = toolchain.link(split, "split", work, toolchain.TWIN, what="extern instances")
    assert _run(linked) == EXPECTED


def test_a_kernel_with_extern_instances_needs_the_defining_object(work):
    objects = _objects(work, {"kernel.cpp": toolchain.TWIN_EXTERN_INSTANCES})
    with pytest.raises(toolchain.CompileError) as info:
        toolchain.link(objects, "prog", work, toolchain.TWIN, what="kernel without instances")
    assert "undefined reference" in str(info.value)
    assert "DataCopyPad" in info.value.log


def test_the_twin_runner_compiles_kernels_extern_and_the_harness_main_defining():
    from af_core.twin.runner import TwinRunner

    runner = TwinRunner(cache_dir=Path("unused"))
    assert toolchain.TWIN_EXTERN_INSTANCES in runner.flags()
    assert toolchain.TWIN_INSTANTIATE not in runner.flags()
    assert toolchain.TWIN_INSTANTIATE in runner.main_flags.args()
    assert toolchain.TWIN_EXTERN_INSTANCES not in runner.main_flags.args()
