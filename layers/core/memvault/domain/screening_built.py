"""The write screen's engine, derived ahead of time: its compiled patterns and prefixes.

Building the screen's engine (:func:`memvault.domain.screening._engine`) cost about a
second of CPU in every process that screens a write: every xdist worker of the suite,
every ``memvault mcp`` or CLI process a test starts, and every Lambda cold start (ADR
0077). Nearly all of it is deriving things that depend only on the rules' own text:
Python's regex parser and compiler turning ~230 patterns (a few of them 10-100 KB
alternations) into the engine's code, and the gate parsing the forms again for their
literal prefixes (:func:`memvault.domain.screening_gate.literal_prefixes`).

``scripts/build_screen_engine.py`` derives both once per interpreter and writes them into
one generated module, ``screening_built_tables``: a table per distinct derivation, with the
interpreters (:func:`stamp`) it is valid for, keyed by a hash of each pattern and its
flags. At run time :func:`compiled` hands the regex
engine the code it would have compiled (``_sre.compile``, exactly as
``re._compiler.compile`` calls it), and :func:`literal_prefixes` returns the stored
prefixes. Anything not found (a rule edited since, another interpreter, an engine whose
code format changed) is derived as before: the table can only make a build cheaper,
never change a pattern, so no verdict depends on it. ``tests/unit/test_screening_built.py``
checks that the stored table is what the build derives now and that every pattern made
from it equals ``re.compile``'s.

Pure: the tables are data in the generated module, the one for this interpreter decoded
once.
"""

from __future__ import annotations

import array
import base64
import hashlib
import importlib
import marshal
import re
import sys
import threading
import zlib
from typing import Any, Final

_sre: Any
try:  # the regex engine behind re; private, so a missing one only costs speed
    _sre = importlib.import_module("_sre")
except ImportError:  # pragma: no cover - another Python: everything is compiled
    _sre = None

__all__ = [
    "compiled",
    "gate",
    "is_missing",
    "literal_prefixes",
    "pattern_key",
    "stamp",
]

#: the layout of the packed table (bumped when it changes)
FORMAT: Final = 1


def stamp() -> tuple[object, ...]:
    """What stored regex code is valid for: the table's layout, the interpreter and its
    regex engine's version and code unit, and the byte order of the stored code."""
    return (
        FORMAT,
        sys.implementation.name,
        tuple(sys.version_info[:2]),
        getattr(_sre, "MAGIC", None),
        getattr(_sre, "CODESIZE", None),
        array.array("I").itemsize,
        sys.byteorder,
    )


#: the generated module holding the tables: ``TABLES``, pairs of (the stamps a table is
#: valid for, the packed table). Interpreters whose regex compilers emit the same code
#: (CPython 3.11 and 3.12 do for these rules) share one table.
TABLES_MODULE: Final = "memvault.domain.screening_built_tables"


def pattern_key(pattern: str, flags: int) -> bytes:
    data = f"{int(flags)}\0{pattern}".encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=16).digest()


class _Table:
    __slots__ = ("gates", "patterns", "prefixes")

    def __init__(
        self, patterns: dict[bytes, Any], prefixes: dict[bytes, Any], gates: dict[bytes, Any]
    ) -> None:
        self.patterns = patterns
        self.prefixes = prefixes
        self.gates = gates


_EMPTY: Final = _Table({}, {}, {})
_table_lock = threading.Lock()
_loaded: list[_Table] = []
# Set by the build script: nothing is looked up, every request is recorded.
recording: list[tuple[str, str, int]] | None = None


def unpack(packed: str) -> tuple[dict[bytes, Any], dict[bytes, Any], dict[bytes, Any]]:
    data = marshal.loads(zlib.decompress(base64.b64decode(packed)))
    return data["patterns"], data["prefixes"], data["gates"]


def _table() -> _Table:
    if _loaded:
        return _loaded[0]
    with _table_lock:
        if not _loaded:
            table = _EMPTY
            try:
                module = importlib.import_module(TABLES_MODULE)
                here = stamp()
                for stamps, packed in module.TABLES:
                    if here in (tuple(s) for s in stamps):
                        table = _Table(*unpack("".join(packed)))
                        break
            except Exception:  # no table for this interpreter, or an unreadable one
                table = _EMPTY
            _loaded.append(table)
    return _loaded[0]


def compiled(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, from the stored code when the table holds it."""
    if recording is not None:
        recording.append(("pattern", pattern, flags))
        return re.compile(pattern, flags)
    entry = _table().patterns.get(pattern_key(pattern, flags)) if _sre is not None else None
    if entry is not None:
        final_flags, code, groups, groupindex, indexgroup = entry
        try:
            units = array.array("I")
            units.frombytes(code)
            made: re.Pattern[str] = _sre.compile(
                pattern, final_flags, units.tolist(), groups, groupindex, indexgroup
            )
            return made
        except Exception:  # pragma: no cover - code the engine refuses: compile instead
            pass
    return re.compile(pattern, flags)


_MISSING: Final = object()


def literal_prefixes(pattern: str, flags: int) -> object:
    """The stored literal prefixes of ``pattern`` (a tuple, or None for an ungated
    pattern), or ``_MISSING`` when the table does not hold them."""
    if recording is not None:
        recording.append(("prefixes", pattern, flags))
        return _MISSING
    return _table().prefixes.get(pattern_key(pattern, flags), _MISSING)


def gate(text: str) -> object:
    """The stored state of the gate made from ``text`` (``screening_gate.gate_key``), or
    ``_MISSING``."""
    if recording is not None:
        recording.append(("gate", text, 0))
        return _MISSING
    return _table().gates.get(pattern_key(text, 0), _MISSING)


def is_missing(value: object) -> bool:
    return value is _MISSING
