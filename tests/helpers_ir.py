"""Write hand-made IR files for tests.

    from tests.helpers_ir import write_ir
    path = write_ir(tmp_path, xml_text, bin_bytes)      # -> tmp_path / "model.xml"

``bin=None`` writes no .bin at all (to test a missing weights file); the default writes an empty
one. ``line_of`` finds the 1-based line of a snippet, so tests can assert a diagnostic's line
without counting lines by hand.
"""

from __future__ import annotations

import textwrap
from pathlib import Path


def write_ir(tmp_path, xml: str, bin: bytes | None = b"", name: str = "model") -> Path:
    """Write ``name.xml`` (and ``name.bin`` unless ``bin`` is None) into ``tmp_path``; return the
    .xml path. The XML text is dedented and stripped of leading blank lines, so the first line of
    the file is the first non-blank line of the string."""
    tmp_path = Path(tmp_path)
    xml_path = tmp_path / f"{name}.xml"
    xml_path.write_text(textwrap.dedent(xml).lstrip("\n"), encoding="utf-8")
    if bin is not None:
        (tmp_path / f"{name}.bin").write_bytes(bin)
    return xml_path


def line_of(path_or_text, snippet: str, nth: int = 1) -> int:
    """The 1-based line number of the ``nth`` line of a file (or text) that contains ``snippet``."""
    text = path_or_text.read_text() if isinstance(path_or_text, Path) else path_or_text
    seen = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if snippet in line:
            seen += 1
            if seen == nth:
                return number
    raise AssertionError(f"{snippet!r} does not occur {nth} time(s) in the IR text")


# --- small builders for the XML of one layer --------------------------------------------------
# Each returns plain IR text (one element per line) so that tests read like the IR they make.

def _dims(dims) -> str:
    return "".join(f"<dim>{d}</dim>" for d in (dims or ()))


def _port(port_id, dims, precision=None, names=None) -> str:
    extra = f' precision="{precision}"' if precision is not None else ""
    extra += f' names="{names}"' if names is not None else ""
    return f'<port id="{port_id}"{extra}>{_dims(dims)}</port>'


def layer(id, name, type, *, inputs=(), outputs=(), data=None, version="opset1",
          in_ids=None, out_ids=None, precision="FP32", names=None) -> str:
    """A ``<layer>``: ``inputs``/``outputs`` are each port's dims (None: no <dim>); port ids are
    0..n-1 for inputs and continue for outputs unless ``in_ids``/``out_ids`` are given."""
    in_ids = list(in_ids) if in_ids is not None else list(range(len(inputs)))
    out_ids = (list(out_ids) if out_ids is not None
               else list(range(len(inputs), len(inputs) + len(outputs))))
    lines = [f'<layer id="{id}" name="{name}" type="{type}" version="{version}">']
    if data is not None:
        attrs = " ".join(f'{k}="{v}"' for k, v in data.items())
        lines.append(f"  <data {attrs}/>")
    if inputs:
        lines.append("  <input>")
        lines += [f"    {_port(i, d)}" for i, d in zip(in_ids, inputs)]
        lines.append("  </input>")
    if outputs:
        lines.append("  <output>")
        lines += [f"    {_port(i, d, precision, names)}" for i, d in zip(out_ids, outputs)]
        lines.append("  </output>")
    lines.append("</layer>")
    return "\n".join(lines)


MATCHING = "matching"  # precision= default of parameter() and const(): the element type's own


def precision_of(element_type: str) -> str:
    """The port precision that matches an ``element_type`` attribute (f32 -> FP32, i64 -> I64);
    FP32 for a name that is not an element type (tests of bad types don't get as far as IR402)."""
    from irexec.ir import element_type as et

    try:
        return et.from_name(element_type).precision
    except KeyError:
        return "FP32"


def parameter(id, name, shape, element_type="f32", dims=None, precision=MATCHING,
              names=None) -> str:
    """A Parameter; ``dims`` are the output port's <dim>s (default: none written). The output's
    precision matches ``element_type`` unless given (None: no precision attribute)."""
    precision = precision_of(element_type) if precision == MATCHING else precision
    return layer(id, name, "Parameter", outputs=[dims], precision=precision, names=names,
                 data={"shape": shape, "element_type": element_type})


def const(id, name, element_type, shape, offset, size, dims=None, precision=MATCHING,
          names=None) -> str:
    """A Const; the output's precision matches ``element_type`` unless given (None: no
    precision attribute)."""
    precision = precision_of(element_type) if precision == MATCHING else precision
    return layer(id, name, "Const", outputs=[dims], precision=precision, names=names,
                 data={"element_type": element_type, "shape": shape, "offset": offset,
                       "size": size})


def result(id, name, dims=None) -> str:
    return layer(id, name, "Result", inputs=[dims])


def net(layers, edges, version=11, rt_info="") -> str:
    """A whole ``<net>``; ``edges`` are (from-layer, from-port, to-layer, to-port) tuples."""
    body = "\n".join(layers)
    edge_lines = "\n".join(
        f'<edge from-layer="{a}" from-port="{b}" to-layer="{c}" to-port="{d}"/>'
        for a, b, c, d in edges)
    version_attr = "" if version is None else f' version="{version}"'
    return (f'<?xml version="1.0"?>\n<net name="test"{version_attr}>\n<layers>\n{body}\n'
            f"</layers>\n<edges>\n{edge_lines}\n</edges>\n{rt_info}</net>\n")


# --- reading ----------------------------------------------------------------------------------

def read_error(path, weights=None):
    """Read a model that must fail; return the IRError (its ``diagnostics`` hold every problem)."""
    import pytest

    import irexec

    with pytest.raises(irexec.IRError) as info:
        irexec.read_model(path, weights)
    return info.value


def the_diagnostic(error_or_list, code: str):
    """The one diagnostic with ``code`` (an AssertionError lists them all if there is not one)."""
    diags = getattr(error_or_list, "diagnostics", error_or_list)
    found = [d for d in diags if d.code == code]
    assert len(found) == 1, f"expected one {code}, got: {[str(d) for d in diags]}"
    return found[0]


def op_family(type_name: str) -> str:
    """The numeric family (irexec/numerics.py) an op type declares, at its first version."""
    from irexec import numerics
    from irexec.ops import registry
    return numerics.family(registry.lookup(type_name, registry.default_version(type_name)).spec)
