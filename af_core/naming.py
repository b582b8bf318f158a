"""One naming layer between graph names (user data) and generated text.

Graph, node and size names are whatever the front end or a JSON file says
(any ``str.isidentifier()`` for sizes, any string for nodes and graphs). None
of that text may reach generated C++, DOT, SVG, Mermaid or Markdown as is:

- :func:`ident` maps a name to a C++ identifier. The mapping is deterministic
  and injective (distinct names stay distinct, ``a-b`` and ``a_b`` included),
  never yields a keyword, a reserved identifier (``__x``, ``_Upper``) or a name
  the generated kernel, host tiling, harness or AscendC headers use, and keeps
  ordinary names (``s0``, ``x1``, ``gather``) readable: they map to themselves.
  :func:`demangle` inverts it.
- :func:`comment`, :func:`c_string`, :func:`dot_label`, :func:`html` and
  :func:`markdown` make any text inert inside a C++ comment, a C++ string
  literal, a DOT/Mermaid label, SVG/HTML text and Markdown, and
  :func:`terminal` on a terminal: every line ``afc`` prints passes through it.

An *ordinary* name is ASCII letters, digits and single inner underscores,
starting with a letter, not reserved, not all capitals (macro-like: ``EOF``,
``NAN``), not a per-case tiling field ``c<key>_...`` and not starting with
``af`` in any case (the escape prefix and the generated helpers' namespace),
not ending in a suffix the generator appends (``_gm``, ``_buf``, ``_start``,
``_<digits>``, ``_k<digits>``...). Everything else is escaped as ``afx`` followed by the name with every character other than an
ASCII letter or digit written ``_<hex code point>x``; every ``_`` of the
escaped form is followed by a hex digit, so it never holds ``__``, never ends
in ``_`` and decodes unambiguously.
"""

from __future__ import annotations

import re

#: The prefix of escaped names; no ordinary name starts with it.
ESCAPE = "afx"

_CPP_KEYWORDS = frozenset(
    """
alignas alignof and and_eq asm atomic_cancel atomic_commit atomic_noexcept auto bitand bitor bool break case
catch char char8_t char16_t char32_t class co_await co_return co_yield compl concept const consteval
constexpr constinit const_cast continue decltype default delete do double dynamic_cast else enum explicit
export extern false final float for friend goto if import inline int long module mutable namespace new
noexcept not not_eq nullptr operator or or_eq override private protected public reflexpr register
reinterpret_cast requires return short signed sizeof static static_assert static_cast struct switch
synchronized template this thread_local throw true try typedef typeid typename union unsigned using
virtual void volatile wchar_t while xor xor_eq
""".split()
)

#: Names the generated kernel, host tiling, infer_shape and twin harness define or use, the C/C++
#: library names they rely on, AscendC names and common macros of the toolchains.
_GENERATED = frozenset(
    """
main t pipe blockIdx workspace tiling tiling_key block_dim workspace_size core_num ub_size core_num_in
ub_size_in sizes dims ranks fits best best_score best_cost score cost usable bd ws chosen rc run dir
result given fields inputs outputs coreNum ubSize dcache inBytes workspaceSize blockDim tilingGm argc argv
n d i v f ok kGmAlign GmAllocator GmBuffer ReadFile WriteFile
GM_ADDR AscendC AfTwin TILING_KEY_IS AutofuseTilingData AutofuseTiling AutofuseInferShape
std int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t size_t ptrdiff_t intptr_t uintptr_t
half bfloat16_t float16_t INT64_C UINT64_C INT32_C UINT32_C INT64_MAX INT64_MIN UINT32_MAX NULL EOF
assert errno stdin stdout stderr offsetof memcpy memset malloc free printf fprintf exit abort
unix linux i386 __aicore__ __global__ __gm__ __ubuf__
Max Min Mod floor ceiling CeilDiv FloorDiv AlignUp Abs math builtins
""".split()
)

RESERVED = _CPP_KEYWORDS | _GENERATED

