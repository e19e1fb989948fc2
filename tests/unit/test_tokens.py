"""Offline token counts, and the prompt estimate the gateway reserves money against."""

from __future__ import annotations

import base64
import json
import threading
import warnings
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memvault import tokens
from memvault.tokens import IMAGE_TOKENS, count_tokens, estimate_request_tokens
from tests.support.hypothesis import examples

PROSE = "The launch moved to Friday; the checklist lives in [[Checklist]]. "


def public_count(text: str) -> int:
    """The same encoding through bpe-openai's tiktoken-compatible API."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai  # type: ignore[import-untyped]

    encoding = bpe_openai.get_encoding("o200k_base")
    return len(encoding.encode_ordinary(text))


# --------------------------------------------------------------------------- count_tokens


def test_counts_match_the_tiktoken_compatible_encoding() -> None:
    samples = [
        "hello world",
        PROSE * 20,
        "日本語のメモ、そして emoji 🎉🎉",
        "def f(x):\n    return {'a': [1, 2, 3]}\n",
        " " * 300 + "\n\n\t",
    ]
    for text in samples:
        assert count_tokens(text) == public_count(text)
    assert count_tokens("hello world") == 2
    assert count_tokens("") == 0


def test_special_token_text_is_counted_as_text_and_never_raises() -> None:
    assert count_tokens("<|endoftext|>") > 1  # not the single special token


def test_a_lone_surrogate_is_counted_not_refused() -> None:
    assert count_tokens("a\ud800b") == count_tokens("a\ufffdb")


def test_text_past_the_wrappers_limits_is_counted() -> None:
    # bpe-openai's Encoding refuses 1,000,000 characters and 200,000 tokens.
    text = "word " * 300_000
    assert count_tokens(text) >= 300_000


def test_concurrent_first_use_loads_one_tokenizer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens, "_tokenizer", None)
    loads: list[int] = []
    real_load = tokens._load_bindings

    def counting_load() -> Any:
        loads.append(1)
        return real_load()

    monkeypatch.setattr(tokens, "_load_bindings", counting_load)
    results: list[int] = []
    threads = [
        threading.Thread(target=lambda: results.append(count_tokens(PROSE))) for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert loads == [1] and results == [count_tokens(PROSE)] * 8


# --------------------------------------------------------------------------- estimates


def openai_request(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-4o", "messages": list(messages), **extra}


def test_plain_chat_is_its_text_plus_a_little_per_message() -> None:
    body = openai_request(
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": PROSE * 50},
    )
    text_tokens = count_tokens("You are terse.") + count_tokens(PROSE * 50)
    estimate = estimate_request_tokens(body)
    assert text_tokens <= estimate <= text_tokens + 20


def test_openai_parts_tool_calls_and_tool_results_are_counted() -> None:
    arguments = json.dumps({"query": "launch " * 100})
    body = openai_request(
        {"role": "user", "content": [{"type": "text", "text": PROSE * 10}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "look", "arguments": arguments},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "result " * 200},
    )
    expected = count_tokens(PROSE * 10) + count_tokens(arguments) + count_tokens("result " * 200)
    assert estimate_request_tokens(body) >= expected


def test_anthropic_system_blocks_tool_use_and_tool_results_are_counted() -> None:
    tool_input = {"path": "notes/plan.md", "text": "beta " * 300}
    body = {
        "model": "claude-sonnet-4",
        "max_tokens": 1024,
        "system": [{"type": "text", "text": "System prompt " * 40}],
        "messages": [
            {"role": "user", "content": "Please save this."},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "save", "input": tool_input}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": [{"type": "text", "text": "saved " * 100}],
                    }
                ],
            },
        ],
    }
    expected = (
        count_tokens("System prompt " * 40)
        + count_tokens(json.dumps(tool_input))
        + count_tokens("saved " * 100)
    )
    assert estimate_request_tokens(body) >= expected
    body["system"] = "System prompt " * 40  # the string form counts the same text
    assert estimate_request_tokens(body) >= expected


def test_tool_definitions_count_as_their_json() -> None:
    tool = {
        "type": "function",
        "function": {
            "name": "memory_search",
            "description": "Search the vault. " * 30,
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        },
    }
    bare = openai_request({"role": "user", "content": "hi"})
    with_tool = openai_request({"role": "user", "content": "hi"}, tools=[tool])
    added = estimate_request_tokens(with_tool) - estimate_request_tokens(bare)
    assert added >= count_tokens(json.dumps(tool))
    anthropic_tool = {"name": "memory_search", "input_schema": {"type": "object"}}
    assert estimate_request_tokens({"tools": [anthropic_tool]}) >= count_tokens(
        json.dumps(anthropic_tool)
    )


def test_images_cost_a_fixed_amount_and_their_bytes_are_not_text() -> None:
    pixels = base64.b64encode(bytes(range(256)) * 4000).decode()  # ~1.4 MB of base64
    openai_image = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{pixels}"}}
    anthropic_image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": pixels},
    }
    for image in (openai_image, anthropic_image):
        parts: list[Any] = [{"type": "text", "text": "hi"}, image]
        body = {"messages": [{"role": "user", "content": parts}]}
        one = estimate_request_tokens(body)
        assert IMAGE_TOKENS <= one <= IMAGE_TOKENS + 30
        parts.append(image)
        assert estimate_request_tokens(body) - one >= IMAGE_TOKENS


def test_documents_are_reserved_by_size() -> None:
    pdf = base64.b64encode(b"%PDF-1.7 " + b"x" * 300_000).decode()
    body = {
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "document",
                        "source": {"type": "base64", "media_type": "application/pdf", "data": pdf},
                    }
                ],
            }
        ]
    }
    assert estimate_request_tokens(body) >= 300_000 // tokens.DOCUMENT_BYTES_PER_TOKEN
    text_doc = {"type": "document", "source": {"type": "text", "data": PROSE * 30}}
    body = {"messages": [{"role": "user", "content": [text_doc]}]}
    assert estimate_request_tokens(body) >= count_tokens(PROSE * 30)


class Cyclic(dict):  # type: ignore[type-arg]
    pass


def odd_shapes() -> list[Any]:
    cyclic: dict[str, Any] = {"role": "user"}
    cyclic["content"] = [cyclic]
    deep: Any = "bottom"
    for _ in range(50_000):
        deep = [deep]
    return [
        {},
        {"messages": None},
        {"messages": "just a string"},
        {"messages": [None, 3, 2.5, True, "x", [["nested"]], {"content": {"weird": 1}}]},
        {"messages": [{"role": "user", "content": [{"type": ["unhashable"], "text": "a"}]}]},
        {"messages": [{"content": [{"type": "mystery", "payload": {"a": [1, None]}}]}]},
        {"messages": [cyclic]},
        {"messages": deep},
        {"tools": [{1: "int key", (1, 2): "tuple key"}], "system": 12},
        {"tools": [{"x": object(), "y": b"bytes"}]},
        {"messages": [{"role": "user", "content": "a\ud800 lone surrogate"}]},
        {"tool_choice": {"type": "tool", "name": "x"}, "response_format": {"type": "json_object"}},
    ]


@pytest.mark.parametrize("body", odd_shapes(), ids=range(len(odd_shapes())))
def test_odd_shapes_never_raise(body: Any) -> None:
    assert estimate_request_tokens(body) >= tokens.REQUEST_OVERHEAD


def test_a_body_that_is_not_a_mapping_never_raises() -> None:
    assert estimate_request_tokens(["hi"]) >= count_tokens("hi")  # type: ignore[arg-type]
    assert estimate_request_tokens(None) >= 0  # type: ignore[arg-type]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=50),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(["type", "text", "content", "input", "source", "data", "x"]),
            children | st.sampled_from(["image", "text", "document", "tool_use", "input_audio"]),
            max_size=4,
        )
    ),
    max_leaves=30,
)


@settings(max_examples=examples(200), deadline=None)
@given(json_values, json_values)
def test_arbitrary_json_never_raises(messages: Any, tools_value: Any) -> None:
    assert estimate_request_tokens({"messages": messages, "tools": tools_value}) >= 0


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.text(min_size=1, max_size=200), min_size=1, max_size=10))
def test_message_text_is_never_undercounted(texts: list[str]) -> None:
    body = {"messages": [{"role": "user", "content": text} for text in texts]}
    assert estimate_request_tokens(body) >= sum(count_tokens(text) for text in texts)


# --------------------------------------------------------------------------- recall's interface


@given(st.text(max_size=200))
def test_count_within_is_the_count_up_to_the_limit(text: str) -> None:
    count = count_tokens(text)
    assert count_tokens.count_within(text, count) == count
    assert count_tokens.count_within(text, count + 5) == count
    if count:
        assert count_tokens.count_within(text, count - 1) is None
    assert count_tokens.count_within(text, -1) is None


def test_count_within_takes_lone_surrogates() -> None:
    assert count_tokens.count_within("a\ud800b", 10) == count_tokens("a\ufffdb")


@settings(max_examples=examples(200))
@given(st.text(max_size=200))
def test_token_ends_locate_every_token(text: str) -> None:
    ends = count_tokens.token_ends(text)
    if ends is None:
        assert any("\ud800" <= c <= "\udfff" for c in text)  # only text it cannot take
        return
    assert len(ends) == count_tokens(text)
    assert ends == sorted(ends) and (not text or ends[-1] == len(text))


def test_token_ends_predict_prefix_counts() -> None:
    text = PROSE * 30 + "日本語のメモ、そして emoji 🎉🎉 ꙮ𓀀 done. " * 5
    ends = count_tokens.token_ends(text)
    assert ends is not None and ends[-1] == len(text)
    for index, end in enumerate(ends):
        if end < len(text) and text[end] == " ":  # where recall cuts: before a space
            # Exact in prose; a few off after characters split over several tokens
            # (recall counts the excerpt it chooses, so a prediction only has to be close).
            slack = 0 if end <= len(PROSE) * 30 else 4
            assert abs(count_tokens(text[:end]) - (index + 1)) <= slack
    # A character split over several tokens ends where its last token does.
    emoji = count_tokens.token_ends("🎉")
    assert emoji is not None and emoji[-1] == 1
    assert count_tokens.token_ends("") == [] and count_tokens.token_ends("a\ud800b") is None


@settings(max_examples=examples(300))
@given(st.text(max_size=80), st.text(max_size=80))
def test_counts_add_across_a_newline_before_a_tag(before: str, after: str) -> None:
    # What lets recall sum its pieces' counts instead of counting the block again.
    assert count_tokens.joins_at_tag_lines
    head, tail = before + "\n", "<" + after
    assert count_tokens(head + tail) == count_tokens(head) + count_tokens(tail)


# --------------------------------------------------------------------------- the count memo
def agent_history(turns: int) -> dict[str, Any]:
    """A long conversation: turns of a few kB each, every one distinct."""
    messages = [
        {"role": "user" if n % 2 == 0 else "assistant", "content": f"Turn {n}. " + PROSE * 40}
        for n in range(turns)
    ]
    return openai_request({"role": "system", "content": "You are an agent."}, *messages)


def test_a_resent_conversation_is_not_tokenized_again(monkeypatch: pytest.MonkeyPatch) -> None:
    tokens.count_memo.clear()
    counted: list[int] = []
    real = tokens.count_tokens

    def spy(text: str) -> int:
        counted.append(len(text))
        return real(text)

    monkeypatch.setattr(tokens, "count_tokens", spy)
    body = agent_history(12)
    first = estimate_request_tokens(body)
    long_counted = [n for n in counted if n >= tokens.MEMO_MIN_CHARS]
    assert len(long_counted) == 12  # each long turn once

    counted.clear()
    body["messages"].append({"role": "user", "content": "Turn 12. " + PROSE * 40})
    second = estimate_request_tokens(body)
    # Only the new turn is tokenized; the short texts are counted together as before.
    assert [n for n in counted if n >= tokens.MEMO_MIN_CHARS] == [len("Turn 12. " + PROSE * 40)]
    assert second > first


def test_the_estimate_is_the_same_whatever_the_memo_holds() -> None:
    body = agent_history(6)
    tokens.count_memo.clear()
    cold = estimate_request_tokens(body)
    warm = estimate_request_tokens(body)
    for n in range(50):  # other conversations' texts pass through the memo meanwhile
        tokens.count_memo.count(f"other {n} " + PROSE * 30)
    assert estimate_request_tokens(body) == cold == warm
    texts = [m["content"] for m in body["messages"]]
    assert cold >= sum(count_tokens(text) for text in texts)  # never undercounted


def test_texts_of_the_same_length_keep_their_own_counts() -> None:
    memo = tokens.CountMemo()
    dense = "x" * 2000  # few tokens: one long run of a letter
    sparse = "\u4e00\u4e8c" * 1000  # many: CJK characters, same length
    assert len(dense) == len(sparse)
    assert memo.count(dense) == count_tokens(dense)
    assert memo.count(sparse) == count_tokens(sparse) != count_tokens(dense)
    assert memo.count(dense) == count_tokens(dense)


def test_the_memo_is_bounded_and_drops_the_least_recently_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memo = tokens.CountMemo(max_entries=2)
    a, b, c = ("a " * 600, "b " * 600, "c " * 600)
    memo.count(a)
    memo.count(b)
    memo.count(a)  # a is now the most recent
    memo.count(c)  # b goes
    assert len(memo) == 2
    calls: list[str] = []
    real = tokens.count_tokens

    def spy(text: str) -> int:
        calls.append(text)
        return real(text)

    monkeypatch.setattr(tokens, "count_tokens", spy)
    memo.count(a)
    memo.count(c)
    assert calls == []
    memo.count(b)
    assert calls == [b]


def test_the_memo_takes_unpaired_surrogates() -> None:
    text = "a\ud800b " * 600
    assert tokens.CountMemo().count(text) == count_tokens(text) > 0


# --------------------------------------------------------------------------- recall's memo

remembering = tokens.recall_count_tokens


class CountingTokenizer:
    """The real tokenizer, noting the length of every text it is given."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.lengths: list[int] = []

    def count(self, text: str) -> int:
        self.lengths.append(len(text))
        return int(self.real.count(text))

    def count_till_limit(self, text: str, token_limit: int) -> int | None:
        self.lengths.append(len(text))
        return self.real.count_till_limit(text, token_limit)  # type: ignore[no-any-return]

    def encode(self, text: str) -> list[int]:
        self.lengths.append(len(text))
        return list(self.real.encode(text))

    def decode(self, ids: list[int]) -> str:
        return str(self.real.decode(ids))


