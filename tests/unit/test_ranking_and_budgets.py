"""Properties of the pure ranking, query-term, link-resolution and budget functions."""

from __future__ import annotations

from functools import partial

from hypothesis import given
from hypothesis import strategies as st

from memvault.domain import budgets, links, query, ranking

DAY = ranking.SECONDS_PER_DAY
NOW = 1_780_000_000.0

ages = st.floats(min_value=0, max_value=50 * 365 * DAY, allow_nan=False)
inbound = st.integers(min_value=0, max_value=100_000)


@given(ages, inbound)
def test_multiplier_is_bounded(age: float, n: int) -> None:
    m = ranking.multiplier(NOW - age, n, NOW)
    assert 1.0 <= m <= ranking.MAX_MULTIPLIER


@given(ages, ages, inbound)
def test_newer_never_ranks_lower(a: float, b: float, n: int) -> None:
    newer, older = min(a, b), max(a, b)
    assert ranking.final_score(1.0, NOW - newer, n, NOW) >= ranking.final_score(
        1.0, NOW - older, n, NOW
    )


@given(inbound, inbound, ages)
def test_more_links_never_rank_lower(a: int, b: int, age: float) -> None:
    more, fewer = max(a, b), min(a, b)
    assert ranking.final_score(1.0, NOW - age, more, NOW) >= ranking.final_score(
        1.0, NOW - age, fewer, NOW
    )


@given(ages, ages, inbound, inbound)
def test_relevance_dominates(age_a: float, age_b: float, n_a: int, n_b: int) -> None:
    # A note 1.5x as relevant is never beaten, whatever the other's recency and links.
    strong = ranking.final_score(1.5, NOW - age_a, n_a, NOW)
    weak = ranking.final_score(1.0, NOW - age_b, n_b, NOW)
    assert strong >= weak


def test_recency_halves_at_the_half_life() -> None:
    assert ranking.recency(NOW, NOW) == 1.0
    assert abs(ranking.recency(NOW - ranking.RECENCY_HALF_LIFE_DAYS * DAY, NOW) - 0.5) < 1e-9
    assert ranking.recency(NOW + 100, NOW) == 1.0  # clock skew never boosts past 1


def test_search_terms_drop_stop_words_and_syntax() -> None:
    assert query.search_terms('What is "the" plan AND NEAR(x)?') == ["what", "plan", "near", "x"]
    assert query.search_terms("the a") == ["the", "a"]
    assert query.search_terms("  ***  ") == []
    assert len(query.search_terms(" ".join(f"w{i}" for i in range(500)))) == query.MAX_TERMS


def test_the_common_term_cutoff_is_a_quarter_of_the_notes_above_a_floor() -> None:
    assert query.common_term_cutoff(0) == query.COMMON_TERM_FLOOR
    assert query.common_term_cutoff(4 * query.COMMON_TERM_FLOOR) == query.COMMON_TERM_FLOOR
    assert query.common_term_cutoff(10_000) == 2_500


def test_without_common_terms_keeps_the_distinctive_terms_in_order() -> None:
    counts = {"rare": 3, "mid": 2_500, "common": 2_501, "absent": 0}
    terms = ["common", "rare", "absent", "mid", "unknown"]
    assert query.without_common_terms(terms, counts, 2_500) == ["rare", "mid"]
    # Only common ones (and absent ones): the common ones are searched after all.
    assert query.without_common_terms(["absent", "common"], counts, 2_500) == ["common"]
    assert query.without_common_terms(["absent", "unknown"], counts, 2_500) == []


def test_the_frequent_term_cutoff_is_two_percent_of_the_notes_above_the_same_floor() -> None:
    assert query.frequent_term_cutoff(0) == query.COMMON_TERM_FLOOR
    assert query.frequent_term_cutoff(5_000) == query.COMMON_TERM_FLOOR
    assert query.frequent_term_cutoff(10_000) == 200
    for total in (0, 99, 400, 5_000, 10_000, 1_000_000):
        assert query.frequent_term_cutoff(total) <= query.common_term_cutoff(total)


