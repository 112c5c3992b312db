"""What an IR file may hold before irexec calls it hostile: no DTD, no entities, bounded nesting
and bounded text.

The parser (``ir_reader._parser``) already never expands entities, never loads a DTD or an
external entity and never touches the network; libxml2 itself stops entity amplification
(billion laughs, quadratic blow-up), nesting deeper than 256 and text nodes over 10 MB. This
module turns each of those refusals into its own diagnostic, and adds irexec's tighter caps:

* IR005 xml-doctype: any ``<!DOCTYPE>`` (internal subset, external DTD, entity declarations).
  An IR file never has one, so refusing it outright leaves nothing to resolve or expand.
* IR006 xml-limit: elements nested deeper than ``MAX_DEPTH``, or a text node or attribute value
  longer than ``MAX_TEXT`` characters.

The depth cap is checked with XPath (C speed). The length caps are checked on the bytes first:
in an ASCII-compatible file without comments, CDATA sections or processing instructions, no text
node or attribute value can be longer than the longest run of bytes without a ``<`` (a character
takes at least one byte, and a raw ``<`` may appear in neither). Finding a ``<`` in every block
of half the cap proves every run short, so the XPath walks over every text and attribute only
for files where a run may be long enough to matter.
"""

from __future__ import annotations

import codecs
import re

from lxml import etree

from irexec.errors import IRError
from irexec.diagnostics.diagnostic import Location
from irexec.io.columns import Columns

MAX_DEPTH = 64  # an IR nests about seven deep: net/layers/layer/output/port/rt_info/attribute,
# and three more per sub-graph body (layer/body/layers/layer): about 19 bodies one inside another
MAX_TEXT = 1 << 20  # characters in one text node or attribute value

_TOO_DEEP = etree.XPath("(/*" + "/*" * MAX_DEPTH + ")[1]")
_TOO_LONG_TEXT = etree.XPath(f"(//text()[string-length(.) > {MAX_TEXT}])[1]")
_TOO_LONG_ATTR = etree.XPath(f"(//@*[string-length(.) > {MAX_TEXT}])[1]")

_ASCII_COMPATIBLE = {"UTF-8", "UTF8", "US-ASCII", "ASCII"}
_WIDE_BOMS = (b"\xff\xfe", b"\xfe\xff")
_NOT_ASCII_COMPATIBLE = ("UTF-16", "UTF16", "UTF-32", "UTF32", "UCS", "IBM", "CP0", "CP1",
                         "EBCDIC", "UTF-7", "UTF7")

# libxml2's messages for the limits it enforces itself (without XML_PARSE_HUGE).
_LIBXML_LIMITS = ("Excessive depth", "Resource limit exceeded", "too long", "Huge input lookup",
                  "Buffer size limit")
_LIBXML_ENTITIES = ("ntity", "PEReference", "DOCTYPE", "DTD")


# --- memory ---------------------------------------------------------------------------------------
# What reading an IR file costs, per element, end tag and attribute (libxml2's nodes plus the
# Python objects irexec builds from them), measured on the file shapes in tests/test_robustness.py
# (test_xml_memory_estimate_bounds_the_peak) and rounded up; docs/robustness.md has the figures.
ELEMENT_BYTES = 420
END_TAG_BYTES = 150
ATTRIBUTE_BYTES = 560
MIN_BYTES_PER_BYTE = 4  # the file's bytes, libxml2's input buffer and its copy of the text, ours
XML_MEMORY_FLOOR = 16 << 20  # what any budget allows the XML: an IR of a few hundred KB


def xml_cost(data: bytes) -> int:
    """About the most memory reading ``data`` as an IR takes (bytes), from counts of its
    markup (C-speed scans, no parse)."""
    tags = data.count(b"<")
    ends = data.count(b"</")
    return (len(data) * MIN_BYTES_PER_BYTE + (tags - ends) * ELEMENT_BYTES
            + ends * END_TAG_BYTES + data.count(b"=") * ATTRIBUTE_BYTES)


