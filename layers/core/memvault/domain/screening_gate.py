"""Where a screening rule can start: one scan for every rule, instead of one per rule.

Each rule form is a large alternation ("ignore|disregard|forget|..." times objects
times nouns) and Python's regex engine tries it at every position of the text, so
forty forms over a note cost forty full scans. Almost every form can only start with
one of a few literal prefixes (its first words), though. :func:`literal_prefixes`
derives that set from the compiled pattern itself (so it can never drift from the
rule), :class:`Gate` joins every form's prefixes into one scan that finds candidate
positions, and each form is then tried only where one of its prefixes stands. A form
whose start is not literal (a line anchor followed by optional markup, a character
class) is scanned in full as before.

The result is exactly that of scanning every form everywhere: a match can only begin
where one of its prefixes does. ``tests/unit/test_screening_rules.py`` checks the two
ways agree on every corpus. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any, Final, cast

from memvault.domain import screening_built

try:  # the parser behind re.compile; private, so a missing one only costs speed
    from re import _constants as _c  # type: ignore[attr-defined]
    from re import _parser as _sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - a Python without them scans every form in full
    _c = None
    _sre_parse = None

__all__ = ["Gate", "derive_gate", "derive_literal_prefixes", "gate_key", "literal_prefixes"]

_MAX_PREFIX: Final = 10  # longer prefixes gate no better and make the scan bigger
_MAX_PREFIXES: Final = 20_000
_MAX_GAPS: Final = 1  # a prefix holds at most its first word and the start of the next
# A run of separators between two words, as the rules write it: in a prefix it is a
# single space, and the candidate scan matches any run of them there.
_GAP: Final = " "
_GAP_RX: Final = r"[\s*_~>\-]++"


class _Ungated(Exception):
    """The pattern can start with something that is not a literal."""


def literal_prefixes(pattern: str, flags: int = 0) -> frozenset[str] | None:
    """:func:`derive_literal_prefixes`, as stored by the engine's build when it holds
    ``pattern`` (``memvault.domain.screening_built``): parsing the forms for them cost
    a third of a second in every process that screened."""
    stored = screening_built.literal_prefixes(pattern, flags)
    if screening_built.is_missing(stored):
        return derive_literal_prefixes(pattern, flags)
    return None if stored is None else frozenset(cast("tuple[str, ...]", stored))


def derive_literal_prefixes(pattern: str, flags: int = 0) -> frozenset[str] | None:
    """Literal strings one of which every match of ``pattern`` starts with, or None.

    Each prefix is at least one character long; a space in it stands for a run of
    word separators (a repeated class of whitespace). Zero-width assertions at the
    start are skipped (they consume nothing); anything else that is not a literal ends
    a prefix, and one at the very start makes the pattern ungated (None).
    Case-insensitive patterns are never gated.
    """
    if _sre_parse is None or flags & re.IGNORECASE:
        return None
    try:
        parsed = _sre_parse.parse(pattern, flags)
        found = _prefixes(list(parsed), "")
    except (_Ungated, RecursionError):
        return None
    except Exception:  # pragma: no cover - an unexpected parse tree: scan in full
        return None
    if not found or "" in found:
        return None
    return frozenset(p.rstrip(_GAP) for p in found)


def _is_gap(op: Any, av: Any) -> bool:
    """A repeat (at least once) of a class that holds whitespace: a word separator."""
    assert _c is not None
    if op not in (_c.MAX_REPEAT, _c.POSSESSIVE_REPEAT) or av[0] < 1:
        return False
    sub = list(av[2])
    if len(sub) != 1 or sub[0][0] is not _c.IN:
        return False
    return any(kind is _c.CATEGORY and value is _c.CATEGORY_SPACE for kind, value in sub[0][1])


def _prefixes(items: list[tuple[Any, Any]], prefix: str) -> set[str]:
    """Prefixes of the matches of ``items``, each starting with ``prefix``."""
    assert _c is not None
    for index, (op, av) in enumerate(items):
        rest = items[index + 1 :]
        if len(prefix) >= _MAX_PREFIX:
            return {prefix}
        if op is _c.LITERAL:
            ch = chr(av)
            if ch.isspace():  # a literal space is a separator too
                if not prefix:
                    raise _Ungated
                if prefix.count(_GAP) >= _MAX_GAPS:
                    return {prefix}
                if not prefix.endswith(_GAP):
                    prefix += _GAP
                continue
            prefix += ch
            continue
        if _is_gap(op, av):
            if not prefix:
                raise _Ungated
            if prefix.count(_GAP) >= _MAX_GAPS:
                return {prefix}
            if not prefix.endswith(_GAP):
                prefix += _GAP
            continue
        if op is _c.IN and 1 < len(av) <= 16 and all(kind is _c.LITERAL for kind, _ in av):
            # a small set of characters, as the parser writes "0|1|...|9" or "[ae]"
            out_in: set[str] = set()
            for _kind, value in av:
                out_in |= _prefixes([(_c.LITERAL, value), *rest], prefix)
            return out_in
        if op in (_c.ASSERT, _c.ASSERT_NOT, _c.AT):
            if prefix:
                return {prefix}
            continue  # zero-width at the start: the match still starts with what follows
        if op is _c.SUBPATTERN:
            return _prefixes([*av[-1], *rest], prefix)
        if op is _c.ATOMIC_GROUP:
            return _prefixes([*av, *rest], prefix)
        if op is _c.BRANCH:
            out: set[str] = set()
            for alternative in av[1]:
                out |= _prefixes([*alternative, *rest], prefix)
                if len(out) > _MAX_PREFIXES:
                    raise _Ungated
            return out
        if op in (_c.MAX_REPEAT, _c.MIN_REPEAT, _c.POSSESSIVE_REPEAT):
            low, _high, sub = av
            if low >= 1:
                # the first pass, then (for a single pass) what follows
                return _prefixes([*sub, *rest], prefix) if _high == 1 else _prefixes([*sub], prefix)
            return _prefixes([*sub, *rest], prefix) | _prefixes(rest, prefix)
        # a character class, any character, a group reference...: not a literal
        if prefix:
            return {prefix}
        raise _Ungated
    return {prefix}


# Scripts written without spaces between words: a rule in them may start anywhere in
# a run of letters, so it cannot be gated at word starts.
_UNSPACED_RE: Final = re.compile(
    r"[\u2e80-\u2fff\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
    r"\uf900-\ufaff\u0e00-\u0eff]"
)
_GAP_RUN_RE: Final = re.compile(_GAP_RX)


def scan_key(found: str) -> str:
    """What the scan found (or a prefix), each run of separators one gap: the key of
    the forms it stands for."""
    return _GAP_RUN_RE.sub(_GAP, found)


def _trie_regex(prefixes: Sequence[str]) -> str:
    """One alternation for many literal prefixes, factored by their first characters."""
    trie: dict[str, Any] = {}
    for p in prefixes:
        node = trie
        for ch in p:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        ends = "" in node
        branches = []
        for ch in sorted(k for k in node if k):
            head = _GAP_RX if ch == _GAP else re.escape(ch)
            branches.append(head + emit(node[ch]))
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if ends else body

    return emit(trie)


class Gate:
    """Candidate positions for many forms at once.

    ``Gate(prefix_sets)`` takes one prefix set per form (None: that form is ungated).
    A form is gated when each of its prefixes starts with a letter (or digit) of a script that
    puts spaces between words: its matches can then only start at a word start where
    one of its prefixes stands. :meth:`candidates` yields ``(position, form indexes)``
    for such word starts, in order, from one scan; the other forms are listed in
    :attr:`ungated` (each with its literal prefixes, when it has some, in
    :attr:`literals`, so a text that holds none of them can skip it).
    """

    __slots__ = ("_forms_for", "_rx", "literals", "ungated")

    def __init__(self, prefix_sets: Sequence[frozenset[str] | None]) -> None:
        # The engine's gate, as its build stored it (memvault.domain.screening_built):
        # deriving it took a tenth of a second in every process that screened.
        stored = screening_built.gate(gate_key(prefix_sets))
        state = (
            derive_gate(prefix_sets)
            if screening_built.is_missing(stored)
            else cast("GateState", stored)
        )
        ungated, literals, forms_for, pattern = state
        self.ungated: tuple[int, ...] = ungated
        self.literals: dict[int, tuple[str, ...]] = literals
        self._forms_for: dict[str, tuple[int, ...]] = forms_for
        self._rx = screening_built.compiled(pattern) if pattern is not None else None

    def candidates(
        self, text: str, start: int = 0, end: int | None = None
    ) -> Iterator[tuple[int, tuple[int, ...]]]:
        """Candidates starting in ``[start, end]`` (the scan may read past ``end``)."""
        rx = self._rx
        if rx is None:
            return
        forms_for = self._forms_for
        stop = len(text) if end is None else end
        # Not finditer: a match may hold the next word start ("been relea" holds
        # "released"), where another form's prefix can stand, so each search starts
        # right after the last candidate, not after its match.
        search = rx.search
        m = search(text, start)
        while m is not None:
            at = m.start()
            if at > stop:
                break
            key = m.group()
            forms = forms_for.get(key)
            if forms is None:
                forms = forms_for[scan_key(key)]
            yield at, forms
            # a match of one word holds no other word start
            m = search(text, m.end() if key.isalnum() else at + 1)


GateState = tuple[
    tuple[int, ...], dict[int, tuple[str, ...]], dict[str, tuple[int, ...]], str | None
]


def gate_key(prefix_sets: Sequence[frozenset[str] | None]) -> str:
    """The text a gate is made from, for the engine's build to store it by."""
    return repr(tuple(None if p is None else tuple(sorted(p)) for p in prefix_sets))


