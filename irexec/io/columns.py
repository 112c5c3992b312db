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

**Files of 65,535 lines or more.** libxml2 keeps no element's line from line 65,535 on (it
stores lines in 16 bits), and lxml then reports the line of a nearby node instead: a child's,
the next or the previous sibling's, which may be any earlier line. So in such a file neither
the line nor the rule above can be trusted, and :meth:`Columns.line` and :meth:`Columns.of` find
both from the bytes: the k-th start tag named T in the file (comments, CDATA sections and
processing instructions skipped) is the k-th element named T in document order, so a walk over
the elements named T, in step with those start tags, tells each one's position exactly (a start
tag over several lines gets its line and no column). The reader asks in document order, so each
walk goes forward once over the file; the positions of the elements passed last (up to twice
``KEPT``) are remembered, and a question about an element passed before them starts that tag's
walk again (at most ``REWALKS`` times; after that, lxml's line and no column).
"""

from __future__ import annotations

import re
from array import array
from collections import OrderedDict

import numpy as np

MAX_WALK = 10_000  # elements walked back to find an element's ordinal, at most
ANCHORS = 64  # elements whose ordinals are remembered
LINES = 4  # line indexes kept
# The tags irexec asks columns for: anchors remember their ordinals by these.
COUNTED = ("net", "layer", "port", "dim", "data", "edge")
_START = re.compile(rb"<([^\s/>!?<]+)(?=[\s/>]|$)")
_CHUNK = 1 << 24
# libxml2 keeps an element's line in 16 bits: from 65,535 on, lxml gives the line of a node
# near the element, not the line its start tag ends on (such files go by _Exact).
LXML_LAST_LINE = 65535
SHORT_LINE = 4096  # bytes: a line this short is looked at whole for its one start tag
_AFTER_NAME = frozenset(b" \t\r\n/>")
# What can open with "<" in a parsed IR file: comments, CDATA sections and processing
# instructions (skipped: no element), end tags (skipped), start tags (group 1: the name)
_MARKUP = re.compile(rb"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>|<!|</|<([^\s/>!?<]+)",
                     re.DOTALL)
_TAG_REST = re.compile(rb"""(?:[^>"']+|"[^"]*"|'[^']*')*>""")  # up to a start tag's end
REWALKS = 4  # walks started again for a question about an element already passed, at most
KEPT = 1 << 16  # passed elements whose tag offsets are kept for questions asked again
_TAG_CHUNK = 1 << 22  # bytes looked at a time to count the start tags' lines and columns
_NAME_ENDS = np.frombuffer(b" \t\r\n/>", np.uint8)


class Columns:
    def __init__(self, data: bytes, ascii_compatible: bool = True):
        self._data = data if ascii_compatible else b""
        self._line_starts: array | None = None
        self._lines: OrderedDict[int, dict[bytes, array]] = OrderedDict()
        self._anchors: OrderedDict = OrderedDict()  # element -> (line, ordinals by COUNTED)
        self._long: bool | None = None  # the file has 65,535 lines or more
        self._exact: _Exact | None = None  # positions from the bytes, for such a file

    def _is_long(self) -> bool:
        if self._long is None:
            self._long = self._data.count(b"\n") >= LXML_LAST_LINE - 1
        return self._long

    def _position(self, element) -> tuple[int, int | None] | None:
        if self._exact is None:
            self._exact = _Exact(self._data)
        return self._exact.position(element)

    def line(self, element) -> int | None:
        """The line where the element's start tag ends: lxml's, or in a file of 65,535 lines
        or more (where lxml's is not to be trusted) the one found from the bytes."""
        line = element.sourceline
        if line is None or not self._data or not self._is_long():
            return line
        found = self._position(element)
        return found[0] if found is not None else line

    def position(self, element) -> tuple[int | None, int | None]:
        """(:meth:`line`, :meth:`of`) of the element."""
        if self._data and self._is_long():
            found = self._position(element)
            if found is not None:
                return found
            return element.sourceline, None
        return element.sourceline, self.of(element)

    def of(self, element) -> int | None:
        """The element's 1-based column, or None when it cannot be told."""
        if element is None or not self._data:
            return None
        line, tag = element.sourceline, element.tag
        if not line or not isinstance(tag, str):
            return None
        if self._is_long():
            found = self._position(element)
            return found[1] if found is not None else None
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


class _Exact:
    """Exact positions of elements from the bytes of a file (see the module's docstring): for
    each tag, the k-th element with that tag in document order is the k-th start tag of that
    name in the file. The start tags are found once, with numpy, unless the file holds
    comments, CDATA sections or processing instructions (which may hold text like a start tag):
    then by a regular expression that skips them; their lines and columns are counted at the
    same time, for all of them."""

    def __init__(self, data: bytes):
        self.data = data
        self.bytes = np.frombuffer(data, np.uint8)
        self.ascii = data.isascii()
        self._tag_table = None  # see _tags
        self.walks: dict[str, list] = {}  # tag -> [its elements' iterator, positions, k]
        self.walked: dict[str, int] = {}  # tag -> walks started
        # element -> (line, column), for the elements passed last (two generations of up to
        # KEPT each: the older is dropped whole when the newer fills)
        self.passed: dict = {}
        self.older: dict = {}
        self.cursor = (0, 0, 1)  # the last non-ASCII column counted: offset, line, column

    def position(self, element) -> tuple[int, int | None] | None:
        """(line where its start tag ends, column where it begins), or None when the file
        and lxml's tree disagree or the walks over this tag are used up."""
        found = self.passed.get(element)
        if found is None:
            found = self.older.get(element)
            if found is None:
                found = self._advance(element)
                if found is None:
                    return None
        if found[2] >= 0:
            return found[0], found[1] or None  # 0: a start tag over several lines
        return found[0], self._characters(found[2], found[0])  # a line that is not ASCII

    def _advance(self, element):
        """Walk on over the elements with its tag to ``element`` (from the first again when
        it is not ahead): its (line, column, -1 - offset when the column is to be counted in
        characters, else 0)."""
        tag = element.tag
        for restart in (False, True):
            walk = self.walks.get(tag)
            if walk is None or restart:
                if "{" in tag or ":" in tag or self.walked.get(tag, 0) >= REWALKS:
                    return None  # a namespace (named otherwise in the file), or used up
                self.walked[tag] = self.walked.get(tag, 0) + 1
                root = element.getroottree().getroot()
                walk = self.walks[tag] = [root.iter(tag), self._of_tag(tag), 0]
            elements, positions, k = walk
            passed = self.passed
            try:
                for x in elements:
                    found = passed[x] = positions[k]
                    k += 1
                    if x is element:
                        walk[2] = k
                        if len(passed) > KEPT:
                            self.older, self.passed = passed, {}
                        return found
            except IndexError:  # more elements than start tags: the file and tree disagree
                self.walked[tag] = REWALKS
            del self.walks[tag]  # the end: the element came before where the walk began
        return None

    def _tags(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every start tag of the file: its offset, the line where it ends, the column (in
        bytes) where it begins (0: it spans lines). Counted once, a chunk of the file at a
        time (the temporaries are bounded whatever the file holds; what is kept is three
        numbers per element, which the reader's memory estimate covers)."""
        if self._tag_table is not None:
            return self._tag_table
        data, a = self.data, self.bytes
        lt = np.flatnonzero(a[:-1] == ord("<"))
        after = a[lt + 1]
        pi = after == ord("?")
        if len(pi) and lt[0] == 0 and re.match(rb"<\?xml\s", data):
            pi[0] = False  # the XML declaration, which holds no "<"
        if (after == ord("!")).any() or pi.any():
            # comments, CDATA or processing instructions (a PI may come first: no declaration)
            offsets = np.array([m.start() for m in _MARKUP.finditer(data)
                                if m.lastindex is not None], np.int64)
        else:
            offsets = lt[(after != ord("/")) & (after != ord("?"))]
        del lt, after, pi
        lines = np.empty(len(offsets), np.int64)
        columns = np.empty(len(offsets), np.int64)
        line, last_break = 1, -1  # at the chunk's start: its line, the line break before
        for begin in range(0, len(a), _TAG_CHUNK):
            end = min(begin + _TAG_CHUNK, len(a))
            chunk = a[begin:end]
            breaks = np.flatnonzero(chunk == ord("\n")) + begin
            lo, hi = np.searchsorted(offsets, (begin, end))
            if hi > lo:
                at = offsets[lo:hi]
                before = np.searchsorted(breaks, at)
                starts = (np.where(before > 0, breaks[np.maximum(before - 1, 0)], last_break)
                          if len(breaks) else np.full(len(at), last_break)) + 1
                # the tag's end: the first ">" after it in the chunk, unless that ">" may be
                # in an attribute value (an odd number of '"' before it, or a "'"), or is not
                # in the chunk: then the tag is read to its end
                gt = np.flatnonzero(chunk == ord(">")) + begin
                k = np.searchsorted(gt, at)
                found = k < len(gt)
                ends = np.where(found, gt[np.minimum(k, len(gt) - 1)], end) if len(gt) \
                    else np.full(len(at), end)
                double = np.flatnonzero(chunk == ord('"')) + begin
                single = np.flatnonzero(chunk == ord("'")) + begin
                slow = ~found \
                    | ((np.searchsorted(double, ends) - np.searchsorted(double, at)) % 2 == 1) \
                    | (np.searchsorted(single, ends) != np.searchsorted(single, at))
                inside = np.searchsorted(breaks, ends) - before
                for i in np.flatnonzero(slow):
                    rest = _TAG_REST.match(data, int(at[i]) + 1)
                    stop = rest.end() - 1 if rest is not None else int(at[i])
                    inside[i] = data.count(b"\n", int(at[i]), stop)
                lines[lo:hi] = line + before + inside
                columns[lo:hi] = np.where(inside == 0, at - starts + 1, 0)
            line += len(breaks)
            if len(breaks):
                last_break = breaks[-1]
        self._tag_table = (offsets, lines, columns)
        return self._tag_table

    def _of_tag(self, tag: str) -> list[tuple[int, int, int]]:
        """For each start tag named ``tag``, in order: the line where it ends, the column
        (in bytes) where it begins, and -1 - its offset when the column is to be counted in
        characters instead (the file is not ASCII), else 0. A start tag over several lines
        has column 0 (none)."""
        a = self.bytes
        offsets, lines, columns = self._tags()
        name = tag.encode("utf-8", "surrogateescape")
        keep = np.flatnonzero(offsets + len(name) + 1 < len(a))
        for i, byte in enumerate(name):
            keep = keep[a[offsets[keep] + 1 + i] == byte]
        keep = keep[np.isin(a[offsets[keep] + 1 + len(name)], _NAME_ENDS)]
        at, lines, columns = offsets[keep], lines[keep], columns[keep]
        counted = np.zeros(len(at), np.int64)
        if not self.ascii:
            counted = np.where(columns > 0, -1 - at, 0)
        return list(zip(lines.tolist(), columns.tolist(), counted.tolist()))

    def _characters(self, counted: int, line: int) -> int:
        """The column in characters of the start tag at offset ``-1 - counted`` on ``line``:
        counted on from the last one counted when it is on the same line, else from the
        line's start."""
        data, at = self.data, -1 - counted
        since, on_line, column = self.cursor
        if on_line != line or since > at:
            since, column = data.rfind(b"\n", 0, at) + 1, 1
        text = data[since:at]
        column += len(text) if text.isascii() else len(text.decode("utf-8", "replace"))
        self.cursor = (at, line, column)
        return column


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
