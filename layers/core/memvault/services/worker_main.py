"""The server's main module, imported once in the embedding workers' fork server.

multiprocessing prepares every child it forks from the fork server by importing its
parent's main script (as ``__mp_main__``) unless the fork server holds it already; the
fork server's own ``"__main__"`` preload means to do that, but in Python 3.11 it looks for
a key that the preparation data never has, so every worker imported the server's main
and all it imports (0.3-0.6 s of CPU a worker under ``memvault serve`` or a bench). Only
the fork server imports this module (``services.vector_workers._context`` names it and
passes the path in ``MEMVAULT_WORKERS_MAIN``); when the import fails, each worker
imports the main module itself, as before (ADR 0067).
"""

from __future__ import annotations

import contextlib
import os
from multiprocessing import process, spawn

MAIN_ENV = "MEMVAULT_WORKERS_MAIN"

_path = os.environ.get(MAIN_ENV)
if _path:
    # As the fork server does for its own preload: no process may start while it runs.
    process.current_process()._inheriting = True  # type: ignore[attr-defined]
    try:
        with contextlib.suppress(Exception):
            spawn.import_main_path(_path)
    finally:
        del process.current_process()._inheriting  # type: ignore[attr-defined]
