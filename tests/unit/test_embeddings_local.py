"""The local embedder: unit vectors, stable, and closer for texts that mean the same."""

from __future__ import annotations

import math

import pytest

from memvault.adapters.embeddings import build_embedder
from memvault.adapters.embeddings.local import DIMENSION, MODEL, StaticEmbedder
from memvault.errors import ServiceUnavailable
from memvault.settings import Settings


def cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


@pytest.fixture(scope="module")
def local() -> StaticEmbedder:
    embedder = build_embedder(Settings(embeddings="local"))
    assert isinstance(embedder, StaticEmbedder)
    return embedder


def test_vectors_are_unit_length_in_input_order(local: StaticEmbedder) -> None:
    texts = ["we picked Postgres", "the cat sat on the mat", "Ünïcödé ｆｕｌｌｗｉｄｔｈ"]
    out = local.embed(texts)
    assert out.model == MODEL and out.dimension == DIMENSION == local.dimension
    assert len(out.vectors) == 3
    for vector in out.vectors:
        assert len(vector) == DIMENSION
        assert math.isclose(math.sqrt(sum(v * v for v in vector)), 1.0, rel_tol=1e-5)
    # Each text alone gets the vector it got in the batch.
    for text, vector in zip(texts, out.vectors, strict=True):
        alone = local.embed([text]).vectors[0]
        assert cos(alone, vector) == pytest.approx(1.0, abs=1e-6)
    assert out.input_tokens > 0 and out.cost_micros == 0


def test_a_paraphrase_is_nearer_than_an_unrelated_text(local: StaticEmbedder) -> None:
    query, same, other = local.embed(
        [
            "which database did we choose",
            "we picked Postgres as our database",
            "my grandmother grows tomatoes in her garden",
        ]
    ).vectors
    assert cos(query, same) > cos(query, other) + 0.1


def test_empty_input_and_empty_text(local: StaticEmbedder) -> None:
    assert local.embed([]).vectors == []
    (vector,) = local.embed([""]).vectors
    assert vector == [0.0] * DIMENSION


def test_the_model_is_loaded_once_per_process() -> None:
    assert build_embedder(Settings(embeddings="local")) is build_embedder(
        Settings(embeddings="local")
    )
    assert build_embedder(Settings(embeddings="off")) is None


def test_missing_model_files_are_unavailable_not_a_crash(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ServiceUnavailable) as info:
        StaticEmbedder.load(tmp_path)
    assert info.value.code == "embeddings_unavailable"


def test_remembered_pieces_give_the_tokenizers_own_ids(local: StaticEmbedder) -> None:
    # The embedder tokenizes each piece of a text once and remembers it; the ids must be
    # the ones the tokenizer gives the whole text, spaces, marks and odd characters too.
    import unicodedata

    texts = [
        "we picked Postgres, then   moved to SQLite.\n\n## Why\n- boring, tested",
        "  leading and trailing spaces  ",
        "tab\there\r\nnew line ▁ a literal space mark ▁▁x",
        "Ünïcödé ｆｕｌｌｗｉｄｔｈ ﬁ 中文 🎉 \u00a0nbsp",
        "x " * 3000,  # past MAX_TOKENS
        "",
        " ",
        # Cut at newlines (ADR 0062): a word before or after one, runs of them, at the
        # edges, after a carriage return; and a NUL of the text's own.
        "Title\npath/to/note.md\nHeading\n\nFirst words.\nnext line,\n\n\nlast.",
        "\nstarts with one",
        "ends with one\n",
        "\n",
        "a\r\nb\n\r\n\nc",
        "a NUL \0 inside\nand a newline",
        "<s>struck</s> and <unk>, the tokenizer's own added tokens",
    ]
    ours = local._token_ids(texts + texts)  # the second time from the remembered pieces
    tokenizer = local._tokenizer
    theirs = [
        enc.ids
        for enc in tokenizer.encode_batch(
            [unicodedata.normalize("NFKC", t) for t in texts], add_special_tokens=False
        )
    ]
    assert local._pieces is not None  # the fast path is the one this model takes
    assert local._cut_lines  # and so is the cut at newlines
    assert ours == theirs + theirs
    assert len(ours[4]) == 2048


def test_another_tokenizer_build_is_tokenized_whole(local: StaticEmbedder) -> None:
    # The remembered pieces and the newline cut are exact only for the tokenizer they were
    # checked against: a build with a pre-tokenizer, or a vocabulary with a newline token,
    # loses the shortcut it no longer has, and its ids stay the tokenizer's own.
    import json

    from tokenizers import AddedToken, Tokenizer

    config = json.loads(local._tokenizer.to_str())
    config["pre_tokenizer"] = {"type": "Whitespace"}
    whitespace = Tokenizer.from_str(json.dumps(config))
    with_newline = Tokenizer.from_str(local._tokenizer.to_str())
    with_newline.add_tokens([AddedToken("x\ny", normalized=False)])
    text = "first line.\nx\ny and   more"
    for tokenizer, pieces, lines in ((whitespace, False, False), (with_newline, True, False)):
        embedder = StaticEmbedder(local._table, tokenizer, local.model)
        assert (embedder._pieces is not None, embedder._cut_lines) == (pieces, lines)
        want = tokenizer.encode(text, add_special_tokens=False).ids
        assert embedder._token_ids([text]) == [want]


