"""``python -m irexec.batch.worker FD``: one worker process of the local pool (irexec/batch/pool.py).

A module of its own, imported by nothing, so that running it as ``__main__`` never finds it
already imported by the package.
"""

from irexec.batch.pool import main

if __name__ == "__main__":
    main()
