"""``<rt_info>``: the run-time information a model, a layer or a port carries, kept as written
(tags, attributes, nested blocks) so that nothing is lost on the way back out; and OpenVINO's
``get_rt_info``/``has_rt_info``/``set_rt_info`` over it, by a key or a path of keys.

A model's entries are tags (``<runtime_options><KV_CACHE_PRECISION value="f16"/>``); a layer's
and a port's are ``<attribute name="..." version="0" value="..."/>``. Both are looked up by the
same key (the tag, or an attribute's name). Values are text, as the file holds them
(``RtValue.astype(int)`` converts).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

@dataclass
class RtInfo:
    """One element of an ``<rt_info>`` block, kept as written so that nothing is lost."""

    tag: str
    attrs: dict[str, str] = field(default_factory=dict)
    children: list[RtInfo] = field(default_factory=list)

    def to_dict(self) -> Any:
        """A plain view: ``value`` attributes become strings, nested blocks dicts."""
        if not self.children:
            return self.attrs.get("value", dict(self.attrs))
        return rt_info_dict(self.children)


def rt_info_dict(entries: list[RtInfo]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for e in entries:
        key = e.attrs.get("name", e.tag) if e.tag == "attribute" else e.tag
        out[key] = e.to_dict()
    return out


class RtValue:
    """One rt_info value, as OpenVINO's ``OVAny``: ``.value`` (the text, or a dict for a block),
    ``astype(int)``, ``aslist()``, ``get()``; equal to its text."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def get(self):
        return self.value

    def astype(self, kind):
        if kind is bool and isinstance(self.value, str):
            return self.value.strip().lower() in ("true", "1", "yes")
        if kind is list:
            return self.aslist()
        return kind(self.value)

    def aslist(self, kind=str) -> list:
        text = self.value if isinstance(self.value, str) else str(self.value)
        return [kind(v) for v in text.replace(",", " ").split()]

    def __eq__(self, other) -> bool:
        return self.value == (other.value if isinstance(other, RtValue) else other)

    def __hash__(self) -> int:
        return hash(str(self.value))

    def __str__(self) -> str:
        return str(self.value)

    def __repr__(self) -> str:
        return f"<RtValue: {self.value!r}>"


def _key(entry: RtInfo) -> str:
    return entry.attrs.get("name", entry.tag) if entry.tag == "attribute" else entry.tag


def _path(path) -> list[str]:
    if path is None:
        return []
    if isinstance(path, str):
        return [path]
    return [str(p) for p in path]


def find(entries: list[RtInfo], path) -> RtInfo | None:
    """The entry at ``path`` (a key or a list of keys into nested blocks), or None."""
    found = None
    for key in _path(path):
        found = next((e for e in entries if _key(e) == key), None)
        if found is None:
            return None
        entries = found.children
    return found


def get(entries: list[RtInfo], path=None):
    """OpenVINO's ``get_rt_info``: everything as a dict (no path), or one value as an
    RtValue; RuntimeError naming the key if there is none."""
    if not _path(path):
        return rt_info_dict(entries)
    found = find(entries, path)
    if found is None:
        raise RuntimeError(f"there is no rt_info at {_path(path)}")
    return RtValue(found.to_dict())


def has(entries: list[RtInfo], path) -> bool:
    return find(entries, path) is not None


def _text(value) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, tuple)):
        return " ".join(_text(v) for v in value)
    return str(value.value if isinstance(value, RtValue) else value)


def put(entries: list[RtInfo], value, path, attribute: bool = False) -> None:
    """OpenVINO's ``set_rt_info(value, path)``: the value (as text) at ``path``, its blocks
    made as needed. ``attribute``: new entries are written as a layer's or a port's are."""
    keys = _path(path)
    if not keys:
        raise ValueError("set_rt_info needs a key or a path of keys")
    for depth, key in enumerate(keys):
        found = next((e for e in entries if _key(e) == key), None)
        last = depth == len(keys) - 1
        if found is None:
            found = RtInfo("attribute", {"name": key, "version": "0"}) if attribute \
                else RtInfo(key)
            entries.append(found)
        if last:
            found.children = []
            found.attrs["value"] = _text(value)
        entries = found.children
