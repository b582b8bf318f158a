"""Error paths of codegen and the twin, reached through the fake back end with only af-core installed.

Each failure must name what failed (the ApiCall, the compiler's own
diagnostic, the sanitizer's category, the host tiling's code) rather than
surface as a traceback from deep inside or as a silently wrong result.
"""

from __future__ import annotations

import fake_backend
import numpy as np
import pytest
from fake_backend import FakeBrokenGather, FakeLanesTemplate
from fake_backend.graphs import offset_chain

from af_core.ascendc.source import AscendcSourceError
from af_core.errors import (
    CodegenError,
    PluginError,
    ScheduleError,
    SizeError,
    TilingError,
    ToolchainError,
    TwinError,
)
from af_core.inputs import pack_inputs
from af_core.tiling.solve import solve_scheduled
from af_core.twin import TwinSanitizerError, TwinSession, TwinTilingError

pytestmark = pytest.mark.twin


def _graph():
    """The pipeline tests' "gather2d" graph: working twin builds here are cache hits of theirs."""
    return offset_chain()


@pytest.fixture(scope="module")
def session():
    """A working build (the default fake back end) for the run-time error paths."""
    with fake_backend.installed():
        yield TwinSession(_graph())


def test_apicall_that_does_not_compile_reports_the_compiler_diagnostic():
    with fake_backend.installed(templates=[FakeLanesTemplate(gather_call=FakeBrokenGather.name)]):
        with pytest.raises(TwinError) as caught:
            TwinSession(_graph())
    message = str(caught.value)
    assert "autofuse_chain" in message  # the kernel
    assert (
        FakeBrokenGather.UNDECLARED in message and "error" in message
    )  # g++'s own words, not just an exit code


def test_unknown_apicall_is_a_codegen_error_naming_it():
    with fake_backend.installed(templates=[FakeLanesTemplate(gather_call="NoSuchApiCall")]):
        with pytest.raises(CodegenError, match="'NoSuchApiCall'") as caught:
            TwinSession(_graph())
    assert "FakeLanesGather" in str(caught.value)  # the installed ones are listed


def test_missing_role_rejects_the_template_naming_the_role():
    with fake_backend.installed(api_calls=[FakeBrokenGather]):  # nothing fills the gather role in LANES mode
        with pytest.raises(ScheduleError, match="role 'gather' in gather mode 'lanes'") as caught:
            TwinSession(_graph())
    assert "fake_lanes" in str(caught.value)


def test_no_twin_headers_is_a_toolchain_error():
    with fake_backend.installed(include_dirs=None):
        with pytest.raises(ToolchainError, match="provides CPU twin headers"):
            TwinSession(_graph())


def test_twin_header_hook_returning_no_directory_names_the_plugin(tmp_path):
    with fake_backend.installed(include_dirs=[tmp_path / "absent"]):
        with pytest.raises(PluginError, match=f"plugin '{fake_backend.PLUGIN}'.*not an existing directory"):
            TwinSession(_graph())


def test_official_check_gates_the_build_when_required(monkeypatch, tmp_path):
    """AF_ASCENDC_CHECK=1 runs before g++: with no official headers the build is refused, not skipped."""
    with fake_backend.installed():
        monkeypatch.setenv("AF_ASCENDC_CHECK", "1")
        monkeypatch.setenv("AF_ASCENDC_SRC", str(tmp_path / "no-asc-devkit"))
        with pytest.raises(AscendcSourceError):
            TwinSession(_graph())
        monkeypatch.setenv("AF_ASCENDC_CHECK", "auto")  # auto: nothing there, so nothing to check against
        run = TwinSession(_graph()).check({"a0": 4, "a1": 3, "b0": 2, "b1": 6})
        assert run.ok, run.describe()


def test_out_of_range_index_is_stopped_by_the_twin(session):
    """need_check_bound is off: an index past the input is caught by the twin's bounds check."""
    sizes = {"a0": 3, "a1": 2, "b0": 2, "b1": 2}
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    index = np.array([[0, 1], [1000, 1]], dtype=np.int64)
    inputs = session.inputs(sizes, arrays={"x": x, "index": index})
    with pytest.raises(TwinSanitizerError) as caught:
        session.run(inputs, core_num=1)
    assert caught.value.kind == "gm-bounds"
    assert "'x'" in caught.value.message


def test_sizes_the_guards_refuse_fail_in_cpp_and_python_alike(session):
    """Index larger than the input off the gathered axis: host tiling and solve() both refuse, and a
    session refuses before either runs, naming the sizes."""
    sizes = {"a0": 2, "a1": 2, "b0": 3, "b1": 2}
    arrays = {"x": np.zeros((2, 2), np.float32), "index": np.zeros((3, 2), np.int64)}
    with pytest.raises(SizeError, match="a0=2, b0=3: index size"):
        session.inputs(sizes, arrays=arrays)
    inputs = pack_inputs(session.graph, arrays, sizes, info=session.scheduled.info)
    with pytest.raises(TwinTilingError, match="for sizes a0=2, a1=2, b0=3, b1=2") as caught:
        session.runner.run(session.build, inputs)
    assert caught.value.code == 1
    with pytest.raises(TilingError, match="index size"):
        solve_scheduled(session.scheduled, sizes)
