"""Operations, one folder per OpenVINO specification category (``movement/``, ``arithmetic/``
...), one file per op type or per family of ops that differ only in their function. The
registry (``irexec.ops.registry``) finds and imports them on first use; ``spec.py`` says how an
op is described."""
