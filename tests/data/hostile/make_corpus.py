#!/usr/bin/env python3
"""Write the hostile corpus: one file (or .xml + .bin pair) per attack or breakage, and
manifest.json naming the diagnostic code each must give. Run it after changing a case:

    python tests/data/hostile/make_corpus.py

Each case starts from the same small, valid model (Parameter -> ReverseSequence with a Const of
sequence lengths -> Result) and breaks one thing. Cases of kind "input" are .npy files given to
``irexec run base.xml --input data=FILE``. The secret that the XXE cases point at is written by
the test into a temporary folder; here they point at /etc/hostname, which a broken parser would
read into the model.
"""

from __future__ import annotations

import json
import pickle
import struct
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent

BASE_BIN = struct.pack("<2q", 1, 2)  # seq_lengths = [1, 2]


def model(*, prolog="", net='name="hostile" version="11"', data_attrs='shape="2,3" '
          'element_type="f32"', dims0=("2", "3"), layer0='id="0" name="data" type="Parameter" '
          'version="opset1"', const_attrs='element_type="i64" shape="2" offset="0" size="16"',
          rs_attrs='batch_axis="0" seq_axis="1"', rs_type="ReverseSequence", precision="FP32",
          port0_id="0", edges=None, extra_layers="", rt_info="", const_dims=("2",)) -> str:
    d0 = "".join(f"<dim>{d}</dim>" for d in dims0)
    dc = "".join(f"<dim>{d}</dim>" for d in const_dims)
    edges = edges if edges is not None else (
        '<edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>\n'
        '    <edge from-layer="1" from-port="0" to-layer="2" to-port="1"/>\n'
        '    <edge from-layer="2" from-port="2" to-layer="3" to-port="0"/>')
    return f"""<?xml version="1.0"?>
{prolog}<net {net}>
  <layers>
    <layer {layer0}>
      <data {data_attrs}/>
      <output><port id="{port0_id}" precision="{precision}" names="data">{d0}</port></output>
      {rt_info}
    </layer>
    <layer id="1" name="seq_lengths" type="Const" version="opset1">
      <data {const_attrs}/>
      <output><port id="0" precision="I64">{dc}</port></output>
    </layer>
    <layer id="2" name="reversed" type="{rs_type}" version="opset1">
      <data {rs_attrs}/>
      <input><port id="0"><dim>2</dim><dim>3</dim></port><port id="1"><dim>2</dim></port></input>
      <output><port id="2" precision="FP32" names="reversed"><dim>2</dim><dim>3</dim></port></output>
    </layer>
    <layer id="3" name="out" type="Result" version="opset1">
      <input><port id="0"><dim>2</dim><dim>3</dim></port></input>
    </layer>{extra_layers}
  </layers>
  <edges>
    {edges}
  </edges>
</net>
"""


LAUGHS = ('<!DOCTYPE net [\n  <!ENTITY lol "lol">\n' + "".join(
    f'  <!ENTITY lol{i} "{("&lol%d;" % (i - 1) if i > 1 else "&lol;") * 10}">\n'
    for i in range(1, 10)) + "]>\n")
QUADRATIC = '<!DOCTYPE net [\n  <!ENTITY a "' + "x" * 50_000 + '">\n]>\n'
E = "<edge from-layer=\"{}\" from-port=\"{}\" to-layer=\"{}\" to-port=\"{}\"/>"
OK_EDGES = [E.format(0, 0, 2, 0), E.format(1, 0, 2, 1), E.format(2, 2, 3, 0)]


def edges(*extra, drop=()):
    return "\n    ".join([e for i, e in enumerate(OK_EDGES) if i not in drop] + list(extra))


def nested(depth: int) -> str:
    return "<rt_info>" + "<attribute name=\"x\" value=\"1\">" * depth + \
        "</attribute>" * depth + "</rt_info>"


