"""The memory budget's parts that need no graph: byte counts, the limit, the estimate's arithmetic."""

from __future__ import annotations

import pytest

from af_core.cli import EXIT_ERROR, classify
from af_core.errors import MemoryBudgetError, UsageError
from af_core.twin import budget
from af_core.twin.budget import (
    MemoryLimit,
    TensorBytes,
    available_memory,
    check_memory,
    estimate_memory,
    format_bytes,
    memory_limit,
    parse_bytes,
)


@pytest.mark.parametrize(
    "text,value",
    [
        ("1", 1),
        ("4096", 4096),
        ("512B", 512),
        ("1k", 1024),
        ("8G", 8 << 30),
        ("8g", 8 << 30),
        ("8GiB", 8 << 30),
        ("8GB", 8 << 30),
        ("1.5T", 3 << 39),
        ("2 M", 2 << 20),
        (" 3P ", 3 << 50),
    ],
)
def test_byte_counts_are_read_in_powers_of_1024(text, value):
    assert parse_bytes(text) == value


@pytest.mark.parametrize("text", ["", "0", "0.1", "-1", "1X", "G", "8iB", "1e9", "0x10", "８G", "1" * 40])
def test_anything_else_is_a_usage_error_naming_the_setting(text):
    with pytest.raises(UsageError, match="--max-memory"):
        parse_bytes(text, "--max-memory")


def test_byte_counts_are_shown_for_people():
    assert format_bytes(512) == "512 B"
    assert format_bytes(3 << 20) == "3.0 MiB"
    assert format_bytes(596 << 30) == "596.0 GiB"
    assert format_bytes(1 << 70) == "1024.0 EiB"


def test_the_limit_comes_from_the_argument_then_the_environment_then_the_machine(monkeypatch):
    assert memory_limit(MemoryLimit(5, "--max-memory")) == MemoryLimit(5, "--max-memory")
    assert memory_limit(1000, {"AF_MAX_MEMORY": "1G"}) == MemoryLimit(1000, "max_memory")
    assert memory_limit(None, {"AF_MAX_MEMORY": "1G"}) == MemoryLimit(1 << 30, "AF_MAX_MEMORY")
    monkeypatch.setattr(budget, "available_memory", lambda: 10 << 30)
    assert memory_limit(None, {"AF_MAX_MEMORY": " "}) == MemoryLimit(5 << 30, "half the memory available")
    monkeypatch.setattr(budget, "available_memory", lambda: None)
    assert memory_limit(None, {}).bytes == budget.FALLBACK_LIMIT
    with pytest.raises(UsageError, match="AF_MAX_MEMORY must be a byte count.*got 'lots'"):
        memory_limit(None, {"AF_MAX_MEMORY": "lots"})
    with pytest.raises(UsageError, match="at least 1 byte"):
        memory_limit(0)


def test_available_memory_is_memavailable_lowered_to_the_cgroup_room(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24683784 kB\nMemAvailable:    1000 kB\n")
    assert available_memory(meminfo, tmp_path / "no-cgroup") == 1000 * 1024
    cgroup = tmp_path / "cg"
    cgroup.mkdir()
    (cgroup / "memory.max").write_text("600000\n")
    (cgroup / "memory.current").write_text("100000\n")
    assert available_memory(meminfo, cgroup) == 500000
    (cgroup / "memory.max").write_text("max\n")  # no cgroup limit
    assert available_memory(meminfo, cgroup) == 1000 * 1024
    assert available_memory(tmp_path / "absent", tmp_path / "absent") is None


def _tensors(out_bytes: int) -> list[TensorBytes]:
    return [
        TensorBytes("x", "data", 1000, 100, 4),  # a broadcast view: 1000 elements over 100 stored
        TensorBytes("x_load", "load", 1000, 1000, 4),
        TensorBytes("y_gather", "indirect_load", 1000, 1000, 4),
        TensorBytes("y", "output", out_bytes // 4, out_bytes // 4, 4),
    ]


def test_the_estimate_counts_the_race_shadow_and_nothing_for_an_empty_run():
    tensors = _tensors(4000)
    on = estimate_memory(tensors, workspace=1000, block_dim=1, race=True)
    off = estimate_memory(tensors, workspace=1000, block_dim=1, race=False)
    shadow = (4000 + 1000) * budget.RACE_SHADOW_BYTES + budget.WORKER_SHADOW_BYTES
    assert on.twin - off.twin == shadow
    assert on.inputs == 400 + 100 * budget.INPUT_SCRATCH_BYTES  # the storage, not the logical view
    # loads and outputs are views of their input in the reference: only the gather computes
    assert on.reference == (1000 + 1000 * budget.REFERENCE_SCRATCH) * budget.REFERENCE_BYTES
    assert on.elements == 1000 and (on.largest, on.largest_bytes) == ("y_gather", 8000)
    empty = estimate_memory(tensors, launch=False)
    assert empty.twin == 0 and empty.total < on.total
    sanitized = estimate_memory(tensors, workspace=1000, block_dim=1, sanitize=True)
    assert sanitized.twin > 2 * on.twin - on.inputs
    assert estimate_memory(tensors, held=12345).inputs == on.inputs + 12345


def test_a_run_over_the_limit_is_refused_naming_sizes_estimate_and_limit():
    estimate = estimate_memory(_tensors(4000), workspace=0, block_dim=4)
    check_memory(estimate, MemoryLimit(estimate.total, "AF_MAX_MEMORY"), "V=1")
    with pytest.raises(MemoryBudgetError) as caught:
        check_memory(estimate, MemoryLimit(estimate.total - 1, "--max-memory"), "V=1000, B=3")
    message = str(caught.value)
    assert message.startswith(
        f"sizes V=1000, B=3 need an estimated {format_bytes(estimate.total)} of host memory"
    )
    assert "over the limit of" in message and "(--max-memory)" in message and "\n" not in message
    assert (caught.value.estimate, caught.value.limit) == (estimate.total, estimate.total - 1)
    assert classify(caught.value) == (EXIT_ERROR, f"afc: error: {message}")


def test_running_out_of_memory_anyway_is_a_user_error_not_a_bug():
    code, message = classify(MemoryError("Unable to allocate 4.66 TiB"))
    assert code == EXIT_ERROR and "out of host memory" in message and "--max-memory" in message


def test_input_arrays_count_the_memory_they_hold_not_their_views():
    import numpy as np

    from af_core.twin import held_bytes

    row = np.zeros(100, np.float32)
    assert held_bytes([row, np.broadcast_to(row[:, None], (100, 1000))]) == 400  # one buffer, counted once
    assert held_bytes([np.zeros(3), [1, 2]]) == 24 + 16
