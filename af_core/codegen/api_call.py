"""ApiCall: turns one ImplGraph node into AscendC code.

The generation chain is the one the Autofuse codegen uses:

    Init(node) -> ParseAttr() -> BuildApiParam() -> GenerateApiCallString() -> PostProcess()

Subclasses override the steps they need and set ``name`` (the registry key
ImplGraph nodes use) and ``sources`` (API sources to inline). Plugins
register classes with ``af_register_api_calls``; the kernel generator creates
them by name (:func:`create_api_call`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from af_core.codegen.jinja import render_string
from af_core.errors import CodegenError

if TYPE_CHECKING:
    from af_core.codegen.kernel import KernelContext
    from af_core.schedule.impl_graph import ImplNode, ImplTensor


class ApiCall:
    """Base class of every node code generator."""

    name: ClassVar[str] = ""
    sources: ClassVar[tuple[str, ...]] = ()
    template: ClassVar[str] = ""

    # set by init(), the first step of every generation: the steps after it may rely on them
    node: ImplNode
    ctx: KernelContext

    def __init__(self) -> None:
        self.inputs: list[ImplTensor] = []
        self.outputs: list[ImplTensor] = []
        self.param: dict[str, Any] = {}

    # -- the chain ---------------------------------------------------------
    def init(self, node: ImplNode, ctx: KernelContext) -> None:
        """Collect the node, its tensors and the sources it needs."""
        self.node = node
        self.ctx = ctx
        self.inputs = [ctx.impl.tensor(n) for n in node.inputs]
        self.outputs = [ctx.impl.tensor(n) for n in node.outputs]
        for source in self.sources:
            ctx.need_source(source)

    def parse_attr(self) -> None:
        """Read op attributes from ``self.node.attrs`` into ``self.param``."""

    def build_api_param(self) -> None:
        """Compute the API arguments (counts, offsets, strides) as C++ expressions."""

    def generate_api_call_string(self) -> str:
        """The C++ statements of the call; by default renders ``template`` with ``param``."""
        if not self.template:
            raise CodegenError(f"ApiCall {self.name} has neither a template nor a generator")
        return render_string(self.template, **self.param, node=self.node, ctx=self.ctx)

    def post_process(self, code: str) -> str:
        """Add synchronisation or bookkeeping around the call."""
        return code

    def generate(self, node: ImplNode, ctx: KernelContext) -> str:
        self.init(node, ctx)
        self.parse_attr()
        self.build_api_param()
        return self.post_process(self.generate_api_call_string())


def create_api_call(name: str) -> ApiCall:
    """Instantiate the ApiCall registered under ``name`` (the ApiCallFactory)."""
    from af_core.registry import get_registry

    cls = get_registry().get("api_call", name)
    if cls is None:
        raise CodegenError(
            f"no plugin registers the ApiCall '{name}' (installed: "
            f"{', '.join(get_registry().names('api_call')) or 'none'})"
        )
    return cls()
