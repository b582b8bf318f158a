"""CodegenResult.proto is rendered on first read, the same text as rendering it at generate time."""

from __future__ import annotations

import json

import attrs
import fake_backend

from af_core.autofuser import Autofuser
from af_core.codegen.codegen import Codegen
from af_core.samples import seed_minimal


def test_the_proto_is_rendered_when_first_read_and_matches_an_eager_render(monkeypatch):
    with fake_backend.installed():
        fuser = Autofuser()
        scheduled = fuser.schedule(seed_minimal())
        rendered = []
        proto_of = Codegen._proto

        def counting(self, *args):
            rendered.append(args[1])
            return proto_of(self, *args)

        monkeypatch.setattr(Codegen, "_proto", counting)
        result = fuser.generate(scheduled)
        assert rendered == []  # generate did not print the formulas
        eager = proto_of(Codegen(), scheduled, result.kernel_name, list(result.struct_fields))
        assert result.proto == eager and result.files()["proto.json"] == eager
        assert rendered == [result.kernel_name]  # once: the text is kept
        assert json.loads(result.proto)["kernel"] == result.kernel_name
        changed = attrs.evolve(result, kernel=result.kernel + "// edited\n")
        assert changed.proto == eager  # an evolved result renders the same trace
        assert changed == attrs.evolve(result, kernel=result.kernel + "// edited\n")  # equality ignores it