#: Suffixes the kernel generator appends to names (``<tensor>_gm``, ``<buffer>_buf``, loop variables,
#: ``<tensor>_<n>``, case functions ``..._k<key>``); an ordinary name never ends with one, so
#: ``ident(a) + "_gm"`` can never equal ``ident(b)``.
_SUFFIXES = frozenset("gm buf begin end start actual offset in".split())

_ORDINARY = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*\Z")
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


def is_ordinary(name: str) -> bool:
    """True when ``name`` is its own C++ identifier (see the module docstring)."""
    return (
        bool(_ORDINARY.match(name))
        and name not in RESERVED
        and not name.lower().startswith("af")
        and not (len(name) > 1 and name.isupper())  # macro-like names (NDEBUG, EOF, NAN...) are escaped
        and not re.match(r"c[0-9]+_", name)  # per-case tiling fields are c<key>_<name>
        and name.rsplit("_", 1)[-1] not in _SUFFIXES
        and not re.search(r"_(?:[0-9]+|k[0-9]+)\Z", name)
    )


def ident(name: str) -> str:
    """The C++ identifier of a graph or node name (injective, deterministic)."""
    name = str(name)
    if is_ordinary(name):
        return name
    return _escape(name)


def _escape(name: str) -> str:
    return ESCAPE + "".join(ch if ch in _ALNUM else f"_{ord(ch):x}x" for ch in name)


def size_ident(name: str) -> str:
    """The symbol name and C++ identifier of a size.

    Like :func:`ident`, and an ordinary name also needs a digit or a capital
    letter to stand for itself (``s0``, ``ks1``, ``N``, ``Batch``): templates
    name their own symbols (tiling fields ``tile``, ``used_cores``, loop
    variables ``OT_start``, offsets ``ws_gather_offset``) in lower case or with
    a generated suffix, and formulas mix both kinds of symbol by name, so a size
    called ``tile`` becomes ``afxtile`` and never meets a template's ``tile``.
    :func:`demangle` inverts it too.
    """
    name = str(name)
    if is_ordinary(name) and any(ch.isdigit() or ch.isupper() for ch in name):
        return name
    return _escape(name)


MAX_KERNEL_SYMBOL = 96