def _memory_error(path: str, what: str, cost: int, budget: int) -> IRError:
    from irexec.budget import ENV, describe

    allowed = max(budget, XML_MEMORY_FLOOR)
    return IRError.make("IR109", f"reading this XML file ({what}) would take about "
                                 f"{describe(cost)} of memory, more than the memory budget of "
                                 f"{describe(allowed)}; raise the budget with --memory-budget or "
                                 f"{ENV} if the machine has the memory", Location(path))


def check_xml_size(path: str, size: int, budget: int) -> None:
    """IR109 before reading a file whose bytes alone would exceed the budget."""
    if size * MIN_BYTES_PER_BYTE > max(budget, XML_MEMORY_FLOOR):
        raise _memory_error(path, f"{size} bytes", size * MIN_BYTES_PER_BYTE, budget)


def check_xml_memory(path: str, data: bytes, budget: int) -> None:
    """IR109 before parsing a file whose tree and model would exceed the budget."""
    if len(data) * (MIN_BYTES_PER_BYTE + ELEMENT_BYTES) <= XML_MEMORY_FLOOR:
        return  # small enough whatever it holds (no need to count)
    cost = xml_cost(data)
    if cost > max(budget, XML_MEMORY_FLOOR):
        raise _memory_error(path, f"{len(data)} bytes, {data.count(b'<')} tags", cost, budget)


def out_of_memory(path: str, data: bytes) -> IRError:
    """The error for a parse that ran out of memory (libxml2 says only "unknown error")."""
    from irexec.budget import describe

    return IRError.make("IR109", f"the machine ran out of memory parsing this XML file "
                                 f"({describe(len(data))}); lower the memory budget so that "
                                 f"irexec refuses such a file before parsing it, or free memory",
                        Location(path))


# How a file that is not ASCII-compatible starts (the XML specification's appendix F).
_SIGNATURES = ((b"\x00\x00\xfe\xff", "utf-32-be"), (b"\xff\xfe\x00\x00", "utf-32-le"),
               (b"\xef\xbb\xbf", "utf-8-sig"), (b"\xfe\xff", "utf-16-be"),
               (b"\xff\xfe", "utf-16-le"), (b"\x00\x00\x00<", "utf-32-be"),
               (b"<\x00\x00\x00", "utf-32-le"), (b"\x00<\x00?", "utf-16-be"),
               (b"<\x00?\x00", "utf-16-le"), (b"\x4c\x6f\xa7\x94", "cp037"))
_DECLARED = re.compile(r"""^\s*<\?xml[^>]*?\sencoding\s*=\s*["']([A-Za-z][A-Za-z0-9._-]*)["']""")


def _text(data: bytes) -> str | None:
    """The file as text, in the encoding libxml2 reads it in: its byte-order mark or first
    bytes, else the encoding its XML declaration names (UTF-7 writes ``<`` as ``+ADw-``).
    None for UTF-8 (and an encoding Python does not know): the bytes are the text's.
    Undecodable bytes become U+FFFD."""
    family = next((name for mark, name in _SIGNATURES if data.startswith(mark)), None)
    head = data[:512].decode(family or "latin-1", "replace")
    declared = _DECLARED.match(head.lstrip("\ufeff"))
    encoding = family or "utf-8"
    if declared:
        try:
            named = codecs.lookup(declared.group(1)).name
        except LookupError:
            named = None
        if named and (family is None or not named.startswith(("utf-16", "utf-32"))):
            encoding = named
    if encoding in ("utf-8", "utf-8-sig", "ascii"):
        return None
    return data.decode(encoding, "replace")


def _doctype_position(data: bytes) -> tuple[int, int] | None:
    """Line and column of ``<!DOCTYPE``, in whatever encoding the file is written."""
    at = data.find(b"<!DOCTYPE")  # the common case: an ASCII-compatible file
    if at >= 0:
        line_start = data.rfind(b"\n", 0, at) + 1
        return data.count(b"\n", 0, at) + 1, at - line_start + 1
    text = _text(data)
    if text is None:
        return None  # UTF-8: the bytes said it all
    at = text.find("<!DOCTYPE")
    if at < 0:
        return None
    line_start = text.rfind("\n", 0, at) + 1
    return text.count("\n", 0, at) + 1, at - line_start + 1


