"""What the embedding workers' fork server does about the server's main module.

multiprocessing prepares every child it forks from the fork server by importing its
parent's main script (as ``__mp_main__``) unless the fork server's ``__main__`` already
carries that script's path. The fork server's own ``"__main__"`` preload means to import
it there, but in Python 3.11 it looks for a key the preparation data never has, so every
worker imported the server's main and all it imports (0.3-0.6 s of CPU a worker under
``memvault serve`` or a bench). Only the fork server imports this module
(``services.vector_workers._context`` names it and leaves ``MEMVAULT_WORKERS_MAIN``):

- ``named:<path>``, when the workers need nothing from the main script (the model's
  factory and the work are module functions, pickled by name): the fork server's
  ``__main__`` is only given the script's path, so no process imports the script again;
- ``import:<path>``, when the factory lives in the main script: the fork server imports it
  once for every worker, as multiprocessing's preload means to.

When this fails, each worker imports the main script itself, as before (ADR 0067).
"""

from __future__ import annotations

import contextlib
import os
import sys
from multiprocessing import process, spawn

MAIN_ENV = "MEMVAULT_WORKERS_MAIN"

_mode, _, _path = os.environ.get(MAIN_ENV, "").partition(":")
if _path and _mode == "named":
    with contextlib.suppress(Exception):
        sys.modules["__main__"].__file__ = _path
elif _path and _mode == "import":
    # As the fork server does for its own preload: no process may start while it runs.
    process.current_process()._inheriting = True  # type: ignore[attr-defined]
    try:
        with contextlib.suppress(Exception):
            spawn.import_main_path(_path)
    finally:
        del process.current_process()._inheriting  # type: ignore[attr-defined]