def kernel_symbol(name: str) -> str:
    """The extern "C" symbol of a kernel named after a graph.

    Always starts with ``autofuse_`` so no graph name (``write``, ``index``,
    ``pthread_create``) can define or interpose a C library function. Longer
    than ``MAX_KERNEL_SYMBOL`` characters, it is cut and ends in a hash of the
    full name instead (one kernel per program: only readability is at stake).
    """
    cid = ident(name)
    cid = cid if cid.startswith("autofuse_") else "autofuse_" + cid
    if len(cid) <= MAX_KERNEL_SYMBOL:
        return cid
    import hashlib  # here: it loads OpenSSL, a few ms of every start-up, for the rare long name

    digest = hashlib.sha256(str(name).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return cid[: MAX_KERNEL_SYMBOL - 18].rstrip("_") + "_h" + digest


def demangle(identifier: str) -> str:
    """The name :func:`ident` mapped to ``identifier`` (identity for ordinary names)."""
    if not identifier.startswith(ESCAPE):
        return identifier
    out: list[str] = []
    body = identifier[len(ESCAPE) :]
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "_":
            out.append(ch)
            i += 1
            continue
        end = body.index("x", i + 1)
        out.append(chr(int(body[i + 1 : end], 16)))
        i = end + 1
    return "".join(out)


def unique_idents(names: list[str] | tuple[str, ...]) -> dict[str, str]:
    """name -> identifier for several names; raises if two map to one (cannot happen for distinct names)."""
    out: dict[str, str] = {}
    seen: dict[str, str] = {}
    for name in names:
        cid = ident(name)
        other = seen.get(cid)
        if other is not None and other != name:
            raise ValueError(f"names {other!r} and {name!r} both map to C++ name {cid!r}")
        seen[cid] = name
        out[name] = cid
    return out


def printable(text: str, limit: int = 200) -> str:
    """Printable ASCII only: other characters as ``\\uXXXX`` / ``\\UXXXXXXXX``, backslash doubled.

    The result holds no newline, no non-ASCII character and no control
    character; ``limit`` bounds its length (a ``...`` marks the cut).
    """
    out: list[str] = []
    for ch in str(text):
        code = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif 0x20 <= code < 0x7F:
            out.append(ch)
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    text = "".join(out)
    return text if len(text) <= limit else text[:limit] + "..."


def terminal(text: object, *, lines: bool = False) -> str:
    """``text`` safe to show on a terminal: every character that is not printable shown as an escape.

    Escaped (``\\n``, ``\\x1b``, ``\\u202e``, ``\\udc80``, as Python writes them): C0
    and C1 control characters (ESC, BEL, CR, CSI...) and DEL, format
    characters (the bidi embeddings, overrides and isolates U+202A-U+202E and
    U+2066-U+2069, marks, zero-width characters), line and paragraph
    separators and spaces other than U+0020, lone surrogates, private-use and
    unassigned code points. Printable text of any script stays as it is.
    With ``lines`` the newline and the tab are kept, so multi-line text keeps
    its lines; without, the result is one line. The result always encodes to
    UTF-8, and no part of it can move the cursor, change colours, retitle the
    window or reorder what is shown.
    """
    text = str(text)
    if text.isprintable():
        return text
    kept = "\n\t" if lines else ""
    out: list[str] = []
    for ch in text:
        # repr writes every character that is not printable as an escape (\n, \x1b, \u202e, \udc80)
        out.append(ch if ch.isprintable() or ch in kept else repr(ch)[1:-1])
    return "".join(out)


def comment(text: str, limit: int = 200) -> str:
    """``text`` for the inside of a ``//`` or ``/* */`` C++ comment.

    Single line of printable ASCII without backslashes (no line splice):
    every other character, and ``\\``, becomes ``<U+XXXX>``; ``*/`` and ``/*``
    are broken with a space and a ``?`` after a ``?`` is coded (no trigraph).
    Nothing in it can end the comment or change the following line.
    """
    text = str(text)
    cut = len(text) > limit
    out: list[str] = []
    for ch in text[:limit]:
        code = ord(ch)
        if 0x20 <= code < 0x7F and ch != "\\" and not (ch == "?" and out and out[-1] == "?"):
            out.append(ch)
        else:
            out.append(f"<U+{code:04X}>")
    text = "".join(out).replace("*/", "* /").replace("/*", "/ *")
    return text + ("..." if cut else "")


def c_string(text: str) -> str:
    """A C++ string literal (quotes included) whose value is ``text`` encoded as UTF-8.

    Every byte outside printable ASCII, and ``"``, ``\\`` and ``?``, is written
    as a three-digit octal escape, so no trigraph, no line splice and no
    following hex digit can change the value.
    """
    out = []
    for byte in str(text).encode("utf-8", "surrogatepass"):
        ch = chr(byte)
        if 0x20 <= byte < 0x7F and ch not in '"\\?':
            out.append(ch)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def html(text: str) -> str:
    """Text for SVG/HTML character data and attribute values (both quote styles)."""
    out = []
    for ch in str(text):
        code = ord(ch)
        if ch in "&<>\"'" or code < 0x20 or code > 0x7E:
            out.append(f"&#{code};")
        else:
            out.append(ch)
    return "".join(out)


def dot_label(text: str) -> str:
    """A DOT quoted-string body (without the quotes): backslash and quote escaped, one line."""
    text = printable(text)
    return text.replace("\\", "\\\\").replace('"', '\\"')


def mermaid_label(text: str) -> str:
    """A Mermaid label body for ``["..."]``: quotes and markup characters as entity codes."""
    out = []
    for ch in printable(text):
        if ch in '"#<>&[](){}|`;:':
            out.append(f"#{ord(ch)};")
        else:
            out.append(ch)
    return "".join(out)


def markdown(text: str) -> str:
    """Inline Markdown text: one line, emphasis/code/link/table/HTML characters backslash-escaped.

    For text inside a line (after other text or in a table cell), where list
    and heading markers have no meaning.
    """
    out = []
    for ch in printable(text):
        if ch in "\\`*_{}[]#|<>&~":
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)
