"""Vault path rules: every refusal names its rule, every accepted path is canonical."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memvault.domain import paths
from memvault.domain.paths import (
    MAX_PATH_BYTES,
    folder,
    invisible_character,
    link_key,
    lookup_folder,
    lookup_path,
    name_key,
    normalize_folder,
    normalize_path,
    path_key,
    stem,
    windows_problem,
)
from memvault.errors import InvalidInput, InvalidPath

# --------------------------------------------------------------------------- accepted


@pytest.mark.parametrize(
    "raw",
    [
        "a.md",
        "Plan.md",
        "projects/alpha/Plan.md",
        "with space/inner space.md",
        "日本語/ノート.md",
        "ab:c.md",  # a colon is only a problem as a drive letter
        "notes/C:.md",  # ...in the first segment
        "CON.md",  # Windows device names and characters are legal (export reports them)
        "aux/nul.txt.md",
        'what?/"quoted" <a|b>*.md',
        "v1./x.md",
        "🚀 launch/❤ notes.md",  # emoji without joiners or selectors are plain symbols
        "x" * (MAX_PATH_BYTES - 3) + ".md",
    ],
)
def test_accepts_and_keeps_canonical_paths(raw: str) -> None:
    assert normalize_path(raw) == raw


def test_nfc_normalises() -> None:
    decomposed = "Cafe\u0301/note\u0301.md"
    assert normalize_path(decomposed) == "Caf\u00e9/not\u00e9.md"


def test_byte_limit_counts_utf8_after_nfc() -> None:
    # 200 "é" written decomposed are 603 bytes, but 403 once composed: accepted.
    decomposed = "e\u0301" * 200 + ".md"
    assert len(decomposed.encode()) > MAX_PATH_BYTES
    assert normalize_path(decomposed) == "\u00e9" * 200 + ".md"
    # Three-byte characters: 170 of them plus ".md" is 513 bytes.
    with pytest.raises(InvalidPath, match="512 bytes"):
        normalize_path("語" * 170 + ".md")
    assert normalize_path("語" * 169 + ".md")


# --------------------------------------------------------------------------- refused


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("", "is empty"),
        ("/a.md", "relative to the vault root"),
        ("//a.md", "relative to the vault root"),
        ("a\\b.md", "backslash"),
        ("a\x00b.md", "control character"),
        ("a\tb.md", "control character"),
        ("a\nb.md", "control character"),
        ("a\x7fb.md", "control character"),
        ("a\x85b.md", "control character"),
        ("a\x9fb.md", "control character"),
        ("a//b.md", "empty segment"),
        ("a/", "empty segment"),
        ("a/b.md/", "empty segment"),
        ("./a.md", "'.' segment"),
        ("a/./b.md", "'.' segment"),
        ("../a.md", "'..' segment"),
        ("a/../b.md", "'..' segment"),
        ("C:/a.md", "drive letter"),
        ("c:foo.md", "drive letter"),
        ("z:/x/a.md", "drive letter"),
        (" /a.md", "made only of whitespace"),
        ("a/\u3000/b.md", "made only of whitespace"),
        (" a.md", "begins or ends with whitespace"),
        ("a /b.md", "begins or ends with whitespace"),
        ("dir/\u00a0x.md", "begins or ends with whitespace"),
        ("a.md ", "begins or ends with whitespace"),
        ("a:b.md", "drive letter"),
        ("a.txt", "must end in '.md'"),
        ("a", "must end in '.md'"),
        ("a.markdown", "must end in '.md'"),
        ("a.MD", "lowercase '.md'"),
        ("a.Md", "lowercase '.md'"),
        (".md", "is hidden"),
        ("dir/.md", "is hidden"),
        ("..md", "is hidden"),
        (".hidden/note.md", "is hidden"),
        ("notes/.draft.md", "is hidden"),
        ("x" * (MAX_PATH_BYTES - 2) + ".md", "512 bytes"),
        ("a\ud800.md", "surrogate"),
    ],
)
def test_refusals_name_the_rule(raw: str, message: str) -> None:
    with pytest.raises(InvalidPath, match=message) as info:
        normalize_path(raw)
    assert info.value.code == "invalid_path"
    assert isinstance(info.value, InvalidInput)
    assert info.value.details["path"] == raw


def test_refusal_message_shows_a_shortened_path() -> None:
    with pytest.raises(InvalidPath) as info:
        normalize_path("a" * 1000)
    assert len(info.value.message) < 200


# --------------------------------------------------------------------------- invisible


# Characters that make two different paths look alike: each is refused in a path, a
# folder filter and a move target, and named in the refusal.
INVISIBLE = [
    ("\u200b", "invisible character", "ZERO WIDTH SPACE"),
    ("\u200c", "invisible character", "ZERO WIDTH NON-JOINER"),
    ("\u200d", "invisible character", "ZERO WIDTH JOINER"),
    ("\u2060", "invisible character", "WORD JOINER"),
    ("\ufeff", "invisible character", "ZERO WIDTH NO-BREAK SPACE"),
    ("\u00ad", "invisible character", "SOFT HYPHEN"),
    ("\u034f", "invisible character", "COMBINING GRAPHEME JOINER"),
    ("\u3164", "invisible character", "HANGUL FILLER"),
    ("\ufe0f", "invisible character", "VARIATION SELECTOR-16"),
    ("\U000e0041", "invisible character", "TAG LATIN CAPITAL LETTER A"),
    ("\u202e", "bidirectional control", "RIGHT-TO-LEFT OVERRIDE"),
    ("\u202a", "bidirectional control", "LEFT-TO-RIGHT EMBEDDING"),
    ("\u200f", "bidirectional control", "RIGHT-TO-LEFT MARK"),
    ("\u2067", "bidirectional control", "RIGHT-TO-LEFT ISOLATE"),
    ("\u061c", "bidirectional control", "ARABIC LETTER MARK"),
    ("\u2028", "line or paragraph separator", "LINE SEPARATOR"),
    ("\u2029", "line or paragraph separator", "PARAGRAPH SEPARATOR"),
]


@pytest.mark.parametrize(("char", "rule", "name"), INVISIBLE)
def test_invisible_bidi_and_separator_characters_are_refused(
    char: str, rule: str, name: str
) -> None:
    for raw in (f"a{char}b.md", f"{char}a.md", f"dir{char}/a.md", f"a.md{char}"):
        with pytest.raises(InvalidPath, match=rule) as info:
            normalize_path(raw)
        assert name in info.value.message
        assert f"U+{ord(char):04X}" in info.value.message
    with pytest.raises(InvalidPath, match=rule):
        normalize_folder(f"projects{char}")


def test_two_paths_that_look_alike_cannot_both_be_made() -> None:
    # "\u200b" and "\ufeff" show as nothing; after "\u202e" the rest shows reversed
    # ("exe\u202edm.md" reads "exemd.md"); "\u2028" breaks the line in a listing.
    for trick in ("plan\u200b.md", "\ufeffplan.md", "exe\u202edm.md", "a\u2028b.md"):
        with pytest.raises(InvalidPath):
            normalize_path(trick)
    assert normalize_path("plan.md") == "plan.md"


def test_every_format_and_separator_character_is_refused() -> None:
    """Every code point Unicode files as a format character (Cf: invisible, bidirectional
    controls) or a line or paragraph separator, whatever the Python's Unicode version."""
    for cp in range(0x110000):
        char = chr(cp)
        if unicodedata.category(char) in ("Cf", "Zl", "Zp"):
            with pytest.raises(InvalidPath):
                normalize_path(f"a{char}.md")


