"""Offline token counting: recall's budget and the gateway's reservation before dispatch.

Counts are o200k_base (the GPT-4o family's encoding) from bpe-openai, whose tables ship
inside the wheel; tiktoken downloads its tables at run time, which fails here. We call
bpe-openai's Rust tokenizer (``bpe_openai._bindings``, typed by its ``.pyi``) rather than
its tiktoken-compatible ``Encoding``: that wrapper spends about a second building Python
rank tables we never use, copies every token id into a list just to take its length,
and raises past 200,000 tokens or 1,000,000 characters, which a reservation must never do.

Other providers' tokenizers differ (Claude's yields somewhat more tokens for the same
text), so callers that reserve money for them should add their own margin.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import json
import sys
import threading
import warnings
from array import array
from collections.abc import Mapping
from itertools import accumulate
from pathlib import Path
from typing import Any, Protocol

from memvault.domain.memo import Memo, text_digest

ENCODING = "o200k_base"
# Images are priced by the provider from their pixels, which we do not decode: a fixed
# figure above what a typical screenshot costs (OpenAI high detail 1024x1024: 765;
# Anthropic: about 1,600 for the largest size it keeps without resizing).
IMAGE_TOKENS = 1_000
# Media other than images: at least this much, more for large payloads (see _media).
MEDIA_MIN_TOKENS = 1_000
# A PDF page costs 1.5k-3k tokens (its text plus the page image); a text-only page is a
# few KB of PDF, so one token per two bytes rarely undercounts. Scanned pages are
# over-reserved, and the gateway releases what a request does not use.
DOCUMENT_BYTES_PER_TOKEN = 2
# Audio is ~10 tokens a second; 16 kHz 16-bit WAV is 32,000 bytes a second.
AUDIO_BYTES_PER_TOKEN = 3_000
# Chat templates wrap each message in role markers (OpenAI documents 3-4 a message).
MESSAGE_OVERHEAD = 4
# Each content part, tool call or tool result adds a separator or two.
PART_OVERHEAD = 2
# The reply is primed with an assistant header.
REQUEST_OVERHEAD = 3

_IMAGE_TYPES = frozenset({"image", "image_url", "input_image", "image_file"})
_AUDIO_TYPES = frozenset({"input_audio", "audio"})
_DOCUMENT_TYPES = frozenset({"document", "file", "input_file"})
# Top-level fields that reach the model. Others (model, max_tokens, temperature,
# metadata, ...) are settings and are not prompt text.
_PROMPT_FIELDS = ("system", "instructions", "prompt", "messages", "input")
# Top-level fields the provider renders from their JSON (tool and schema definitions).
_JSON_FIELDS = ("tools", "functions", "tool_choice", "response_format")
# Inside messages: values that are JSON objects the model sees as JSON (tool inputs).
_JSON_KEYS = frozenset({"input", "arguments", "parameters", "input_schema", "schema"})
_MEDIA_DEPTH = 8
# Request texts at least this long are counted one by one, and their counts remembered
# (CountMemo): agents resend the whole conversation with every request, so without it
# each request would tokenize every earlier turn again, about 100 ms for a 190k-token
# conversation on a 2-vCPU machine. Shorter texts cost less to count than to look up.
MEMO_MIN_CHARS = 1_024
# About 100 bytes an entry: a few MB, for tens of long conversations at once.
MEMO_MAX_ENTRIES = 32_768
# Recall counts and tokenizes pieces of the notes it places (a whole note, a window of
# one, an excerpt), and a vault's notes come back request after request. Its counter
# remembers them from this length, where looking up (a digest, about 1 us) already
# costs far less than counting (about 50 us for 128 characters).
RECALL_MEMO_MIN_CHARS = 128
# Token offsets of note windows, 4 bytes each: a window of 2,000 characters is about
# 2 KB, so this holds a few MB (and as many "more than n" facts, a few bytes each).
ENDS_MEMO_MAX_ENTRIES = 4_096


class _Tokenizer(Protocol):
    def count(self, text: str) -> int: ...
    def count_till_limit(self, text: str, token_limit: int) -> int | None: ...
    def encode(self, text: str) -> list[int]: ...
    def decode(self, tokens: list[int]) -> str: ...


_lock = threading.Lock()
_tokenizer: _Tokenizer | None = None


def _get_tokenizer() -> _Tokenizer:
    global _tokenizer
    tokenizer = _tokenizer
    if tokenizer is None:
        with _lock:  # one load even when the first requests arrive together
            if _tokenizer is None:
                _tokenizer = _load_bindings().tokenizer_for_encoding(ENCODING)
            tokenizer = _tokenizer
    assert tokenizer is not None
    return tokenizer


def _load_bindings() -> Any:
    """bpe-openai's Rust extension, loaded without running the package's ``__init__``.

    That ``__init__`` builds Python rank tables for cl100k_base at import (about 0.9 s,
    and a DeprecationWarning), a cost every cold start would pay for nothing: the Rust
    side loads o200k_base itself in about 0.1 s. The module is registered under its own
    name, so a later ``import bpe_openai`` reuses it instead of initialising it twice.
    """
    name = "bpe_openai._bindings"
    if name in sys.modules:
        return sys.modules[name]
    package = importlib.util.find_spec("bpe_openai")  # locates it without importing it
    for directory in (package.submodule_search_locations or []) if package else []:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = Path(directory) / f"_bindings{suffix}"
            spec = importlib.util.spec_from_file_location(name, path)
            if path.is_file() and spec is not None and spec.loader is not None:
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                sys.modules[name] = module
                return module
    with warnings.catch_warnings():  # a layout we do not know: the ordinary import
        warnings.simplefilter("ignore", DeprecationWarning)
        return importlib.import_module(name)


class _Pieces(dict[int, str | None]):
    """Token id -> its text, decoded on first use; None for a token that is part of a
    character (a byte fallback of a rare character or emoji), which does not decode alone.

    Bounded by the vocabulary (200k ids of a few bytes each); text only ever uses a small
    part of it, so in practice this stays at a few thousand entries.
    """

    def __missing__(self, token: int) -> str | None:
        try:
            piece: str | None = _get_tokenizer().decode([token])
        except ValueError:
            piece = None
        self[token] = piece
        return piece


_pieces = _Pieces()


class TokenCounter:
    """o200k_base token counts. Called as ``count_tokens(text)``; recall also uses the
    bounded count and the token offsets, to predict the count of an excerpt instead of
    counting every candidate (domain.recall.TokenCounter is the interface it looks for).
    """

    # o200k_base splits text into pieces by a regex before merging bytes, and no piece
    # holds a newline followed by "<": newlines only end a piece (after punctuation, as in
    # ">\n") or make one of whitespace. A text ending in a newline therefore ends a piece
    # however it is continued, and one starting with "<" starts one, so their counts add.
    joins_at_tag_lines = True

    def __call__(self, text: str) -> int:
        """The number of o200k_base tokens in ``text`` (special-token text counted as text)."""
        if not text:
            return 0
        tokenizer = _get_tokenizer()
        try:
            return int(tokenizer.count(text))
        except UnicodeEncodeError:
            # A lone surrogate (from a lenient JSON decoder) cannot reach the Rust side;
            # each one costs what its replacement character costs.
            return int(tokenizer.count(_without_surrogates(text)))

    def count_within(self, text: str, limit: int) -> int | None:
        """``count_tokens(text)`` if it is at most ``limit``, else None; the tokenizer
        stops at the limit, so asking whether a long text fits costs only the limit."""
        if limit < 0:
            return None
        if not text:
            return 0
        tokenizer = _get_tokenizer()
        try:
            found = tokenizer.count_till_limit(text, limit)
        except UnicodeEncodeError:
            found = tokenizer.count_till_limit(_without_surrogates(text), limit)
        return None if found is None else int(found)

    def token_ends(self, text: str) -> list[int] | None:
        """Where each token of ``text`` ends, as offsets into ``text`` (ascending; the last
        is ``len(text)``), or None for text the tokenizer cannot take as it is.

        The tokens of ``text[:end]`` for an offset ``end`` in this list are nearly always
        the first ones of ``text`` (a token never spans the boundary between pre-token
        pieces, and the pieces only change at the very end), so their number predicts
        ``count_tokens(text[:end])``; it is a prediction, not a count.
        """
        if not text:
            return []
        try:
            tokens = _get_tokenizer().encode(text)
        except UnicodeEncodeError:
            return None  # offsets would not match the text after repair
        pieces = list(map(_pieces.__getitem__, tokens))
        if None in pieces:
            return _joined_ends(tokens, pieces, len(text))
        ends = list(accumulate(map(len, pieces)))  # type: ignore[arg-type]
        return ends if ends[-1] == len(text) else None


count_tokens = TokenCounter()


def _without_surrogates(text: str) -> str:
    return text.encode("utf-8", "replace").decode("utf-8")


def _joined_ends(tokens: list[int], pieces: list[str | None], length: int) -> list[int] | None:
    """token_ends when some tokens are parts of characters: a run of them is decoded
    together and each token in the run ends where the run's last character does."""
    tokenizer = _get_tokenizer()
    ends: list[int] = []
    position, pending = 0, 0
    for index, piece in enumerate(pieces):
        if piece is not None and not pending:
            position += len(piece)
            ends.append(position)
            continue
        pending += 1
        try:
            text = tokenizer.decode(tokens[index - pending + 1 : index + 1])
        except ValueError:
            continue  # the character goes on in the next token
        position += len(text)
        ends.extend([position] * pending)
        pending = 0
    return ends if not pending and position == length else None