def derive_gate(prefix_sets: Sequence[frozenset[str] | None]) -> GateState:
    """A :class:`Gate`'s state: its ungated forms, their literals, the forms each prefix
    found by the scan stands for, and the scan's pattern."""
    ungated: list[int] = []
    literals: dict[int, tuple[str, ...]] = {}
    prefix_forms: dict[str, set[int]] = {}
    for i, prefixes in enumerate(prefix_sets):
        if not prefixes or any(
            not p[0].isalnum() or _UNSPACED_RE.match(p) is not None for p in prefixes
        ):
            ungated.append(i)
            if prefixes and len(prefixes) <= 64:
                # "<|", "[inst": a text without any of them cannot match
                literals[i] = tuple(p.split(_GAP, 1)[0] for p in sorted(prefixes))
            continue
        for p in prefixes:
            prefix_forms.setdefault(p, set()).add(i)
    # Each prefix is keyed, and scanned for, with each run of separators as one gap: a
    # literal "-" in "built-in c" matches any run of them, as a gap does. Scanned as
    # written, "built-in-c" was found for the prefix "built-in c" under no key (a
    # KeyError: a note holding "built-in-class" crashed the screen), and where "built in"
    # was a prefix too, the scan's first branch could end at "built-in" and skip the
    # longer prefix's form. Prefixes that key alike share their forms (a form tried where
    # it cannot match costs only its try).
    keyed: dict[str, set[int]] = {}
    for p, forms in prefix_forms.items():
        keyed.setdefault(scan_key(p), set()).update(forms)
    # The scan returns the longest prefix at a position; every shorter prefix of it
    # stands there too, so its forms are tried as well.
    forms_for = {
        k: tuple(sorted({i for n in range(1, len(k) + 1) for i in keyed.get(k[:n], ())}))
        for k in sorted(keyed)
    }
    pattern = r"(?<![^\W_])" + _trie_regex(sorted(keyed)) if keyed else None
    return tuple(ungated), literals, forms_for, pattern