def test_lookups_accept_invisible_characters_so_old_notes_stay_reachable() -> None:
    """A note stored before the rule keeps its name: it can be read, moved to a clean
    name or deleted, never made anew."""
    assert lookup_path("a\u200bb.md") == "a\u200bb.md"
    assert lookup_path("Cafe\u0301\u202e.md") == "Caf\u00e9\u202e.md"
    for broken in ("../a.md", "a\x00.md", "a.txt", "/a.md", "a\ud800.md"):
        with pytest.raises(InvalidPath):
            lookup_path(broken)
    assert lookup_folder("x\u200b") == "x\u200b/"
    with pytest.raises(InvalidPath):
        lookup_folder("../x")


# --------------------------------------------------------------------------- windows


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("CON.md", "reserved"),
        ("con.md", "reserved"),
        ("notes/Nul.backup.md", "reserved"),
        ("aux/x.md", "reserved"),
        ("COM1.md", "reserved"),
        ("lpt9.md", "reserved"),
        ("COM\u00b9.md", "reserved"),
        ("CON .md", "reserved"),
        ("ab:c.md", "':'"),
        ("notes/a:b.md", "':'"),
        ("x/a<b.md", "'<'"),
        ("x/a>b.md", "'>'"),
        ('x/"q".md', "'\"'"),
        ("x/a|b.md", "'|'"),
        ("what?.md", "'?'"),
        ("star*.md", "'*'"),
        ("v1./x.md", "ends in a dot or a space"),
        ("x" * 253 + ".md", "255"),
    ],
)
def test_windows_problems_are_named(path: str, reason: str) -> None:
    assert normalize_path(path) == path  # legal in the vault
    problem = windows_problem(path)
    assert problem is not None and reason in problem