def test_select_terms_lets_frequent_terms_only_score_when_a_rarer_one_matches() -> None:
    # 10,000 notes: frequent above 200, common above 2,500.
    counts = {"rare": 3, "edge": 200, "frequent": 201, "busy": 2_500, "common": 2_501}
    select = partial(query.select_terms, total=10_000)
    assert select(["common", "frequent", "rare", "absent", "busy", "edge"], counts) == (
        query.TermSelection(matching=("rare", "edge"), scoring=("frequent", "busy"))
    )
    # No rarer term: the frequent ones match, and failing those the common ones.
    assert select(["frequent", "common", "absent"], counts) == query.TermSelection(("frequent",))
    assert select(["common", "absent"], counts) == query.TermSelection(("common",))
    assert select(["absent"], counts) == query.TermSelection(())
    assert query.TermSelection(("a",), ("b", "c")).terms == ("a", "b", "c")
    assert query.TermSelection.every(["x", "y"]) == query.TermSelection(("x", "y"))


@given(st.text())
def test_search_terms_are_plain_words(text: str) -> None:
    for term in query.search_terms(text):
        assert term and all(ch.isalnum() or ch == "_" for ch in term)


def test_link_resolution_rules() -> None:
    # The whole table of cases is tests/unit/test_link_rules.py; these are the basics.
    live = {"plan": "Plan.md", "x/other": "x/Other.md"}
    by_name = {
        "plan": ["Plan.md", "y/Plan.md"],
        "other": ["x/Other.md"],
        "dup": ["a/dup.md", "b/dup.md"],
    }
    assert links.resolve("plan", "n.md", live, by_name) == "Plan.md"  # exact path wins
    assert links.resolve("other", "n.md", live, by_name) == "x/Other.md"  # unique name
    assert links.resolve("dup", "n.md", live, by_name) == "a/dup.md"  # a tie: alphabetical
    assert links.resolve("dup", "b/n.md", live, by_name) == "b/dup.md"  # own folder
    assert links.resolve("x/other", "n.md", live, by_name) == "x/Other.md"
    assert links.resolve("/y/other", "n.md", live, by_name) is None  # exact paths are exact
    assert links.resolve("missing", "n.md", live, by_name) is None


def test_bucket_allows_a_burst_then_refills_at_the_rate() -> None:
    policy = budgets.BucketPolicy(rate_per_minute=120, burst=60)
    state = None
    for _ in range(60):
        allowed, state, _wait = budgets.take(state, NOW, policy)
        assert allowed
    allowed, state, wait = budgets.take(state, NOW, policy)
    assert not allowed and abs(wait - 0.5) < 1e-9
    allowed, state, _ = budgets.take(state, NOW + 0.5, policy)
    assert allowed
    full = budgets.refill(state, NOW + 3600, policy)
    assert full.tokens == policy.burst  # never more than the burst


@given(st.lists(st.floats(min_value=0, max_value=10, allow_nan=False), max_size=200))
def test_bucket_never_goes_negative_or_over_burst(gaps: list[float]) -> None:
    policy = budgets.BucketPolicy()
    state, now = None, NOW
    for gap in gaps:
        now += gap
        _allowed, state, wait = budgets.take(state, now, policy)
        assert 0.0 <= state.tokens <= policy.burst
        assert wait >= 0.0


def test_term_counts_keep_numbers_per_account_bounded_and_never_a_zero() -> None:
    memo = query.TermCounts(max_entries=3)
    memo.remember("a", 500, {"common": 300, "rare": 2, "absent": 0})
    assert memo.lookup("a", ["common", "rare", "absent"]) == (500, {"common": 300, "rare": 2})
    assert memo.lookup("b", ["common"]) == (None, {})  # another account knows nothing
    memo.lookup("a", ["common"])  # used: the newest
    memo.remember("b", 10, {"x": 1})  # two entries more: the two least recently used go
    assert memo.lookup("a", ["common", "rare"]) == (None, {"common": 300})


def test_distinctive_terms_count_only_what_is_not_known() -> None:
    memo = query.TermCounts()
    asked: list[list[str]] = []

    def count(unknown: list[str], total: int | None) -> tuple[int, dict[str, int]]:
        asked.append(list(unknown))
        return 1000, {t: {"the": 900, "walnut": 3}.get(t, 0) for t in unknown}

    walnut = query.TermSelection(("walnut",))
    assert query.distinctive_terms("a", ["the", "walnut", "zebra"], memo, count) == walnut
    assert query.distinctive_terms("a", ["the", "walnut", "zebra"], memo, count) == walnut
    assert asked == [["the", "walnut", "zebra"], ["zebra"]]  # a zero is counted again

    small = query.TermCounts()
    small.remember("a", 40, {})  # known to hold fewer notes than any cutoff
    every = query.TermSelection(("the", "zebra"))
    assert query.distinctive_terms("a", ["the", "zebra"], small, count) == every
    assert len(asked) == 2  # a small vault is searched for every term, nothing counted
