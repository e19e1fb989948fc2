"""The local embedder: WordLlama's static token table (l2_supercat, 256 dimensions).

A static embedding model is a table with one vector per token: a text's vector is the
mean of its tokens' rows, normalised to unit length. No neural network runs, so it embeds
thousands of chunks a second on one core and loads in about a tenth of a second. The
weights (16 MB of float16) and the tokenizer ship inside the ``wordllama`` wheel and are
read from its installed files: nothing is downloaded, ever (ADR 0024). Only the two files
are read; the ``wordllama`` package itself is never imported (its import configures the
root logger and pulls in modules memvault does not use).
"""

from __future__ import annotations

import importlib.util
import json
import re
import threading
import unicodedata
from array import array
from collections.abc import Sequence
from functools import lru_cache
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from memvault.errors import ServiceUnavailable

if TYPE_CHECKING:  # imported where it is used: the workers' fork server imports this module
    from memvault.ports import Embeddings

MODEL = "wordllama-l2-supercat-256"
DIMENSION = 256
_WEIGHTS = "weights/l2_supercat_256.safetensors"
_TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
# Longer texts are cut to this many tokens: chunks are bounded well below it, and a mean
# over more tokens than this no longer moves.
MAX_TOKENS = 2048
_BATCH = 256
# The tokenizer's normaliser puts this before the text and in place of every space.
_SPACE = "\u2581"
# Pieces of a normalised text that BPE never merges across: a run of the space mark and
# the characters up to the next one. Exact for this vocabulary: no token holds the mark
# after another character (checked at load, ``_vocabulary_facts``), so the tokens of a
# text are its pieces' tokens, one after the other.
_PIECE_RE = re.compile(f"{_SPACE}+[^{_SPACE}]*|[^{_SPACE}]+")
# The array type code of 32-bit ints (the remembered ids are read back as numpy int32).
_INT32 = next(code for code in "ilh" if array(code).itemsize == 4)
_ID = attrgetter("id")
# Pieces remembered with their token ids (a vault repeats its words): about 120 bytes each.
PIECE_CACHE = 200_000