@pytest.mark.parametrize(
    "path",
    ["a.md", "CONSOLE.md", "COM10.md", "LPT.md", "icon.md", "x/aux-notes.md", "x" * 252 + ".md"],
)
def test_windows_safe_paths_have_no_problem(path: str) -> None:
    assert windows_problem(path) is None


# --------------------------------------------------------------------------- folders


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("", ""),
        ("/", ""),
        ("projects", "projects/"),
        ("projects/", "projects/"),
        ("projects/alpha", "projects/alpha/"),
        ("projects/alpha/", "projects/alpha/"),
        ("Cafe\u0301", "Caf\u00e9/"),
        ("notes.md", "notes.md/"),  # a folder may look like a file name
    ],
)
def test_normalize_folder(raw: str, expected: str) -> None:
    assert normalize_folder(raw) == expected


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("//", "relative to the vault root"),
        ("/projects", "relative to the vault root"),
        ("a//b", "empty segment"),
        ("a//", "empty segment"),
        ("..", "'..' segment"),
        ("a/./b", "'.' segment"),
        ("C:", "drive letter"),
        ("a\\b", "backslash"),
        ("a\x01", "control character"),
        (" a", "whitespace"),
        ("  ", "made only of whitespace"),
        ("x" * (MAX_PATH_BYTES + 1), "512 bytes"),
    ],
)
def test_normalize_folder_refusals(raw: str, message: str) -> None:
    with pytest.raises(InvalidPath, match=message):
        normalize_folder(raw)


def test_folder_prefix_is_a_correct_folder_test() -> None:
    prefix = normalize_folder("projects/alpha")
    assert "projects/alpha/Plan.md".startswith(prefix)
    assert "projects/alpha/deep/Plan.md".startswith(prefix)
    assert not "projects/alphabet.md".startswith(prefix)
    assert not "projects/alphabet/x.md".startswith(prefix)
    assert "anything.md".startswith(normalize_folder(""))


# --------------------------------------------------------------------------- keys


def test_path_key_detects_case_and_normalisation_clashes() -> None:
    assert path_key("Notes/Plan.md") == path_key("notes/PLAN.md")
    assert path_key("Caf\u00e9.md") == path_key("Cafe\u0301.md")
    assert path_key("Straße.md") == path_key("STRASSE.md")
    assert path_key("a/b.md") != path_key("a/c.md")