def has_doctype(data: bytes) -> bool:
    return _doctype_position(data) is not None


def syntax_error_code(message: str, data: bytes) -> str:
    """The code for a libxml2 refusal: IR005 for entity trouble in a file with a DOCTYPE,
    IR006 for a size or depth limit, else IR002 (plain malformed XML)."""
    if any(s in message for s in _LIBXML_LIMITS):
        return "IR006"
    if has_doctype(data) and any(s in message for s in _LIBXML_ENTITIES):
        return "IR005"
    return "IR002"


def doctype_error(path: str, data: bytes) -> IRError:
    where = _doctype_position(data) or (1, None)
    return IRError.make("IR005", "the file declares a <!DOCTYPE>: IR files have no DTD and no "
                                 "entities, and irexec neither loads nor expands them",
                        Location(path, where[0], column=where[1]))


def _where(path: str, data: bytes, element) -> Location:
    columns = Columns(data, ascii_compatible(data, element.getroottree().docinfo.encoding))
    line = columns.line(element)
    if not line:
        return Location(path)
    return Location(path, line, column=columns.of(element))


def ascii_compatible(data: bytes, encoding: str | None) -> bool:
    """Whether every ASCII character of the file is its own single byte (UTF-8 and the
    8-bit encodings; not UTF-16, UTF-32 or EBCDIC)."""
    if data[:2] in _WIDE_BOMS or b"\0" in data[:4]:
        return False
    name = (encoding or "UTF-8").upper().replace("_", "-")
    return not name.startswith(_NOT_ASCII_COMPATIBLE)


def _may_hold_long_values(data: bytes, encoding: str | None) -> bool:
    """False when the bytes prove that no text node or attribute value is longer than
    ``MAX_TEXT`` characters (see the module's docstring); True when they cannot."""
    if len(data) <= MAX_TEXT:
        return False
    if (encoding or "").upper() not in _ASCII_COMPATIBLE or data[:2] in _WIDE_BOMS \
            or b"\0" in data[:4]:
        return True  # a byte 0x3C may be part of another character
    if b"<!" in data or data.find(b"<?", 1) >= 0:
        return True  # comments, CDATA and PIs may hold '<' or join two texts into one
    # A run of more than MAX_TEXT bytes without '<' covers a whole aligned block of
    # (MAX_TEXT + 1) // 2 bytes: a '<' in every block rules it out (one memchr per block).
    block = (MAX_TEXT + 1) // 2
    return any(data.find(b"<", start, start + block) < 0
               for start in range(0, len(data) - block + 1, block))


def check_tree(root, data: bytes, path: str) -> None:
    """IRError IR005 or IR006 if the parsed document breaks the rules above."""
    tree = root.getroottree()
    if tree.docinfo.doctype or tree.docinfo.internalDTD is not None or \
            tree.docinfo.externalDTD is not None:
        raise doctype_error(path, data)
    deep = _TOO_DEEP(root)
    if deep:
        element = deep[0]
        raise IRError.make("IR006", f"<{element.tag}> is nested more than {MAX_DEPTH} elements "
                                    f"deep; an IR file nests about seven, three more for each "
                                    f"sub-graph body inside another (at most about 19)",
                           _where(path, data, element))
    if not _may_hold_long_values(data, tree.docinfo.encoding):
        return
    long_text = _TOO_LONG_TEXT(root)
    if long_text:
        element = long_text[0].getparent()
        raise IRError.make("IR006", f"the text in <{element.tag}> is longer than {MAX_TEXT} "
                                    f"characters", _where(path, data, element))
    long_attr = _TOO_LONG_ATTR(root)
    if long_attr:
        element = long_attr[0].getparent()
        raise IRError.make("IR006", f"attribute '{long_attr[0].attrname}' of <{element.tag}> is "
                                    f"longer than {MAX_TEXT} characters",
                           _where(path, data, element))


__all__ = ["MAX_DEPTH", "MAX_TEXT", "check_tree", "syntax_error_code"]