class CountMemo:
    """Exact token counts of long texts, least recently used out first, shared by every
    request in the process (tenants included).

    Keyed by a 128-bit BLAKE2b digest of the text, not by the text: entries stay small
    whatever the conversation's size, and no text, crafted or not, can take another's
    count. Hashing costs about 2 ms a megabyte; counting, about 150.
    """

    def __init__(self, max_entries: int = MEMO_MAX_ENTRIES) -> None:
        self._counts: Memo[bytes, int] = Memo(max_entries)

    def __len__(self) -> int:
        return len(self._counts)

    def count(self, text: str) -> int:
        key, found = self.known(text)
        if found is not None:
            return found
        counted = count_tokens(text)  # outside the lock: other requests go on meanwhile
        self.remember(key, counted)
        return counted

    def known(self, text: str) -> tuple[bytes, int | None]:
        """The text's key, and its count if remembered."""
        key = text_digest(text)
        return key, self._counts.get(key)

    def remember(self, key: bytes, counted: int) -> None:
        self._counts.put(key, counted)

    def clear(self) -> None:
        self._counts.clear()


count_memo = CountMemo()


# Token offsets, kept as 4-byte arrays.
ends_memo: Memo[bytes, array[int]] = Memo(ENDS_MEMO_MAX_ENTRIES)
# For texts whose bounded count stopped at a limit: a count they are known to exceed.
exceeds_memo: Memo[bytes, int] = Memo(ENDS_MEMO_MAX_ENTRIES)


