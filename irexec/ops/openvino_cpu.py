"""Where OpenVINO's CPU plugin cannot serve as the oracle for a data-movement layer, for
``irexec compare`` (the ops' ``openvino_refuses`` hook): it crashes the process, or gives values
that are not the data's (measured with OpenVINO 2026.4.1; docs/compatibility.md, "Data
movement"). irexec itself runs every one of these exactly.
"""

from __future__ import annotations

BROKEN = frozenset({"u2", "nf4", "f4e2m1"})  # crash or wrong values in most movement kernels


def refuses(strings: bool = False):
    """A hook refusing data of the BROKEN types, and strings too when ``strings``."""
    def hook(node) -> str | None:
        source = node.inputs[0].source if node.inputs else None
        et = source.element_type if source is not None else None
        if et is None:
            return None
        if et.name in BROKEN or strings and et.name == "string":
            return (f"OpenVINO's CPU plugin crashes on, or corrupts, {node.type} of {et} data "
                    f"(docs/compatibility.md)")
        return None
    return staticmethod(hook)