def package_dir() -> Path:
    """Where the installed ``wordllama`` package lives, without importing it."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise ServiceUnavailable(
            "the local embedding model is not installed (pip install wordllama), "
            "or set MEMVAULT_EMBEDDINGS to openai, bedrock or off",
            code="embeddings_unavailable",
        )
    return Path(next(iter(spec.submodule_search_locations)))


class StaticEmbedder:
    """Mean-pooled static token vectors, unit-normalised. Thread-safe: the tokenizer is
    used under a lock (its padding settings are shared state) and the table is read-only."""

    def __init__(self, table: npt.NDArray[np.float32], tokenizer: Any, model: str) -> None:
        # The table with one spare row after the vocabulary's (``_SPARE``): where
        # ``embed_parts`` keeps a shared head's sum (no token id is ever that row).
        rows = np.zeros((table.shape[0] + 1, table.shape[1]), dtype=np.float32)
        rows[:-1] = table
        self._rows = rows
        self._table = rows[:-1]
        self._spare = np.array([table.shape[0]], dtype=np.int32).tobytes()
        self._tokenizer = tokenizer
        self._model = model
        self._lock = threading.Lock()
        # Token ids (int32 bytes) by piece (see _PIECE_RE), when the vocabulary allows it;
        # else None and every text goes through the tokenizer whole.
        exact, lines = _vocabulary_facts(tokenizer)
        self._pieces: dict[str, bytes] | None = {} if exact else None
        # Whether texts may be cut at their newlines into more pieces (none of the
        # vocabulary's tokens holds one).
        self._cut_lines = lines
        # The added tokens ("<s>", "</s>", "<unk>"): a text that holds one is tokenized
        # whole, since the tokenizer matches them before its pieces.
        self._added = tuple(token.content for token in _added_tokens(tokenizer) if token.content)
        # A character every added token holds ("<"), looked for first: one scan of a text
        # instead of a generator and a scan an added token (2 us a chunk; ADR 0069).
        shared = set.intersection(*map(set, self._added)) if self._added else set()
        self._added_mark = min(shared) if shared else ""

    @classmethod
    def load(cls, root: Path | None = None, *, dimension: int = DIMENSION) -> StaticEmbedder:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        base = root or package_dir()
        try:
            tokenizer = Tokenizer.from_file(str(base / _TOKENIZER))
            table = load_file(str(base / _WEIGHTS))["embedding.weight"]
        except Exception as exc:  # tokenizers raises bare Exception for a missing/bad file
            raise ServiceUnavailable(
                f"the local embedding model's files could not be read ({type(exc).__name__})",
                code="embeddings_unavailable",
            ) from exc
        tokenizer.no_padding()
        tokenizer.enable_truncation(MAX_TOKENS)
        # The table's leading dimensions are a Matryoshka prefix: a shorter vector is the
        # first ``dimension`` columns (used by bench/embedders.py to compare sizes); made
        # float32 once, as it is copied into the embedder's rows.
        name = MODEL if dimension == DIMENSION else f"wordllama-l2-supercat-{dimension}"
        return cls(table[:, :dimension], tokenizer, name)

    @property
    def model(self) -> str:
        return self._model

    @property
    def dimension(self) -> int:
        return int(self._table.shape[1])

    def embed(self, texts: Sequence[str]) -> Embeddings:
        from memvault.ports import Embeddings

        vectors, tokens = self._embed(texts)
        return Embeddings(
            model=self._model,
            dimension=self.dimension,
            vectors=vectors.tolist(),
            input_tokens=tokens,
        )

    def embed_array(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """The vectors as one float32 array (rows unit length; an empty text's row is 0)."""
        return self._embed(texts)[0]

    def _embed(self, texts: Sequence[str]) -> tuple[npt.NDArray[np.float32], int]:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        tokens = 0
        for row, ids in enumerate(self._token_arrays(texts)):
            if len(ids):
                tokens += len(ids)
                # The sum, not the mean: the row is normalised below all the same.
                np.add.reduce(self._table.take(ids, axis=0), axis=0, out=out[row])
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out, tokens

    def _token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's token ids (NFKC first, no special tokens, at most MAX_TOKENS), as
        the tokenizer gives them."""
        return [ids.tolist() for ids in self._token_arrays(texts)]

    def _token_arrays(self, texts: Sequence[str]) -> list[npt.NDArray[np.int32]]:
        """Each text's token ids as an int32 array, as the tokenizer gives them. BPE over
        a whole chunk is most of an embedding's cost (bench/embedders.py), and a vault
        repeats its words: each piece is tokenized once and remembered (``PIECE_CACHE``)
        as its ids' int32 bytes, so a text's ids are one join of its pieces' (ADR 0058)."""
        prepared = [unicodedata.normalize("NFKC", text) for text in texts]
        pieces = self._pieces
        if pieces is None:
            out: list[npt.NDArray[np.int32]] = []
            for start in range(0, len(prepared), _BATCH):
                with self._lock:
                    encoded = self._tokenizer.encode_batch(
                        prepared[start : start + _BATCH], add_special_tokens=False
                    )
                out.extend(np.asarray(enc.ids, dtype=np.int32) for enc in encoded)
            return out
        found = _PIECE_RE.findall
        lines = self._cut_lines
        added, mark = self._added, self._added_mark
        result: list[npt.NDArray[np.int32]] = []
        with self._lock:  # the cache and the model are shared
            if len(pieces) > PIECE_CACHE:
                pieces.clear()
            for text in prepared:
                if not text:  # the tokenizer gives an empty text no tokens (no space mark)
                    result.append(np.zeros(0, dtype=np.int32))
                    continue
                if added and mark in text and any(token in text for token in added):
                    # "<s>" and the like are the tokenizer's own tokens before any BPE.
                    whole = self._tokenizer.encode(text, add_special_tokens=False).ids
                    result.append(np.asarray(whole, dtype=np.int32)[:MAX_TOKENS])
                    continue
                # Text with single spaces between words and no mark or NUL of its own
                # (most text): its pieces are a mark and each word, so the words are the
                # keys. A newline is cut off into a key of its own, or with the word after
                # it (NUL first: a piece without the mark): no token holds a newline
                # (``_vocabulary_facts``), so BPE never merges across one, and a word that ends
                # a line is the same key as anywhere else (ADR 0062). Else the pieces
                # themselves, as found, NUL first.
                if (
                    "  " in text
                    or text[0] == " "
                    or text[-1] == " "
                    or _SPACE in text
                    or "\0" in text
                ):
                    keys = ["\0" + key for key in found(_SPACE + text.replace(" ", _SPACE))]
                elif lines and "\n" in text:
                    keys = text.replace("\n", " \0\n").split(" ")
                else:
                    keys = text.split(" ")
                ids = np.frombuffer(self._keys_ids(keys), dtype=np.int32)
                result.append(ids[:MAX_TOKENS])
        return result

    def embed_parts(self, parts: Sequence[tuple[str, str]]) -> npt.NDArray[np.float32]:
        """``embed_array`` of each ``head + tail``, bit for bit, for texts that share
        heads (chunks: the note's title, path and heading, then the chunk; ADR 0079).

        A head that ends with a newline is tokenized once a call: BPE never merges across
        a newline (``_vocabulary_facts``), so the text's ids are the head's, then the
        tail's as a text after a newline. And its rows are summed once into the spare row
        of the table, which then stands first in each of its texts' gathers: a float32
        sum row by row in the same order, since the head's rows came first anyway. A pair
        this does not hold for (no newline to end the head, text the tokenizer would see
        otherwise: normalised by NFKC, marks, runs of spaces, added tokens, more than
        ``MAX_TOKENS`` ids) is embedded joined, as ``embed_array`` does."""
        out = np.zeros((len(parts), self.dimension), dtype=np.float32)
        pieces = self._pieces
        if pieces is None or not self._cut_lines or any("\n" in t for t in self._added):
            return self._embed([head + tail for head, tail in parts])[0]
        rows, spare, frombuffer = self._rows, self._spare, np.frombuffer
        fast: list[tuple[int, bytes, bytes]] = []
        joined: list[int] = []
        with self._lock:  # the cache, the model and the spare row are shared
            if len(pieces) > PIECE_CACHE:
                pieces.clear()
            heads: dict[str, bytes | None] = {}
            for row, (head, tail) in enumerate(parts):
                head_ids = heads.get(head, b"")
                if head_ids == b"":
                    head_ids = heads[head] = self._head_ids(head)
                # The tail as a text after the head's newline, if the key cut takes it as
                # it is.
                if head_ids is None or not tail or tail[-1] == " " or not self._plain(tail):
                    joined.append(row)
                    continue
                tail_ids = self._keys_ids(("\0\n" + tail.replace("\n", " \0\n")).split(" "))
                if len(head_ids) + len(tail_ids) > 4 * MAX_TOKENS:
                    joined.append(row)
                else:
                    fast.append((row, head_ids, tail_ids))
            current = b""
            take, reduce = rows.take, np.add.reduce
            for row, head_ids, tail_ids in fast:
                if head_ids is not current:  # the head's sum, into the spare row
                    reduce(take(frombuffer(head_ids, dtype=np.int32), axis=0), axis=0, out=rows[-1])
                    current = head_ids
                ids = frombuffer(spare + tail_ids, dtype=np.int32)
                reduce(take(ids, axis=0), axis=0, out=out[row])
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        if joined:
            out[joined] = self._embed([parts[row][0] + parts[row][1] for row in joined])[0]
        return out

    def _plain(self, text: str) -> bool:
        """Whether ``text`` is one the key cut takes as it is: NFKC leaves it unchanged,
        and it holds no mark, NUL, added token or run of spaces (see ``_token_arrays``)."""
        added = self._added
        return not (
            "  " in text
            or _SPACE in text
            or "\0" in text
            or (added and self._added_mark in text and any(token in text for token in added))
        ) and (text.isascii() or unicodedata.is_normalized("NFKC", text))

    def _head_ids(self, head: str) -> bytes | None:
        """A head's ids as int32 bytes (caller holds the lock), or None when its pair must
        be embedded joined: a head is the text up to and with a newline, and its keys are
        the text before that newline's (the newline starts the tail's first key)."""
        if not head or head[-1] != "\n" or head[0] == " " or not self._plain(head):
            return None
        ids = self._keys_ids(head[:-1].replace("\n", " \0\n").split(" "))
        return ids if 0 < len(ids) <= 4 * MAX_TOKENS else None

    def _keys_ids(self, keys: list[str]) -> bytes:
        """The int32 ids of a text cut into these keys: each key's remembered ids, a new
        piece tokenized and remembered (caller holds the lock)."""
        assert self._pieces is not None
        get = self._pieces.get
        found = list(map(get, keys))
        at = -1
        for _ in range(found.count(None)):  # new pieces, found from the C side
            at = found.index(None, at + 1)
            got = get(keys[at])  # the same new piece twice in one text
            found[at] = got if got is not None else self._remember(keys[at])
        return b"".join(found)  # type: ignore[arg-type]

    def _remember(self, key: str) -> bytes:
        """The int32 ids of a piece, tokenized now and remembered (caller holds the lock).
        A key that starts with NUL is the piece after it; any other is a word, whose piece
        is the space mark and the word."""
        assert self._pieces is not None
        piece = key[1:] if key[:1] == "\0" else _SPACE + key
        ids = array(_INT32, map(_ID, self._tokenizer.model.tokenize(piece)))
        got = self._pieces[key] = ids.tobytes()
        return got


def _added_tokens(tokenizer: Any) -> list[Any]:
    try:
        return list(tokenizer.get_added_tokens_decoder().values())
    except Exception:  # another tokenizer build: none known
        return []


def _vocabulary_facts(tokenizer: Any) -> tuple[bool, bool]:
    """Whether a text's tokens are its pieces' tokens: the tokenizer is the one this
    module knows (a normaliser that marks spaces, no pre-tokenizer, BPE), and no token of
    its vocabulary holds the space mark after another character (a merge across pieces);
    and whether no token holds a newline either (a newline is then a byte token of its
    own, so BPE merges nothing across it). Read from the normaliser's own state and the
    vocabulary, not the whole tokenizer's JSON (a tenth of a second a load)."""
    try:
        normalizer = json.loads(tokenizer.normalizer.__getstate__()) if tokenizer.normalizer else {}
        normalizers = normalizer.get("normalizers") or []
        steps = [
            (n.get("type"), n.get("prepend") or (n.get("pattern") or {}).get("String"))
            for n in normalizers
        ]
        replaced = [n.get("content") for n in normalizers if n.get("type") == "Replace"]
        known = (
            normalizer.get("type") == "Sequence"
            and tokenizer.pre_tokenizer is None
            and type(tokenizer.model).__name__ == "BPE"
        )
        vocab = tokenizer.get_vocab()
    except Exception:  # another tokenizer build: the whole-text path
        return False, False
    if not known or steps != [("Prepend", _SPACE), ("Replace", " ")] or replaced != [_SPACE]:
        return False, False
    inner = re.compile(f"[^{_SPACE}]{_SPACE}")
    if any(inner.search(token) for token in vocab):
        return False, False
    return True, not any("\n" in token for token in vocab)


# The leading columns of the table that make a shorter vector (MEMVAULT_EMBEDDINGS_DIMENSION).
DIMENSIONS = (64, 128, 256)


@lru_cache(maxsize=len(DIMENSIONS))
def shared_local_embedder(dimension: int = DIMENSION) -> StaticEmbedder:
    """The local model, loaded once per process and dimension (256: 32 MB in float32)."""
    if dimension not in DIMENSIONS:
        raise ValueError(f"the local model embeds in 64, 128 or 256 dimensions, not {dimension}")
    return StaticEmbedder.load(dimension=dimension)