# name: (xml text or bytes, bin bytes or None for no .bin, code, what it is)
CASES: dict[str, tuple] = {
    # --- XML: entities, DTDs, limits -----------------------------------------------------------
    "billion_laughs": (model(prolog=LAUGHS, net='name="&lol9;" version="11"'), BASE_BIN,
                       "IR005", "billion laughs: nine levels of tenfold entity expansion"),
    "quadratic_blowup": (model(prolog=QUADRATIC, net='name="' + "&a;" * 2000 + '" version="11"'),
                         BASE_BIN, "IR005", "quadratic blow-up: one 50 kB entity used 2000 times"),
    "xxe_local_file": (model(prolog='<!DOCTYPE net [<!ENTITY x SYSTEM "file:///etc/hostname">]>\n',
                             net='name="&x;" version="11"'), BASE_BIN, "IR005",
                       "XXE: an external entity naming a local file"),
    "xxe_parameter_entity": (model(prolog='<!DOCTYPE net [<!ENTITY % x SYSTEM '
                                          '"file:///etc/hostname"> %x;]>\n'), BASE_BIN, "IR005",
                             "XXE through a parameter entity in the internal subset"),
    "xxe_network": (model(prolog='<!DOCTYPE net [<!ENTITY x SYSTEM "http://127.0.0.1:9/x">]>\n',
                          net='name="&x;" version="11"'), BASE_BIN, "IR005",
                    "external entity on the network"),
    "external_dtd": (model(prolog='<!DOCTYPE net SYSTEM "file:///etc/hostname">\n'), BASE_BIN,
                     "IR005", "an external DTD"),
    "harmless_doctype": (model(prolog="<!DOCTYPE net>\n"), BASE_BIN, "IR005",
                         "a DOCTYPE with nothing in it: still refused"),
    "entity_in_attribute": (model(prolog='<!DOCTYPE net [<!ENTITY n "7">]>\n',
                                  rs_attrs='batch_axis="&n;" seq_axis="1"'), BASE_BIN, "IR005",
                            "an internal entity inside an attribute value"),
    "utf16_doctype": (model(prolog='<!DOCTYPE net [<!ENTITY x SYSTEM "file:///etc/hostname">]>\n')
                      .replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="UTF-16"?>')
                      .encode("utf-16"), BASE_BIN, "IR005",
                      "XXE in a UTF-16 file (a byte search for <!DOCTYPE misses it)"),
    "utf16_entity_reference": (model(prolog='<!DOCTYPE net [<!ENTITY x "y">]>\n',
                                     net='name="&nope;" version="11"')
                               .replace('<?xml version="1.0"?>',
                                        '<?xml version="1.0" encoding="UTF-16"?>')
                               .encode("utf-16"), BASE_BIN, "IR005",
                               "a UTF-16 file declaring an entity and using an undefined one "
                               "(libxml2 fails before irexec sees the DOCTYPE)"),
    "utf32_billion_laughs": (model(prolog=LAUGHS, net='name="&lol9;" version="11"')
                             .replace('<?xml version="1.0"?>',
                                      '<?xml version="1.0" encoding="UTF-32"?>')
                             .encode("utf-32"), BASE_BIN, "IR005",
                             "billion laughs in UTF-32"),
    "utf7_doctype": ('<?xml version="1.0" encoding="UTF-7"?>\n'.encode()
                     + model(prolog='<!DOCTYPE net [<!ENTITY x "y">]>\n',
                             net='name="&nope;" version="11"').split("\n", 1)[1]
                     .encode("utf-7").replace(b"<!DOCTYPE", b"+ADwAIQ-DOCTYPE"), BASE_BIN,
                     "IR005", "a DOCTYPE written +ADwAIQ-DOCTYPE in a UTF-7 file"),
    "undefined_entity": (model(net='name="&nope;" version="11"'), BASE_BIN, "IR002",
                         "a reference to an entity nobody declared"),
    "deep_rt_info": (model(rt_info=nested(80)), BASE_BIN, "IR006",
                     "rt_info nested 80 deep (irexec's cap is 64)"),
    "libxml_depth": (model(rt_info=nested(300)), BASE_BIN, "IR006",
                     "nested 300 deep, past libxml2's own limit of 256"),
    "not_utf8": (model().encode().replace(b'name="data"', b'name="d\xff\xfe"'), BASE_BIN,
                 "IR002", "bytes that are not UTF-8 in a layer name"),
    "nul_byte": (model().encode().replace(b'name="data"', b'name="d\x00a"'), BASE_BIN, "IR002",
                 "a NUL byte in an attribute"),
    "empty_file": (b"", BASE_BIN, "IR002", "an empty .xml"),
    "truncated_xml": (model()[:400], BASE_BIN, "IR002", "the file cut off mid-element"),
    "binary_garbage": (bytes(range(256)) * 4, BASE_BIN, "IR002", "random bytes, not XML"),
    "root_not_net": (model().replace("<net ", "<network ").replace("</net>", "</network>"),
                     BASE_BIN, "IR003", "the root element is not <net>"),
    "version_1e309": (model(net='name="hostile" version="1e309"'), BASE_BIN, "IR004",
                      "IR version 1e309"),
    # --- numbers where integers belong ---------------------------------------------------------
    "layer_id_nan": (model(layer0='id="NaN" name="data" type="Parameter" version="opset1"'),
                     BASE_BIN, "IR101", "layer id NaN"),
    "layer_id_hex": (model(layer0='id="0x10" name="data" type="Parameter" version="opset1"'),
                     BASE_BIN, "IR101", "layer id 0x10"),
    "layer_id_huge": (model(layer0='id="99999999999999999999999" name="data" type="Parameter" '
                                   'version="opset1"'), BASE_BIN, "IR101",
                      "a layer id of 23 digits"),
    "port_id_1e309": (model(port0_id="1e309"), BASE_BIN, "IR104", "port id 1e309"),
    "dim_nan": (model(dims0=("NaN", "3")), BASE_BIN, "IR105", "a <dim> holding NaN"),
    "dim_hex": (model(dims0=("0x10", "3")), BASE_BIN, "IR105", "a <dim> holding 0x10"),
    "dim_1e309": (model(dims0=("1e309", "3")), BASE_BIN, "IR105", "a <dim> holding 1e309"),
    "dim_negative": (model(dims0=("-5", "3")), BASE_BIN, "IR105", "a <dim> of -5"),
    "dim_beyond_int64": (model(dims0=("99999999999999999999", "3")), BASE_BIN, "IR105",
                         "a <dim> past 2**63"),
    "dim_question_mark": (model(dims0=("?", "3")), BASE_BIN, "IR107", "a <dim> holding ?"),
    "dim_fullwidth_digit": (model(dims0=("\uff12", "3")), BASE_BIN, "IR105",
                            "a <dim> holding a fullwidth 2 (Python's int() reads it as 2)"),
    "dim_arabic_indic_digit": (model(dims0=("\u0662", "3")), BASE_BIN, "IR105",
                               "a <dim> holding an Arabic-Indic 2"),
    "dim_ideographic_space": (model(dims0=("2\u3000", "3")), BASE_BIN, "IR105",
                              "a <dim> of 2 followed by an ideographic space"),
    "attr_axis_fullwidth": (model(rs_attrs='batch_axis="\uff10" seq_axis="1"'), BASE_BIN,
                            "IR302", "batch_axis a fullwidth 0"),
    "shape_attr_fullwidth": (model(data_attrs='shape="2,\uff13" element_type="f32"'), BASE_BIN,
                             "IR302", "a Parameter shape with a fullwidth 3"),
    "precision_ideographic_space": (model(precision="FP32\u3000"), BASE_BIN, "IR106",
                                    "precision FP32 and an ideographic space (str.strip() "
                                    "drops it)"),
    "attr_axis_1e309": (model(rs_attrs='batch_axis="1e309" seq_axis="1"'), BASE_BIN, "IR302",
                        "batch_axis 1e309"),
    "attr_axis_nan": (model(rs_attrs='batch_axis="NaN" seq_axis="1"'), BASE_BIN, "IR302",
                      "batch_axis NaN"),
    "attr_axis_hex": (model(rs_attrs='batch_axis="0x10" seq_axis="1"'), BASE_BIN, "IR302",
                      "batch_axis 0x10"),
    "attr_axis_int64_max": (model(rs_attrs='batch_axis="9223372036854775807" seq_axis="1"'),
                            BASE_BIN, "IR306", "batch_axis 2**63-1"),
    "attr_axis_int64_min": (model(rs_attrs='batch_axis="-9223372036854775808" seq_axis="1"'),
                            BASE_BIN, "IR306", "batch_axis -2**63"),
    "shape_attr_garbage": (model(data_attrs='shape="2,3,\u202e" element_type="f32"'), BASE_BIN,
                           "IR302", "a Parameter shape with a right-to-left override"),
    "element_type_garbage": (model(data_attrs='shape="2,3" element_type="f128"'), BASE_BIN,
                             "IR302", "element type f128"),
    "precision_garbage": (model(precision="FP1e309"), BASE_BIN, "IR106", "precision FP1e309"),
    # --- shapes and memory -----------------------------------------------------------------------
    "dims_over_budget": (model(dims0=("1000000", "1000000", "1000"), data_attrs='shape="1000000,'
                               '1000000,1000" element_type="f32"'), BASE_BIN, "IR109",
                         "a Parameter of 10**15 elements (4 PB)"),
    "dims_overflow_int64": (model(dims0=("4294967296", "4294967296", "4"),
                                  data_attrs='shape="4294967296,4294967296,4" element_type="f32"'),
                            BASE_BIN, "IR109", "dims whose product overflows int64"),
    "const_shape_over_budget": (model(const_attrs='element_type="i64" shape="1000000000000" '
                                                  'offset="0" size="16"',
                                      const_dims=("1000000000000",)), BASE_BIN, "IR109",
                                "a Const of 10**12 elements in a 16-byte .bin"),
    "const_shape_overflow_int64": (model(const_attrs='element_type="u1" shape="4294967296,'
                                                     '4294967296,4294967296" offset="0" size="16"',
                                         const_dims=("2",)), BASE_BIN, "IR109",
                                   "a Const shape whose product overflows int64"),
    "rank_65_parameter": (model(dims0=("1",) * 65, data_attrs='shape="' + ",".join("1" * 65)
                                + '" element_type="f32"'), BASE_BIN, "IR114",
                          "a Parameter of 65 dims, past numpy's 64"),
    "rank_65_const": (model(const_attrs='element_type="i64" shape="' + ",".join("1" * 64)
                            + ',2" offset="0" size="16"', const_dims=("1",) * 64 + ("2",)),
                      BASE_BIN, "IR114", "a Const of 65 dims"),
    "rank_1000_port": (model(dims0=("1",) * 1000), BASE_BIN, "IR114",
                       "an output port of 1,000 <dim>s"),
    "dims_huge_times_zero": (model(dims0=("4611686018427387904", "0"),
                                   data_attrs='shape="4611686018427387904,0" element_type="f32"'),
                             BASE_BIN, "IR109",
                             "a Parameter of [2**62, 0]: no element, but numpy cannot make it"),
    "const_huge_times_zero": (model(const_attrs='element_type="i64" shape="0,1000000000000000" '
                                                'offset="0" size="0"',
                                    const_dims=("0", "1000000000000000")),
                              BASE_BIN, "IR109", "a Const of [0, 10**15]: empty, one dim huge"),
    "const_offset_negative": (model(const_attrs='element_type="i64" shape="2" offset="-8" '
                                                'size="16"'), BASE_BIN, "IR302",
                              "a Const at offset -8"),
    "const_offset_absurd": (model(const_attrs='element_type="i64" shape="2" '
                                              'offset="9223372036854775807" size="16"'),
                            BASE_BIN, "IR502", "a Const at offset 2**63-1"),
    "const_size_absurd": (model(const_attrs='element_type="i64" shape="2" offset="0" '
                                            'size="18446744073709551615"'), BASE_BIN, "IR502",
                          "a Const of size 2**64-1"),
    "const_size_nan": (model(const_attrs='element_type="i64" shape="2" offset="0" size="NaN"'),
                       BASE_BIN, "IR302", "a Const of size NaN"),
    "bin_missing": (model(), None, "IR501", "no .bin beside the .xml"),
    "bin_truncated": (model(), BASE_BIN[:9], "IR502", "the .bin cut short"),
    "string_const_bad_offsets": (model(const_attrs='element_type="string" shape="2" offset="0" '
                                                   'size="16"'),
                                 struct.pack("<4i", 2, 0, 1 << 30, 5), "IR506",
                                 "a string Const whose offsets point past the payload"),
    "seq_lengths_too_long": (model(), struct.pack("<2q", 1, 1 << 40), "IR308",
                             "sequence lengths beyond the sequence axis"),
    # --- the graph -------------------------------------------------------------------------------
    "edge_to_nowhere": (model(edges=edges(E.format(9, 0, 2, 0), drop=(0,))), BASE_BIN, "IR201",
                        "an edge from a layer that does not exist"),
    "edge_port_1e309": (model(edges=edges(E.format(0, "1e309", 2, 0), drop=(0,))), BASE_BIN,
                        "IR201", "an edge from port 1e309"),
    "self_loop": (model(edges=edges(E.format(2, 2, 2, 0), drop=(0,))), BASE_BIN, "IR204",
                  "a layer feeding itself"),
    "duplicate_layer_id": (model(extra_layers='\n    <layer id="2" name="again" type="Result" '
                                              'version="opset1"/>'), BASE_BIN, "IR102",
                           "two layers with id 2"),
    "unknown_op": (model(rs_type="Exec"), BASE_BIN, "IR103", "a layer of a type nobody knows"),
}

