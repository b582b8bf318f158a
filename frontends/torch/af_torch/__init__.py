"""af-torch: PyTorch models fused by af_core and run on the CPU twin.

    import af_torch
    fused = af_torch.compile_exported(torch.export.export(model, inputs))
    fused(*inputs)                                  # regions run on the twin
    torch.compile(model, backend="af")(*inputs)     # the same through dynamo
    print(af_torch.explain(model, *inputs))         # the region table

torch is imported on first use of these names, so ``afc`` and af_core's
plugin loading never import it.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["compile_exported", "explain", "af_backend", "__version__"]


def __getattr__(name: str):
    if name == "compile_exported":
        from af_torch.compile import compile_exported

        return compile_exported
    if name == "explain":
        from af_torch.region_table import explain

        return explain
    if name == "af_backend":
        from af_torch.backend import af_backend

        return af_backend
    raise AttributeError(f"module 'af_torch' has no attribute '{name}'")
