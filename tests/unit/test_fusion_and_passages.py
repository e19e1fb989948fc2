"""domain.fusion (one 0-1 score from the keyword and semantic halves) and domain.passages
(the windows of a note holding a message's words)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memvault.domain.fusion import (
    ChunkMatch,
    Fusion,
    KeywordHit,
    SearchMode,
    cut,
    fuse,
    fuse_kept,
    similarity_part,
)
from memvault.domain.passages import keyword_passages, windows
from memvault.domain.ranking import SCORE_MAX

NOW = 1_780_000_000.0


def test_either_half_alone_can_carry_a_note_and_both_carry_it_further() -> None:
    fused = fuse(
        [KeywordHit("both.md", 0.5), KeywordHit("words.md", 0.5)],
        [ChunkMatch("both.md", 0, 0.5, NOW), ChunkMatch("meaning.md", 0, 0.5, NOW)],
        mode=SearchMode.HYBRID,
        now=NOW,
    )
    scores = {f.path: f.score for f in fused}
    assert fused[0].path == "both.md"
    assert scores["words.md"] == 0.5 / SCORE_MAX  # the keyword half, unhalved
    assert abs(scores["meaning.md"] - 0.5 / 0.75) < 1e-9  # cos 0.5: 0.5 / (0.5 + 0.25)
    k, s = 0.5 / SCORE_MAX, 0.5 / 0.75
    assert abs(scores["both.md"] - (1 - (1 - k) * (1 - s))) < 1e-9


def test_modes_use_their_half_only() -> None:
    keyword = [KeywordHit("a.md", 0.4)]
    chunks = [ChunkMatch("b.md", 0, 0.6, NOW)]
    assert [f.path for f in fuse(keyword, chunks, mode=SearchMode.SEMANTIC, now=NOW)] == ["b.md"]
    assert [f.path for f in fuse(keyword, chunks, mode=SearchMode.KEYWORD, now=NOW)] == ["a.md"]


def test_a_notes_chunks_are_named_best_first_and_an_old_note_is_boosted_less() -> None:
    chunks = [
        ChunkMatch("n.md", 2, 0.3, NOW),
        ChunkMatch("n.md", 5, 0.6, NOW),
        ChunkMatch("old.md", 0, 0.6, NOW - 400 * 86_400),
    ]
    fused = fuse([], chunks, mode=SearchMode.SEMANTIC, now=NOW)
    by_path = {f.path: f for f in fused}
    assert by_path["n.md"].chunks == (5, 2)
    assert by_path["old.md"].score < by_path["n.md"].score


@given(
    st.lists(st.floats(0.0, SCORE_MAX * 0.999), max_size=8),
    st.lists(st.floats(-1.0, 1.0), max_size=8),
    st.sampled_from(list(Fusion)),
)
def test_scores_stay_within_zero_and_one_ordered_best_first(
    keyword: list[float], cosines: list[float], fusion: Fusion
) -> None:
    fused = fuse(
        [KeywordHit(f"k{i}.md", s) for i, s in enumerate(keyword)],
        [ChunkMatch(f"c{i % 3}.md", i, c, NOW) for i, c in enumerate(cosines)],
        mode=SearchMode.HYBRID,
        now=NOW,
        fusion=fusion,
    )
    scores = [f.score for f in fused]
    assert all(0.0 <= s <= 1.0 for s in scores) and scores == sorted(scores, reverse=True)
    if fusion is not Fusion.RRF:
        assert all(s < 1.0 for s in scores)
    kept = cut(fused, 0.4, 3)
    assert len(kept) <= 3 and all(f.score >= 0.4 for f in kept)


@given(
    st.lists(st.tuples(st.integers(0, 12), st.floats(0.0, SCORE_MAX * 1.2)), max_size=12),
    st.lists(
        st.tuples(st.integers(0, 12), st.integers(0, 4), st.floats(-1.0, 1.0), st.integers(0, 900)),
        max_size=40,
    ),
    st.sampled_from(list(Fusion)),
    st.sampled_from(list(SearchMode)),
    st.floats(0.0, 1.0),
    st.integers(0, 15),
)
def test_the_kept_are_the_cut_of_every_fused_note(
    keyword: list[tuple[int, float]],
    chunks: list[tuple[int, int, float, int]],
    fusion: Fusion,
    mode: SearchMode,
    min_score: float,
    limit: int,
) -> None:
    """What a search keeps (ADR 0078) is exactly what cutting every fused note keeps: the
    same notes, order, scores, halves and chunks, ties (equal scores, a note's equal
    cosines) included."""
    hits = list({f"n{n}.md": KeywordHit(f"n{n}.md", s) for n, s in keyword}.values())
    matches = list(
        {
            (n, i): ChunkMatch(f"n{n}.md", i, round(c, 1), NOW - days * 86_400)
            for n, i, c, days in chunks
        }.values()
    )
    every = fuse(hits, matches, mode=mode, now=NOW, fusion=fusion)
    kept = fuse_kept(
        hits, matches, mode=mode, now=NOW, fusion=fusion, min_score=min_score, limit=limit
    )
    assert kept == cut(every, min_score, limit)


def test_the_semantic_half_saturates() -> None:
    assert similarity_part(-0.3) == 0.0 == similarity_part(0.0)
    assert similarity_part(0.25) == 0.5
    assert similarity_part(1.0) == 0.8


NOTE = (
    "---\ntitle: Log\n---\n# Log\n\n"
    + "\n".join(f"Standup {i}: the sprint board and the retro." for i in range(30))
    + "\n\n## Decisions\n\nThe team painted the database schema in PostgreSQL.\n"
    + "\n## Later\n\nMore sprint notes.\n"
)


def test_windows_are_exact_slices_under_their_headings() -> None:
    spans = windows(NOTE)
    assert len(spans) > 3
    for span in spans:
        text = NOTE[span.offset : span.offset + span.length]
        assert text and text == text.strip() and "title: Log" not in text
    assert [s.heading for s in spans][-2:] == ["Decisions", "Later"]


def test_keyword_passages_pick_the_window_holding_the_rarer_words() -> None:
    [best, *rest] = keyword_passages(NOTE, terms=["paint", "sprint"])
    assert best.heading == "Decisions"
    assert "painted" in NOTE[best.offset : best.offset + best.length]  # a stem's match
    assert len(rest) <= 1
    assert keyword_passages(NOTE, terms=["zebra"]) == []
    assert keyword_passages("# Short\n\nOne line about paint.\n", terms=["paint"]) == []
    assert keyword_passages(NOTE, terms=[]) == []
