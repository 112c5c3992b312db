"""The reader's columns: found on demand (no index of every element), and always the column the
rule gives: the k-th ``<tag`` (followed by a space, ``/``, ``>`` or the line's end) on the
element's line for the k-th element with that tag whose line (lxml's: where its start tag ends)
it is.

Random documents mix several elements per line, start tags spread over lines, tag names that
are prefixes of others (``po`` / ``port``), comments and CDATA holding ``<tag``, and non-ASCII
attribute values; every element's column is compared with a straightforward implementation of
the rule (the index the reader used to build).
"""

import random
import re
import time

import pytest
from lxml import etree

import irexec
from irexec.io.ir_reader import _parser, _Reader


def reference_columns(root, data: bytes):
    lines = data.split(b"\n")
    ordinal, counts = {}, {}
    for element in root.iter(tag=etree.Element):
        key = (element.sourceline, element.tag)
        ordinal[element] = counts.get(key, 0)
        counts[key] = ordinal[element] + 1

    def column(element):
        line = lines[element.sourceline - 1].decode("utf-8", "replace")
        found = [m.start() for m in re.finditer("<" + re.escape(element.tag) + r"(?=[\s/>]|$)",
                                                  line)]
        k = ordinal[element]
        return found[k] + 1 if k < len(found) else None

    return column


def random_document(rnd: random.Random) -> bytes:
    tags = ["a", "b", "port", "po", "dim"]
    gaps = ["", "\n", " ", "  \n", "<!-- <po x -->", "<![CDATA[<port]]>", "\n<!--\n<dim-->"]

    def element(depth):
        tag = rnd.choice(tags)
        attrs = ""
        if rnd.random() < 0.3:
            attrs = ' x="1"' + ("\n" if rnd.random() < 0.3 else " ") + 'y="\u00e9"'
        kids = "".join(rnd.choice(gaps) + element(depth + 1)
                       for _ in range(rnd.randint(0, 3) if depth < 4 else 0))
        if not kids and rnd.random() < 0.5:
            return f"<{tag}{attrs}/>"
        return f"<{tag}{attrs}>{kids}{rnd.choice(gaps)}</{tag}>"

    return ("<net>" + element(0) + "</net>").encode()


@pytest.mark.parametrize("seed", range(4))
def test_columns_follow_the_rule_on_random_documents(seed):
    rnd = random.Random(seed)
    for _ in range(400):
        data = random_document(rnd)
        root = etree.fromstring(data, _parser())
        reader = _Reader.__new__(_Reader)
        reader.index_columns(root, data)
        expected = reference_columns(root, data)
        for element in root.iter(tag=etree.Element):
            assert reader.column(element) == expected(element), (data, element.tag,
                                                                 element.sourceline)


def test_a_one_line_file_keeps_the_rule(tmp_path):
    """Two layers with the same problem on one line: each diagnostic's column is the rule's
    (``<layers`` is not a ``<layer``)."""
    layer = ('<layer id="{i}" name="p{i}" type="NoSuchOp" version="opset1">'
             '<output><port id="0" precision="FP32"><dim>2</dim></port></output></layer>')
    xml = ('<net name="m" version="11"><layers>' + layer.format(i=0) + layer.format(i=1)
           + '</layers><edges/></net>')
    path = tmp_path / "one_line.xml"
    path.write_text(xml)
    _, diags = irexec.api.check_model(str(path))
    columns = [d.location.column for d in diags if d.code == "IR103"]
    root = etree.fromstring(xml.encode(), _parser())
    expected = reference_columns(root, xml.encode())
    assert columns == [expected(layer) for layer in root.iter("layer")]
    assert columns == [xml.index('<layer id="0"') + 1, xml.index('<layer id="1"') + 1]


def test_no_column_where_lxml_cannot_tell_the_line(tmp_path):
    """From line 65,535 on, libxml2's 16-bit line numbers make lxml report a nearby line
    (a child's), not where the element's start tag ends: no column is claimed there."""
    data = ("<net>\n" + "<a/>\n" * 65_540 + "<b x='1'>\n<c/>\n</b>\n</net>").encode()
    root = etree.fromstring(data, _parser())
    reader = _Reader.__new__(_Reader)
    reader.index_columns(root, data)
    assert reader.column(root[3]) == 1  # line 5: told
    assert reader.column(root.find("b")) is None
    assert all(reader.column(a) is None for a in root[65_540:65_545])