# .npy inputs given with --input data=FILE to the first case's valid model (base.xml).
_header = np.lib.format
INPUTS: dict[str, tuple[bytes, str, str]] = {}


def _npy(array, **kw) -> bytes:
    import io

    buf = io.BytesIO()
    np.save(buf, array, **kw)
    return buf.getvalue()


def _inputs() -> None:
    good = _npy(np.zeros((2, 3), np.float32))
    INPUTS["input_pickled.npy"] = (_npy(np.array([{"a": 1}], dtype=object), allow_pickle=True),
                                   "IR606", "an object array: loading it would unpickle")
    INPUTS["input_raw_pickle.npy"] = (pickle.dumps([1, 2, 3]), "IR606",
                                      "a bare pickle named .npy")
    INPUTS["input_truncated.npy"] = (good[:-5], "IR606", "a .npy cut short")
    INPUTS["input_header_only.npy"] = (good[:good.index(b"\n") + 1], "IR606",
                                       "a .npy header and no data")
    header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000,), }"
    header += b" " * (118 - len(header)) + b"\n"
    INPUTS["input_huge_shape.npy"] = (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) +
                                      header + bytes(24), "IR606",
                                      "a header claiming 10**12 elements over 24 bytes")
    INPUTS["input_not_npy.npy"] = (b"1 2 3\n", "IR606", "text, not a .npy")


def main() -> None:
    _inputs()
    for old in HERE.iterdir():
        if old.suffix in (".xml", ".bin", ".npy"):
            old.unlink()
    manifest = {}
    (HERE / "base.xml").write_text(model(), encoding="utf-8")
    (HERE / "base.bin").write_bytes(BASE_BIN)
    for name, (xml, weights, code, what) in CASES.items():
        data = xml.encode("utf-8") if isinstance(xml, str) else xml
        (HERE / f"{name}.xml").write_bytes(data)
        if weights is not None:
            (HERE / f"{name}.bin").write_bytes(weights)
        manifest[f"{name}.xml"] = {"kind": "model", "code": code, "what": what}
    for name, (data, code, what) in INPUTS.items():
        (HERE / name).write_bytes(data)
        manifest[name] = {"kind": "input", "code": code, "what": what}
    (HERE / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(f"{len(manifest)} cases")


if __name__ == "__main__":
    main()
