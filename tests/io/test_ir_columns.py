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
from irexec.io import columns as columns_module
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


class _Recorded:
    """A random document written piece by piece, remembering for each element (in document
    order) where its start tag begins and ends, in bytes."""

    def __init__(self, rnd: random.Random):
        self.rnd, self.parts, self.size, self.tags = rnd, [], 0, []

    def write(self, text: str) -> None:
        b = text.encode()
        self.parts.append(b)
        self.size += len(b)

    def element(self, depth: int) -> None:
        rnd = self.rnd
        tag = rnd.choice(["a", "b", "port", "po", "dim"])
        attrs = ""
        if rnd.random() < 0.3:
            attrs = ' x="1>2"' + ("\n" if rnd.random() < 0.3 else " ") + "y='\u00e9'"
        begin = self.size
        empty = rnd.random() < 0.3
        self.write(f"<{tag}{attrs}{'/' if empty else ''}>")
        self.tags.append((tag, begin, self.size - 1))
        if empty:
            return
        for _ in range(rnd.randint(0, 3) if depth < 4 else 0):
            self.write(rnd.choice(["", "\n", " ", "\u00e9\n", "<!-- <po x -->", "<?pi <a?>",
                                   "<![CDATA[<port]]>", "\n<!--\n<dim-->"]))
            self.element(depth + 1)
        self.write(f"</{tag}>")

    def document(self, before: bytes) -> bytes:
        """The elements inside <net>, after ``before``."""
        return b"<net>" + before + b"".join(self.parts) + b"</net>"


def _true_position(data: bytes, begin: int, end: int) -> tuple[int, int | None]:
    """Where the start tag spanning bytes [begin, end] ends (line) and begins (column, when it
    is on one line), counted directly."""
    line = data.count(b"\n", 0, end) + 1
    if b"\n" in data[begin:end]:
        return line, None
    start = data.rfind(b"\n", 0, begin) + 1
    return line, len(data[start:begin].decode()) + 1


@pytest.mark.parametrize("seed,chunk", [(0, None), (1, None), (2, None), (3, 7), (4, 64)])
def test_lines_and_columns_past_line_65535_are_exact(seed, chunk, monkeypatch):
    """libxml2 keeps an element's line in 16 bits: from line 65,535 on, lxml reports a nearby
    line (often the next). The reader finds those elements' lines and columns from the bytes.
    Random documents (several elements a line, start tags over two lines, ``>`` inside an
    attribute value, comments, CDATA and processing instructions holding ``<tag``, non-ASCII
    text) are placed after 65,530 filler lines; each element's line and column is counted
    directly from where the generator wrote it. Before the filler, the same count is checked
    against lxml's own lines (which are exact there). ``chunk``: the bytes the reader looks at
    a time, made small so that start tags straddle chunks."""
    if chunk is not None:
        monkeypatch.setattr(columns_module, "_TAG_CHUNK", chunk)
    rnd = random.Random(seed)
    for _ in range(6):
        rec = _Recorded(rnd)
        for _ in range(30):
            rec.element(0)
            rec.write(rnd.choice(["\n", "", " "]))
        for filler in (b"", b"\n" + b"<f/>\n" * 65_530):
            offset = len(b"<net>") + len(filler)
            data = rec.document(filler)
            root = etree.fromstring(data, _parser())
            reader = _Reader.__new__(_Reader)
            reader.index_columns(root, data)
            elements = [e for e in root.iter(tag=etree.Element) if e.tag != "f"][1:]
            assert len(elements) == len(rec.tags)
            for element, (tag, begin, end) in zip(elements, rec.tags):
                assert element.tag == tag
                line, column = _true_position(data, begin + offset, end + offset)
                if not filler:
                    assert element.sourceline == line  # the count agrees with lxml here
                    assert reader.line(element) == line
                    continue
                assert reader.line(element) == line, (seed, tag, line)
                assert reader.column(element) == column, (seed, tag, line)


def test_positions_past_line_65535_asked_out_of_order():
    """Asked backwards, the positions stay exact: the walk starts again (a few times at most)
    or answers from the positions it passed."""
    data = ("<net>\n" + "<a/>\n" * 65_540 + "<b x='1'>\n<c/>\n</b>\n</net>").encode()
    root = etree.fromstring(data, _parser())
    reader = _Reader.__new__(_Reader)
    reader.index_columns(root, data)
    assert reader.line(root[3]) == 5 and reader.column(root[3]) == 1
    b = root.find("b")
    assert (reader.line(b[0]), reader.line(b)) == (65_543, 65_542)
    for i in range(65_545 - 1, 65_525, -1):
        if i < len(root):
            assert reader.line(root[i]) == i + 2, i
            assert reader.column(root[i]) == 1
    assert root[65_538].sourceline != 65_540  # lxml is off here: what the walk corrects


@pytest.mark.parametrize("declaration", ["", '<?xml version="1.0"?>\n'])
def test_a_processing_instruction_first_in_a_long_file_hides_its_tags(declaration):
    """A processing instruction may come before the root, first in the file when there is
    no XML declaration; a ``<layer`` inside it is no element, and the elements after it keep
    their exact lines past line 65,535."""
    data = (declaration + "<?pi <a ?>\n<net>\n" + "<a/>\n" * 65_540 + "</net>\n").encode()
    root = etree.fromstring(data, _parser())
    reader = _Reader.__new__(_Reader)
    reader.index_columns(root, data)
    first = 3 + bool(declaration)  # the line of the first <a/>
    assert (reader.line(root[0]), reader.column(root[0])) == (first, 1)
    assert reader.line(root[-1]) == first + 65_539
