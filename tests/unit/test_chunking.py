"""Heading-aware chunking: bounded chunks that cover the body, offsets into the markdown."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memvault.domain.chunking import Chunk, chunk_body, chunk_note, count_tokens

WORDS = st.sampled_from(
    ["alpha", "beta", "Postgres", "we", "picked", "3.5", "---", "!!!", "é", "x" * 40, "é" * 30]
)
LINE = st.one_of(
    st.lists(WORDS, min_size=0, max_size=60).map(" ".join),
    st.builds(
        lambda level, words: "#" * level + " " + " ".join(words),
        st.integers(1, 6),
        st.lists(WORDS, min_size=1, max_size=4),
    ),
    st.just("```"),
    st.just(""),
    st.text(max_size=80),
)
BODY = st.lists(LINE, max_size=40).map("\n".join)


def covered(chunks: list[Chunk], size: int, base: int = 0) -> list[bool]:
    seen = [False] * size
    for chunk in chunks:
        for i in range(chunk.offset - base, chunk.offset - base + chunk.length):
            seen[i] = True
    return seen


@given(BODY, st.integers(5, 120), st.data())
def test_chunks_point_into_the_body_are_bounded_and_cover_it(
    body: str, max_tokens: int, data: st.DataObject
) -> None:
    overlap = data.draw(st.integers(0, max_tokens - 1))
    chunks = chunk_body(body, title="T", path="a/b.md", max_tokens=max_tokens, overlap=overlap)
    assert chunks and [c.index for c in chunks] == list(range(len(chunks)))
    for chunk in chunks:
        assert 0 <= chunk.offset <= chunk.offset + chunk.length <= len(body)
        assert body[chunk.offset : chunk.offset + chunk.length] == chunk.text
        assert chunk.tokens == count_tokens(chunk.text) <= max_tokens
        assert chunk.embed_text.startswith("T\na/b.md")
        assert chunk.embed_text.endswith(chunk.text)
    # Offsets only move forward, and every non-blank character is in some chunk.
    assert [c.offset for c in chunks] == sorted(c.offset for c in chunks)
    seen = covered(chunks, len(body))
    assert all(seen[i] for i, ch in enumerate(body) if not ch.isspace())


def test_headings_start_sections_and_are_recorded() -> None:
    body = "intro line\n# Databases\nwe picked Postgres\n## Why\nit is boring\n"
    chunks = chunk_body(body, title="Decisions", path="work/decisions.md")
    assert [(c.heading, c.text) for c in chunks] == [
        ("", "intro line"),
        ("Databases", "# Databases\nwe picked Postgres"),
        ("Why", "## Why\nit is boring"),
    ]
    assert chunks[1].embed_text == (
        "Decisions\nwork/decisions.md\nDatabases\n\n# Databases\nwe picked Postgres"
    )


def test_a_hash_line_inside_a_code_fence_is_not_a_heading() -> None:
    body = "# Real\n```\n# not a heading\n```\nafter\n"
    chunks = chunk_body(body, title="", path="n.md")
    assert [c.heading for c in chunks] == ["Real"]


def test_long_sections_split_with_overlap() -> None:
    lines = [f"line {i} says something about topic {i}." for i in range(60)]
    body = "# Log\n" + "\n".join(lines)
    chunks = chunk_body(body, title="", path="log.md", max_tokens=50, overlap=10)
    assert len(chunks) > 5
    assert all(c.heading == "Log" and c.tokens <= 50 for c in chunks)
    for before, after in itertools.pairwise(chunks):
        # The next chunk repeats the end of the one before (a whole line of 9 tokens).
        assert after.offset < before.offset + before.length
        shared = before.text[after.offset - before.offset :]
        assert 0 < count_tokens(shared) <= 10


def test_one_huge_line_is_cut_at_sentences_then_words() -> None:
    body = " ".join(f"Sentence number {i} ends here." for i in range(100)) + " " + "word " * 300
    chunks = chunk_body(body, title="", path="n.md", max_tokens=30, overlap=0)
    assert all(c.tokens <= 30 for c in chunks)
    assert chunks[0].text.startswith("Sentence number 0 ends here.")
    assert chunks[0].text.endswith(".")


def test_note_offsets_skip_the_frontmatter() -> None:
    markdown = "---\ntitle: Plans\ntags: [a]\n---\n# Plans\nship it\n"
    chunks = chunk_note(markdown, title="Plans", path="plans.md")
    assert [c.text for c in chunks] == ["# Plans\nship it"]
    chunk = chunks[0]
    assert markdown[chunk.offset : chunk.offset + chunk.length] == chunk.text
    assert "title:" not in chunk.embed_text


@pytest.mark.parametrize("markdown", ["", "   \n\n", "---\ntitle: Only\n---\n"])
def test_an_empty_body_gets_one_title_chunk(markdown: str) -> None:
    (chunk,) = chunk_note(markdown, title="Only a title", path="t.md")
    assert chunk.length == 0 and chunk.text == ""
    assert chunk.embed_text == "Only a title\nt.md"
    assert 0 <= chunk.offset <= len(markdown)


def test_bad_bounds_are_refused() -> None:
    with pytest.raises(ValueError):
        chunk_body("x", title="", path="n.md", max_tokens=10, overlap=10)


def test_ascii_text_counts_the_tokens_any_text_does() -> None:
    # Tokens are words and marks (\w+ or one other non-space character); ASCII text takes a
    # faster pattern that must count the same, the ASCII separators \x1c-\x1f included.
    import re

    words_and_marks = re.compile(r"\w+|[^\w\s]")
    chars = [chr(i) for i in range(128)]
    for a, b in itertools.product(chars, chars):
        text = f"{a}x{b}{a}"
        assert count_tokens(text) == len(words_and_marks.findall(text)), repr(text)


def test_ascii_text_of_any_mix_counts_the_tokens_any_text_does() -> None:
    # Runs of word characters next to marks, spaces and control characters, at either end.
    import random
    import re

    words_and_marks = re.compile(r"\w+|[^\w\s]")
    rnd = random.Random(7)
    alphabet = [chr(i) for i in range(128)] + ["ab", "_9", "  ", "\n\n"]
    for _ in range(3000):
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randrange(0, 30)))
        assert count_tokens(text) == len(words_and_marks.findall(text)), repr(text)


def test_an_ascii_bodys_lines_counted_in_place_are_counted_as_each_line_alone() -> None:
    # chunk_spans counts an ASCII body's lines on the body's character classes, in place
    # (ADR 0079): every unit, a long line's sentences and words included, must be the one
    # that counting each line by itself gives, wherever a section starts, whatever ASCII
    # the lines hold (each of splitlines' ASCII line breaks, control characters, marks).
    import random

    from memvault.domain.chunking import _CLASSES, _units

    rnd = random.Random(11)
    alphabet = [chr(i) for i in range(128)] + ["word", "_9", "  ", ". ", "\n", "\r\n"] * 4
    for _ in range(400):
        body = "".join(rnd.choice(alphabet) for _ in range(rnd.randrange(1, 400)))
        classes = body.encode("ascii").translate(_CLASSES)
        starts = [0, *(n + 1 for n, c in enumerate(body) if c == "\n")]
        start = rnd.choice(starts)
        for limit in (3, 16, 128):
            in_place = _units(body, start, len(body), limit, classes)
            assert in_place == _units(body, start, len(body), limit), repr(body)


def test_chunk_spans_are_the_chunks_of_the_body() -> None:
    from memvault.domain.chunking import chunk_spans

    body = "# One\n\nfirst line\nsecond line\n\n## Two\n\n" + "word " * 300
    chunks = chunk_body(body, title="T", path="p.md", max_tokens=40, overlap=8)
    spans = chunk_spans(body, title="T", path="p.md", max_tokens=40, overlap=8)
    assert [(c.heading, c.offset, c.offset + c.length, c.tokens) for c in chunks] == [
        (heading, start, end, tokens) for heading, _, start, end, tokens in spans
    ]
    assert all(
        c.embed_text == f"{context}\n\n{body[start:end]}"
        for c, (_, context, start, end, _) in zip(chunks, spans, strict=True)
    )
    assert chunk_spans("", title="T", path="p.md") == [("", "T\np.md", 0, 0, 0)]
