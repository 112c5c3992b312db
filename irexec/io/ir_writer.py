"""Write a Model as an OpenVINO IR v11 ``.xml`` + ``.bin`` pair.

Constants are packed back to back into the .bin; every other attribute, tensor name and rt_info
entry is written as the model holds it, so reading the files back gives the same model. Ports get
the inferred dims (any non-static dim is written -1, as OpenVINO's serializer does) and precisions.
"""

from __future__ import annotations

import os

from lxml import etree

from irexec.errors import IRError
from irexec.io import bin_layout
from irexec.ir import text as ir_text
from irexec.ir.model import Model, RtInfo

_IR_TYPE_NAMES = {"Constant": "Const"}
FEW_ATTRIBUTES = 32
_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", '"': "&quot;", "\n": "&#10;", "\r": "&#13;",
                          "\t": "&#9;"})


def _element(parent, tag: str, attrs: dict[str, str]):
    """``etree.SubElement(parent, tag, attrs)`` in time linear in the number of attributes:
    lxml checks each new attribute against those already set (100,000 took minutes), so an
    element with many is written as text and parsed, which libxml2 does in one pass."""
    if len(attrs) <= FEW_ATTRIBUTES or any(k.startswith("{") for k in attrs):
        return etree.SubElement(parent, tag, attrs)
    text = "<" + tag + "".join(f' {k}="{v.translate(_ESCAPES)}"' for k, v in attrs.items()) + "/>"
    try:
        element = etree.fromstring(text.encode("utf-8", "surrogateescape"),
                                   etree.XMLParser(resolve_entities=False, no_network=True))
    except etree.XMLSyntaxError:
        return etree.SubElement(parent, tag, attrs)  # says what is wrong, as for a few
    parent.append(element)
    return element


def _rt_info(parent, entries: list[RtInfo]) -> None:
    if not entries:
        return
    block = etree.SubElement(parent, "rt_info")

    def add(into, entry):
        element = _element(into, entry.tag, entry.attrs)
        for child in entry.children:
            add(element, child)

    for e in entries:
        add(block, e)


def _dims(port_element, shape) -> None:
    if shape is None or not shape.rank_is_static:
        return
    for d in shape:
        etree.SubElement(port_element, "dim").text = str(d.min) if d.is_static else "-1"


def write_ir(model: Model, xml_path, bin_path=None) -> None:
    xml_path = os.fspath(xml_path)
    bin_path = os.fspath(bin_path) if bin_path else os.path.splitext(xml_path)[0] + ".bin"
    xml, weights = ir_bytes(model)
    _atomic_write(xml_path, xml)
    _atomic_write(bin_path, weights)


def ir_bytes(model: Model) -> tuple[bytes, bytes]:
    """The model as IR v11: the text of its .xml and the bytes of its .bin."""
    net = etree.Element("net", name=model.name, version="11")
    blobs = _Blobs()
    _graph(net, model, blobs)
    _rt_info(net, model.rt_info)
    xml = etree.tostring(net, pretty_print=True, xml_declaration=True, encoding="utf-8")
    return xml, b"".join(blobs.parts)


class _Blobs:
    """The .bin being written: Const payloads back to back (bodies' Consts too)."""

    def __init__(self):
        self.parts: list[bytes] = []
        self.size = 0

    def add(self, blob: bytes) -> None:
        self.parts.append(blob)
        self.size += len(blob)