@settings(max_examples=examples(150), deadline=None)
@given(st.text(min_size=100, max_size=400), st.integers(min_value=-1, max_value=200))
def test_the_remembering_counter_answers_as_the_plain_one(text: str, limit: int) -> None:
    for _ in range(2):  # unknown, then remembered
        assert remembering(text) == count_tokens(text)
        assert remembering.count_within(text, limit) == count_tokens.count_within(text, limit)
        assert remembering.token_ends(text) == count_tokens.token_ends(text)


def test_a_bounded_count_past_its_limit_is_remembered_as_only_that(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = PROSE * 10
    for memo in (tokens.count_memo, tokens.exceeds_memo):
        memo.clear()
    full = count_tokens(text)
    probe = CountingTokenizer(tokens._get_tokenizer())
    monkeypatch.setattr(tokens, "_tokenizer", probe)
    assert remembering.count_within(text, full - 10) is None
    assert remembering.count_within(text, full - 12) is None  # known to exceed it
    assert len(probe.lengths) == 1
    assert remembering.count_within(text, full - 1) is None  # not known: counted
    assert remembering.count_within(text, full) == full
    assert remembering(text) == full and len(probe.lengths) == 3


def test_notes_recalled_again_are_not_tokenized_again(monkeypatch: pytest.MonkeyPatch) -> None:
    from memvault.domain.recall import RecallNote, assemble_recall

    notes = [
        RecallNote(
            path=f"notes/{n}.md",
            title=str(n),
            updated_at=1_780_000_000.0,
            markdown=f"# Note {n}\n\n" + "\n\n".join(f"Part {p}. " + PROSE * 6 for p in range(8)),
            score=1.0,
        )
        for n in range(5)
    ]
    tokens.count_memo.clear()
    tokens.ends_memo.clear()
    tokens.exceeds_memo.clear()
    probe = CountingTokenizer(tokens._get_tokenizer())
    monkeypatch.setattr(tokens, "_tokenizer", probe)

    first = assemble_recall(notes, max_notes=5, token_budget=1500, count_tokens=remembering)
    assert first is not None and first.excerpted  # some notes were cut: windows and excerpts
    assert any(n >= tokens.RECALL_MEMO_MIN_CHARS for n in probe.lengths)
    probe.lengths.clear()
    again = assemble_recall(notes, max_notes=5, token_budget=1500, count_tokens=remembering)

    assert again == first
    assert [n for n in probe.lengths if n >= tokens.RECALL_MEMO_MIN_CHARS] == []
    plain = assemble_recall(notes, max_notes=5, token_budget=1500, count_tokens=count_tokens)
    assert plain == first
