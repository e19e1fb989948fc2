"""domain.rerank: recall's second stage orders notes by their best passage (ADR 0051)."""

from __future__ import annotations

from memvault.domain.rerank import WINDOW_LINES, Candidate, query_names, query_stems, rerank

FILLER = [f"- line {n} about the weather and the traffic on the way in" for n in range(40)]
# A long note holding the words once each, far apart...
SCATTERED = "\n".join(
    [
        "# Week notes",
        *FILLER[:10],
        "- the pottery class",
        *FILLER[10:30],
        "- we met the kids later",
        *FILLER[30:],
        "- the workshop ran long",
    ]
)
# ...and a note whose few lines are about exactly that.
FOCUSED = "\n".join(
    [
        "---",
        "title: Saturday",
        "---",
        "# Saturday",
        *FILLER[:20],
        "- took the kids to a pottery workshop",
        "- the kids made bowls at the pottery class",
        *FILLER[20:],
    ]
)


def test_question_words_and_pronouns_say_nothing_of_the_topic() -> None:
    assert query_stems("What did she do with her kids at the pottery workshop?") == [
        "kids",
        "pott",
        "work",
    ]
    # A message of nothing else keeps them (something is searched for).
    assert query_stems("what did she do") == ["what", "did", "she", "do"]


def test_the_note_with_the_passage_comes_before_the_note_with_the_words_scattered() -> None:
    query = "What pottery workshop did Melanie take the kids to?"
    ranked = rerank(
        query, [Candidate("week.md", 0.5, SCATTERED), Candidate("sat.md", 0.4, FOCUSED)]
    )
    assert [r.path for r in ranked] == ["sat.md", "week.md"]
    best = ranked[0]
    assert best.score == 0.4 and best.passage > ranked[1].passage > 0
    window = FOCUSED[best.offset : best.offset + best.length]
    assert "pottery workshop" in window and "made bowls" in window
    assert window.count("\n") == WINDOW_LINES - 1  # whole lines, a window of them
    assert not window.startswith("---")  # the frontmatter is not the note's text


def test_without_a_term_any_window_holds_the_search_order_stands() -> None:
    candidates = [Candidate("a.md", 0.6, SCATTERED), Candidate("b.md", 0.3, FOCUSED)]
    for query in ("quantum chromodynamics", "?!"):
        assert [r.path for r in rerank(query, candidates)] == ["a.md", "b.md"]
    assert rerank("pottery", []) == []
    one = rerank("pottery", [Candidate("c.md", 0.2, "")])
    assert [(r.path, r.passage, r.offset, r.length) for r in one] == [("c.md", 0.0, 0, 0)]


def test_names_are_capitalised_words_inside_a_sentence() -> None:
    text = "When did Caroline go to the LGBTQ group? What did Melanie say. Then I left"
    assert query_names(text) == {"caro", "lgbt", "mela"}  # not When, What, Then, nor I
    assert query_names("caroline went home") == set()


def test_a_note_about_the_messages_people_beats_one_with_the_words_alone() -> None:
    passage = "\n".join(
        ["# Notes", *FILLER[:6], "- the pottery workshop with the kids", *FILLER[6:12]]
    )
    theirs = passage + "\n- Caroline was there too\n"  # the name, anywhere in the note
    ranked = rerank(
        "Which pottery workshop did Caroline take the kids to?",
        [Candidate("other.md", 0.5, passage), Candidate("caroline.md", 0.5, theirs)],
    )
    assert [r.path for r in ranked] == ["caroline.md", "other.md"]
    # Without the name the two would tie on their passage (the note's own order stands).
    plain = rerank(
        "which pottery workshop with the kids",
        [Candidate("other.md", 0.5, passage), Candidate("caroline.md", 0.5, theirs)],
    )
    assert [r.path for r in plain] == ["other.md", "caroline.md"]


def test_the_stems_are_found_where_the_case_blind_alternation_finds_them() -> None:
    # _occurrences finds stems with str.find over the lower-cased text; it must give what
    # the case-blind pattern gives (the longest stem at a word start, whole words for
    # short stems), on mixed case, underscores, digits and a character that lower-cases
    # to two ("İ", read by the pattern itself)
    import random
    import re

    from memvault.domain import rerank as rr

    rng = random.Random(5)
    alphabet = "abcdeé_ 1\nXYZİßKΣσς-'.,"
    texts = ["".join(rng.choice(alphabet) for _ in range(400)) for _ in range(200)]
    texts += [SCATTERED, FOCUSED, "Painted PAINTING paint_brush repaint paint. Pa pa-pa"]
    for text in texts:
        words = re.findall(r"\w+", text.lower())
        for _ in range(3):
            picked = rng.sample(words, min(5, len(words)))
            stems = sorted({rr._stem(w) for w in picked}, key=len, reverse=True)
            alternatives = "|".join(
                "(" + re.escape(s) + (r"\w*" if len(s) >= rr.PREFIX_CHARS else r"\b") + ")"
                for s in stems
            )
            pattern = re.compile(rf"\b(?:{alternatives})", re.IGNORECASE)
            want = [(m.start(), stems[m.lastindex - 1]) for m in pattern.finditer(text)]  # type: ignore[operator]
            assert rr._occurrences(text, 0, pattern, stems) == want