def _graph(parent, model: Model, blobs: _Blobs) -> None:
    """The <layers> and <edges> of ``model`` (the net, or a layer's body) under ``parent``;
    Const payloads are appended to ``blobs`` (one .bin for the whole file)."""
    layers = etree.SubElement(parent, "layers")
    for node in model.nodes:
        layer = etree.SubElement(layers, "layer", id=str(node.id), name=node.name,
                                 type=_IR_TYPE_NAMES.get(node.type, node.type),
                                 version=node.version)
        attrs = {}
        # A layer whose op irexec lacks keeps its attributes as written (in extra_attrs).
        spec_attrs = node.op.spec.attrs if node.op is not None else ()
        for attr in spec_attrs:
            if (attr.kind == "element_type" and attr.name in node.attrs
                    and not node.attrs[attr.name].in_ir and not node.attrs[attr.name].is_dynamic):
                raise IRError.make("IR505", f"{node.type} '{node.name}': element type "
                                            f"{node.attrs[attr.name]} cannot be written to an IR "
                                            f"file (irexec holds it for ONNX models only)")
            if attr.name in node.attrs and not ((attr.kind == "string_list" or attr.omit_empty)
                                                and not node.attrs[attr.name]):
                attrs[attr.name] = attr.format(node.attrs[attr.name])
        if node.op is not None and node.op.spec.role == "constant":
            try:
                blob = bin_layout.encode(node.attrs["element_type"], node.value)
            except bin_layout.LayoutError as e:
                raise IRError.make("IR506", f"Const '{node.name}': {e}") from None
            attrs["offset"], attrs["size"] = str(blobs.size), str(len(blob))
            blobs.add(blob)
        for attr in spec_attrs:
            if attr.on_layer and attr.name in attrs:
                layer.set(attr.name, attrs.pop(attr.name))  # where OpenVINO reads it
        attrs.update(node.extra_attrs)
        if attrs:
            _element(layer, "data", attrs)
        _rt_info(layer, node.rt_info)
        if node.inputs:
            block = etree.SubElement(layer, "input")
            for port in node.inputs:
                element = etree.SubElement(block, "port", id=str(port.port_id))
                _dims(element, port.source.partial_shape if port.source else port.declared)
                _rt_info(element, port.rt_info)
        if node.outputs:
            block = etree.SubElement(layer, "output")
            for port in node.outputs:
                attributes = {"id": str(port.port_id)}
                et = port.element_type or port.precision
                if et is not None:
                    attributes["precision"] = et.precision
                if port.names:
                    attributes["names"] = ir_text.join_names(port.names)
                element = etree.SubElement(block, "port", attributes)
                # (not ``or``: a scalar's or a dynamic rank's shape has no length to test)
                _dims(element, port.partial_shape if port.partial_shape is not None
                      else port.declared)
                _rt_info(element, port.rt_info)
        if node.bodies:
            _bodies(layer, node, blobs)
    edges = etree.SubElement(parent, "edges")
    for node in model.nodes:
        for port in node.inputs:
            if port.source is not None:
                etree.SubElement(edges, "edge", {
                    "from-layer": str(port.source.node.id), "from-port": str(port.source.port_id),
                    "to-layer": str(node.id), "to-port": str(port.port_id)})



def _bodies(layer, node, blobs: _Blobs) -> None:
    """A layer's port maps, back edges and bodies, where OpenVINO's reader looks for them."""
    for body in node.bodies.values():
        port_map = etree.SubElement(layer, body.port_map_tag)
        for kind, mappings in (("input", body.inputs), ("output", body.outputs)):
            for m in mappings:
                attributes = {"external_port_id": str(m.external),
                              "internal_layer_id": str(m.internal)}
                if m.axis is not None:
                    attributes.update(axis=str(m.axis), start=str(m.start), end=str(m.end),
                                      stride=str(m.stride), part_size=str(m.part_size))
                if m.purpose is not None:
                    attributes["purpose"] = m.purpose
                etree.SubElement(port_map, kind, attributes)
        if body.back_edges:
            back = etree.SubElement(layer, "back_edges")
            for source, target in body.back_edges:
                etree.SubElement(back, "edge", {"from-layer": str(source),
                                                "to-layer": str(target)})
    for body in node.bodies.values():
        _graph(etree.SubElement(layer, body.name), body.model, blobs)


def _atomic_write(path: str, data: bytes) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