def test_vectors_are_the_normalised_mean_of_the_tokenizers_token_rows(
    local: StaticEmbedder,
) -> None:
    # Whatever path a text takes (its words remembered, its pieces with their marks, or
    # cut at MAX_TOKENS), its vector is the model's: the mean of its tokens' rows.
    import unicodedata

    import numpy as np

    texts = [
        "single spaces between words, as most text has",
        "double  spaces and a trailing one ",
        " a leading space",
        "a literal mark ▁ inside",
        "tab\tand\nnew lines\r\n- list",
        "x " * 3000,
        "",
    ]
    got = local.embed_array(texts + texts)  # the second time from the remembered pieces
    table = local._table
    for row, text in enumerate(texts + texts):
        ids = local._tokenizer.encode(
            unicodedata.normalize("NFKC", text), add_special_tokens=False
        ).ids
        want = table[ids].mean(axis=0) if ids else np.zeros(local.dimension, np.float32)
        norm = float(np.linalg.norm(want))
        want = want / norm if norm else want
        assert np.abs(got[row] - want).max() < 1e-6, text


def test_texts_given_as_a_shared_head_and_a_tail_get_the_joined_texts_vectors_bit_for_bit() -> None:
    # A bulk drain embeds each chunk as its context (title, path, heading: shared by a
    # section's chunks, tokenized and summed once) and its text (ADR 0079). The vectors
    # must be the whole texts' to the last bit, as embed_array gives them and as a plain
    # computation from the tokenizer's own ids gives them: the rows summed one by one in
    # float32, in token order, then normalised. Heads and tails that the shortcut does not
    # hold for (no newline to end the head, spaces at an edge or in a run, marks, NULs,
    # text NFKC changes, added tokens, more than MAX_TOKENS ids, an empty tail) are
    # embedded whole, in place.
    import unicodedata

    import numpy as np

    from memvault.adapters.embeddings.local import MAX_TOKENS

    head = "Decisions\nwork/decisions.md\nWhy Postgres\n\n"
    other = "Decisions\nwork/decisions.md\nLater\n\n"
    parts = [
        (head, "we picked Postgres, then moved to SQLite.\n- boring, tested"),
        (head, "the second chunk of the section\nwith lines"),
        (other, "another section's chunk"),
        (head, "the first head again, after another"),
        ("no newline at the end ", "of the head"),
        (" a leading space\n\n", "in the head"),
        (head, "a trailing space "),
        (head, "double  spaces"),
        (head, "a literal mark \u2581 inside"),
        (head, "a NUL \0 inside"),
        (head, "Ünïcödé ｆｕｌｌｗｉｄｔｈ ﬁ"),  # NFKC changes it
        (head, "ünïcödé already normalised 中文 🎉"),
        ("Ｔｉｔｌｅ\n\n", "a head NFKC changes"),
        (head, "<s>struck</s> and <unk>"),
        (head, "x " * 1500 + "end"),  # past MAX_TOKENS with the head
        (head, ""),
        ("\n", "a head of one newline"),
        (head, "\nstarts with a newline\r\nand a carriage return\n\n\nruns of them"),
        ("just a context", ""),
    ]
    joined = [h + t for h, t in parts]
    fresh = StaticEmbedder.load()
    got = fresh.embed_parts(parts)  # every piece new to this embedder
    again = fresh.embed_parts(parts)  # and remembered
    whole = StaticEmbedder.load().embed_array(joined)
    table = fresh._table
    sums = np.zeros((len(joined), fresh.dimension), dtype=np.float32)
    for row, text in enumerate(joined):
        ids = fresh._tokenizer.encode(
            unicodedata.normalize("NFKC", text), add_special_tokens=False
        ).ids[:MAX_TOKENS]
        if ids:
            total = table[ids[0]].copy()
            for token in ids[1:]:
                total = total + table[token]
            sums[row] = total
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    want = np.divide(sums, norms, out=np.zeros_like(sums), where=norms > 0)
    assert got.dtype == np.float32 and got.shape == (len(parts), fresh.dimension)
    for row, text in enumerate(joined):
        assert got[row].tobytes() == want[row].tobytes() == whole[row].tobytes(), text
    assert again.tobytes() == got.tobytes()