def test_stem_and_folder() -> None:
    assert stem("a/b/Plan.md") == "Plan"
    assert stem("Plan.md") == "Plan"
    assert stem("a/x.y.md") == "x.y"
    assert folder("a/b/Plan.md") == "a/b/"
    assert folder("Plan.md") == ""


def test_link_and_name_keys() -> None:
    assert link_key("Projects/Alpha/Plan.md") == "projects/alpha/plan"
    assert name_key("Projects/Alpha/Plan.md") == "plan"
    assert link_key("Plan.md") == name_key("Plan.md") == "plan"
    assert name_key("a/Cafe\u0301.md") == "caf\u00e9"
    assert link_key("a/x.md.md") == "a/x.md"


def test_fold_is_stable_under_nfc() -> None:
    # casefold can produce decomposed text; the key must be NFC either way.
    text = "\u0130"  # İ casefolds to "i" + combining dot
    assert paths.fold(text) == unicodedata.normalize("NFC", paths.fold(text))


# --------------------------------------------------------------------------- properties

_PATH_ALPHABET = st.sampled_from(
    [*"aZé語 ./\\:-_C", "\x00", "\x7f", "\x9f", "\u3000", "e\u0301", "..", ".md", ".MD", "\xa0"]
)
_PATHISH = st.lists(_PATH_ALPHABET, max_size=30).map("".join)
_MDISH = st.builds(lambda body, suffix: body + suffix, _PATHISH, st.sampled_from([".md", ""]))
_JUNK = st.one_of(st.text(max_size=60), _MDISH, st.text(min_size=500, max_size=600))

_SEGMENT = st.text(
    alphabet=st.characters(
        exclude_categories=("Cs", "Cc", "Cf", "Zs", "Zl", "Zp"), exclude_characters="/\\"
    ),
    min_size=1,
    max_size=20,
).filter(
    lambda s: (
        not s.startswith(".")
        and not (len(s) >= 2 and s[1] == ":")
        and invisible_character(s) is None
    )  # their own rule, tested above
)
_VALID_PATH = st.builds(
    lambda parts, name: "/".join([*parts, name + ".md"]),
    st.lists(_SEGMENT, max_size=4),
    _SEGMENT,
)


def _check_canonical(path: str) -> None:
    assert path == unicodedata.normalize("NFC", path)
    assert path.endswith(".md") and path.rsplit("/", 1)[-1] != ".md"
    assert len(path.encode("utf-8")) <= MAX_PATH_BYTES
    assert "\\" not in path and not path.startswith("/")
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in path)
    assert invisible_character(path) is None
    for segment in path.split("/"):
        assert segment not in ("", ".", "..") and not segment.startswith(".")
        assert segment == segment.strip()


@given(_JUNK)
def test_junk_normalises_or_raises_invalid_path(raw: str) -> None:
    try:
        path = normalize_path(raw)
    except InvalidPath:
        return
    _check_canonical(path)
    assert normalize_path(path) == path


@given(_VALID_PATH)
def test_valid_paths_are_accepted_and_idempotent(raw: str) -> None:
    if len(unicodedata.normalize("NFC", raw).encode()) > MAX_PATH_BYTES:
        return
    try:
        path = normalize_path(raw)
    except InvalidPath as exc:  # only NFC can reveal a whitespace edge, nothing else
        assert "whitespace" in exc.message
        return
    _check_canonical(path)
    assert normalize_path(path) == path
    assert path_key(path) == path_key(unicodedata.normalize("NFD", path))
    assert link_key(path).endswith(name_key(path))


@given(st.one_of(st.text(max_size=40), _PATHISH))
def test_folder_junk_normalises_or_raises_invalid_path(raw: str) -> None:
    try:
        prefix = normalize_folder(raw)
    except InvalidPath:
        return
    assert prefix == "" or prefix.endswith("/")
    assert normalize_folder(prefix) == prefix
    note = prefix + "x.md"
    if len(note.encode()) <= MAX_PATH_BYTES:
        _check_canonical(note)
        assert normalize_path(note) == note
