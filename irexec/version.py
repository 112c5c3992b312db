"""irexec's version, in a module of its own so that any layer can name it (the SARIF renderer
does) without importing the package's ``__init__``, which imports everything."""

__version__ = "0.1.0"
