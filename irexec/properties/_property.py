"""A property's name that is also its setter, as OpenVINO's ``Property``."""

from __future__ import annotations


class Property(str):
    """``prop()`` is the name; ``prop(value)`` the pair ``(name, value)`` a config takes
    (``compile_model(model, "CPU", dict([hint.performance_mode(...)]))``)."""

    def __call__(self, *args):
        if not args:
            return str(self)
        if len(args) != 1:
            raise TypeError(f"property {self} takes one value, not {len(args)}")
        return str(self), args[0]