class RememberingTokenCounter(TokenCounter):
    """count_tokens for recall: the same answers, with what it learns about texts of
    RECALL_MEMO_MIN_CHARS or more remembered (counts in count_memo, offsets in ends_memo,
    "more than n" in exceeds_memo). Recall places the same notes again whenever they
    match again, and the same note at the same budget gives it the same texts: then it
    tokenizes nothing it has seen."""

    def __call__(self, text: str) -> int:
        if len(text) < RECALL_MEMO_MIN_CHARS:
            return super().__call__(text)
        return count_memo.count(text)

    def count_within(self, text: str, limit: int) -> int | None:
        if len(text) < RECALL_MEMO_MIN_CHARS or limit < 0:
            return super().count_within(text, limit)
        key, known = count_memo.known(text)
        if known is not None:
            return known if known <= limit else None
        exceeded = exceeds_memo.get(key)
        if exceeded is not None and limit <= exceeded:
            return None
        found = super().count_within(text, limit)
        if found is None:
            exceeds_memo.put(key, max(limit, exceeded or 0))
        else:
            count_memo.remember(key, found)
        return found

    def token_ends(self, text: str) -> list[int] | None:
        if len(text) < RECALL_MEMO_MIN_CHARS:
            return super().token_ends(text)
        key = text_digest(text)
        known = ends_memo.get(key)
        if known is not None:
            return known.tolist()
        ends = super().token_ends(text)
        if ends is not None:
            ends_memo.put(key, array("I", ends))
        return ends


recall_count_tokens = RememberingTokenCounter()


def estimate_request_tokens(body: Mapping[str, Any]) -> int:
    """Prompt tokens of an OpenAI chat or Anthropic messages request body, estimated.

    Text is counted exactly; images are IMAGE_TOKENS each, other media by size; tool
    definitions and tool inputs as their JSON; every message and part adds a little for
    the chat template. Errs high rather than low, and never raises whatever the shape.
    """
    walk = _Walk()
    if isinstance(body, Mapping):
        for key in _PROMPT_FIELDS:
            if key in body:
                walk.visit(body[key])
        messages = body.get("messages")
        if isinstance(messages, list):
            walk.overhead += MESSAGE_OVERHEAD * len(messages)
        for key in _JSON_FIELDS:
            if key in body:
                walk.visit_json(body[key])
    else:
        walk.visit(body)
    return REQUEST_OVERHEAD + walk.total()


class _Exit:
    """Marks, on the walk's stack, where a container's contents end."""

    __slots__ = ("key",)

    def __init__(self, key: int) -> None:
        self.key = key


