"""The kinds of failure: IRError (the model or its inputs; the user can fix it), UsageError (how
irexec was called: an option or an environment variable) and InternalError (irexec's bug)."""

from __future__ import annotations

from irexec.diagnostics.diagnostic import Diagnostic, Location


class IRError(RuntimeError):
    """A problem with a model or its inputs. Carries one or more Diagnostics. A RuntimeError,
    as OpenVINO's errors are, so ``except RuntimeError`` written for OpenVINO catches it."""

    def __init__(self, diagnostics: list[Diagnostic] | Diagnostic):
        if isinstance(diagnostics, Diagnostic):
            diagnostics = [diagnostics]
        self.diagnostics = list(diagnostics)
        super().__init__(str(self.diagnostics[0]) if self.diagnostics else "invalid model")

    @classmethod
    def make(cls, code: str, message: str, location: Location | None = None) -> IRError:
        return cls(Diagnostic(code, message, location or Location()))

    @property
    def code(self) -> str:
        return self.diagnostics[0].code

    def __str__(self) -> str:
        first = str(self.diagnostics[0])
        more = len(self.diagnostics) - 1
        return first if more == 0 else f"{first} (and {more} more problem{'s' * (more > 1)})"


def raise_if_errors(diagnostics) -> None:
    """Raise an IRError carrying the errors among ``diagnostics`` (warnings are left out), if
    there is one."""
    errors = [d for d in diagnostics if d.is_error]
    if errors:
        raise IRError(errors)


class UsageError(Exception):
    """A command-line option or an environment variable holds a value irexec cannot use (exit
    code 2 on the command line). The message names the option or the variable."""


class InternalError(Exception):
    """Something irexec should never do happened. Please report it."""


class OpError(ValueError):
    """Raised by a kernel or a shape rule when values break the op's rules. The caller turns it
    into an IRError that names the layer, with ``code`` -- the same code whether the values were
    known when the model was read (a Const) or only when it ran (a Parameter). An OpError with
    no code (a custom op's) is IR308 while checking a model and IR605 while running one."""

    def __init__(self, message: str, code: str | None = None):
        super().__init__(message)
        self.code = code
