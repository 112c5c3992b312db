"""The column of an element in an IR file, in time linear in the file however it is laid out.

lxml (libxml2) records the line of each element -- where its start tag ends -- but never its
column. The rule used here: the k-th element with tag T whose line is L sits at the k-th ``<T``
on line L (followed by a space, ``/``, ``>`` or the end of the line). That is exact for files
written one start tag per line, as OpenVINO writes them, and for one-line files; a start tag
spread over several lines, or a comment holding ``<T``, can shift it.

Two things make it cost nothing per element, even when a whole model sits on one line:

* Each line is indexed once, when a column on it is first asked for: the character column of
  every ``<T`` on it, by tag (the last few lines' indexes are kept). A line is never decoded
  or searched again per element.
* The k of an element is found by walking back in document order, but only as far as the last
  element whose k is already known (an *anchor*: the reader asks for columns in document order,
  so that is usually a few steps), never over the whole line again. A walk that would go past
  ``MAX_WALK`` elements gives up and leaves the column unknown.

Files in an encoding that is not ASCII-compatible (UTF-16, UTF-32) get no columns.
"""

from __future__ import annotations

import re
from array import array
from collections import OrderedDict

MAX_WALK = 10_000  # elements walked back to find an element's ordinal, at most
ANCHORS = 64  # elements whose ordinals are remembered
LINES = 4  # line indexes kept
# The tags irexec asks columns for: anchors remember their ordinals by these.
COUNTED = ("net", "layer", "port", "dim", "data", "edge")
_START = re.compile(rb"<([^\s/>!?<]+)(?=[\s/>]|$)")
_CHUNK = 1 << 24
# libxml2 keeps an element's line in 16 bits: from 65,535 on, lxml gives a line near the
# element's (its first child's), not the line its start tag ends on, so no column is told.
LXML_LAST_LINE = 65535
SHORT_LINE = 4096  # bytes: a line this short is looked at whole for its one start tag
_AFTER_NAME = frozenset(b" \t\r\n/>")


class Columns:
    def __init__(self, data: bytes, ascii_compatible: bool = True):
        self._data = data if ascii_compatible else b""
        self._line_starts: array | None = None
        self._lines: OrderedDict[int, dict[bytes, array]] = OrderedDict()
        self._anchors: OrderedDict = OrderedDict()  # element -> (line, ordinals by COUNTED)

    def of(self, element) -> int | None:
        """The element's 1-based column, or None when it cannot be told."""
        if element is None or not self._data:
            return None
        line, tag = element.sourceline, element.tag
        if not line or not isinstance(tag, str) or line >= LXML_LAST_LINE:
            return None
        name = tag.encode("utf-8", "surrogateescape")
        if line not in self._lines:
            column = self._alone(element, line, name)
            if column is not None:
                return column
        found = self._index(line).get(name)
        if not found:
            return None
        ordinal = self._ordinal(element, line, tag)
        if ordinal is None or ordinal >= len(found):
            return None
        return found[ordinal]

    # --- lines ----------------------------------------------------------------------------

    def _alone(self, element, line: int, name: bytes) -> int | None:
        """The column of an element that is the first on its line (the element before it in
        document order ends its start tag on another line), on a short line holding one start
        tag, of its name (OpenVINO writes one start tag per line): found without indexing the
        line. None when that is not so (the caller then goes the general way)."""
        starts = self._starts()
        if line > len(starts):
            return None
        begin = starts[line - 1]
        end = starts[line] - 1 if line < len(starts) else len(self._data)
        if end - begin > SHORT_LINE:
            return None
        text = self._data[begin:end]
        if text.count(b"<") - text.count(b"</") != 1:
            return None
        at = text.find(b"<")
        while text.startswith(b"/", at + 1):
            at = text.find(b"<", at + 1)
        after = at + 1 + len(name)
        if not text.startswith(name, at + 1) or \
                (after < len(text) and text[after] not in _AFTER_NAME):
            return None
        before = _previous_element(element)
        if before is not None and before.sourceline == line:
            return None
        if text.isascii():
            return at + 1
        return len(text[:at].decode("utf-8", "replace")) + 1

    def _starts(self) -> array:
        """The byte offset where each line starts (found once, in C-speed chunks)."""
        if self._line_starts is None:
            import numpy as np

            starts = array("q", [0])
            data = self._data
            for base in range(0, len(data), _CHUNK):
                chunk = np.frombuffer(data, np.uint8, min(_CHUNK, len(data) - base), base)
                starts.extend((np.flatnonzero(chunk == 10) + (base + 1)).tolist())
            self._line_starts = starts
        return self._line_starts

    def _index(self, line: int) -> dict[bytes, array]:
        index = self._lines.get(line)
        if index is not None:
            self._lines.move_to_end(line)
            return index
        starts = self._starts()
        if line > len(starts):
            return {}
        begin = starts[line - 1]
        end = starts[line] - 1 if line < len(starts) else len(self._data)
        text = self._data[begin:end]
        index = {}
        ascii_line = text.isascii()
        chars, last = 0, 0
        for m in _START.finditer(text):
            at = m.start()
            if ascii_line:
                column = at + 1
            else:  # characters, not bytes: decode only the stretch since the last tag
                chars += len(text[last:at].decode("utf-8", "replace"))
                last = at
                column = chars + 1
            found = index.get(m.group(1))
            if found is None:
                found = index[m.group(1)] = array("q")
            found.append(column)
        self._lines[line] = index
        if len(self._lines) > LINES:
            self._lines.popitem(last=False)
        return index

    # --- ordinals -------------------------------------------------------------------------

    def _ordinal(self, element, line: int, tag: str) -> int | None:
        """How many elements with this tag come before ``element`` on its line."""
        counted = tag in COUNTED
        counts = [0] * len(COUNTED)
        same = 0  # elements with this tag passed (for a tag that is not counted)
        base = None
        x, steps = element, 0
        while True:
            previous = x.getprevious()
            if previous is None:
                x = x.getparent()
                if x is None:
                    break
            else:
                x = previous
                while len(x):
                    x = x[-1]  # the last element inside comes just before
            if not isinstance(x.tag, str):
                continue
            if x.sourceline != line:
                break
            if counted:
                known = self._anchors.get(x)
                if known is not None and known[0] == line:
                    base = known[1]
                    break
            steps += 1
            if steps > MAX_WALK:
                return None
            if x.tag == tag:
                same += 1
            if counted and x.tag in COUNTED:
                counts[COUNTED.index(x.tag)] += 1
        if not counted:
            return same
        if base is not None:
            counts = [a + b for a, b in zip(counts, base)]
        mine = COUNTED.index(tag)
        ordinal = counts[mine]
        counts[mine] += 1  # an anchor's counts include itself
        self._anchors[element] = (line, counts)
        if len(self._anchors) > ANCHORS:
            self._anchors.popitem(last=False)
        return ordinal


def _previous_element(element):
    """The element just before ``element`` in document order (comments and processing
    instructions skipped), or None."""
    x = element
    while True:
        previous = x.getprevious()
        if previous is None:
            x = x.getparent()
            if x is None:
                return None
        else:
            x = previous
            while len(x):
                x = x[-1]  # the last element inside comes just before
        if isinstance(x.tag, str):
            return x


__all__ = ["Columns"]
