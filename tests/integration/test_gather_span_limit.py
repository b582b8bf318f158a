"""A shape whose 2-byte Gather span exceeds what 3510's uint16 offsets address runs without a Gather."""

from __future__ import annotations

from af_elementwise.samples import gather_rows

from af_core.twin import TwinSession


def test_gather_rows_beyond_the_uint16_offset_range_runs_a_case_without_gather():
    """gather_rows at B=2, L=40000, D=2, K=4: one half input row is 80000 elements. SIMD and SK-like drop
    their cases at tiling time; the kernel runs another case and matches the reference."""
    s = TwinSession(gather_rows())
    run = s.check({"B": 2, "L": 40000, "D": 2, "K": 4}, seed=3, core_num=48)
    assert run.ok, run.describe()
    assert not run.template.startswith(("simd", "sklike")), run.template