class _Walk:
    """Collects a request's text and fixed costs; counts the text in one tokenizer call."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.overhead = 0
        # Containers being walked (the path from the root): guards cycles while a part
        # that appears twice, shared or not, is counted twice.
        self._active: set[int] = set()

    def total(self) -> int:
        # Short fragments: one call over the joined text is far faster than one per
        # fragment; the newlines keep words of neighbouring fragments from merging into
        # fewer tokens. Long texts are counted alone, through the memo, plus one token
        # for the newline that would have joined them. Which texts go which way depends
        # only on their length, so the estimate is the same whatever the memo holds.
        short = [text for text in self.texts if len(text) < MEMO_MIN_CHARS]
        long_total = sum(
            count_memo.count(text) + 1 for text in self.texts if len(text) >= MEMO_MIN_CHARS
        )
        return self.overhead + count_tokens("\n".join(short)) + long_total

    def visit(self, root: object) -> None:
        # Iterative, so a deeply nested body cannot exhaust the stack.
        stack: list[object] = [root]
        while stack:
            value = stack.pop()
            if isinstance(value, _Exit):
                self._active.discard(value.key)
            elif isinstance(value, str):
                self.texts.append(value)
            elif isinstance(value, bool) or value is None:
                continue
            elif isinstance(value, int | float):
                self.texts.append(repr(value))
            elif not isinstance(value, Mapping | list | tuple) or id(value) in self._active:
                continue  # not JSON (bytes, objects), or a cycle back to a container
            else:
                self._active.add(id(value))
                stack.append(_Exit(id(value)))
                if isinstance(value, Mapping):
                    self._visit_mapping(value, stack)
                else:
                    self.overhead += PART_OVERHEAD * len(value)
                    stack.extend(reversed(value))

    def _visit_mapping(self, part: Mapping[Any, Any], stack: list[object]) -> None:
        kind = part.get("type")
        if not isinstance(kind, str):
            kind = None  # an unhashable "type" must not break the set lookups below
        if kind in _IMAGE_TYPES:
            self.overhead += IMAGE_TOKENS
            return
        if kind in _AUDIO_TYPES or kind in _DOCUMENT_TYPES:
            self._media(part, kind in _DOCUMENT_TYPES)
            return
        for key, value in part.items():
            if key in _JSON_KEYS and not isinstance(value, str):
                self.visit_json(value)
            elif key == "type":
                continue  # a part's type tag is structure, not text
            elif isinstance(value, str) and _is_data_url(value):
                image = value.startswith("data:image")
                self.overhead += (
                    IMAGE_TOKENS if image else _payload_tokens(value, DOCUMENT_BYTES_PER_TOKEN)
                )
            else:
                stack.append(value)

    def _media(self, part: Mapping[Any, Any], document: bool) -> None:
        """Audio, PDFs and files: text sources are counted as text, payloads by size."""
        payloads: list[str] = []
        # Media parts are shallow; the depth cap is what keeps a cyclic one finite.
        stack: list[tuple[object, int]] = [(part, 0)]
        while stack:
            value, depth = stack.pop()
            if depth > _MEDIA_DEPTH:
                continue
            if isinstance(value, Mapping):
                data = value.get("data")
                if value.get("type") in ("text", "content") and isinstance(data, str):
                    self.texts.append(data)  # Anthropic plain-text document
                    continue
                for key, item in value.items():
                    if isinstance(item, str) and key in ("data", "file_data", "url"):
                        payloads.append(item)
                    elif isinstance(item, str) and key in ("title", "context", "text"):
                        self.texts.append(item)
                    else:
                        stack.append((item, depth + 1))
            elif isinstance(value, list | tuple):
                stack.extend((item, depth + 1) for item in value)
        per_token = DOCUMENT_BYTES_PER_TOKEN if document else AUDIO_BYTES_PER_TOKEN
        payload_bytes = sum(len(p) * 3 // 4 for p in payloads)  # base64: 4 chars, 3 bytes
        self.overhead += max(MEDIA_MIN_TOKENS, payload_bytes // per_token)

    def visit_json(self, value: object) -> None:
        try:
            self.texts.append(json.dumps(value, ensure_ascii=False, default=str))
        except (TypeError, ValueError, RecursionError):
            # Not serialisable (a cycle, odd keys, absurd depth): count what it holds.
            self.visit(value)


def _is_data_url(value: str) -> bool:
    return value.startswith("data:") and ";base64," in value[:200]


def _payload_tokens(payload: str, bytes_per_token: int) -> int:
    """Tokens for a base64 (or data URL) payload of this size, at least MEDIA_MIN_TOKENS."""
    decoded_bytes = len(payload) * 3 // 4
    return max(MEDIA_MIN_TOKENS, decoded_bytes // bytes_per_token)
