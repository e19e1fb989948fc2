"""Deterministic synthetic Obsidian vaults for the benchmarks.

A vault is a seeded function of (size, seed): the same arguments give byte-identical
notes on every machine. Notes look like real ones: YAML frontmatter with tags, a title,
``##`` headings, paragraphs and bullet lists whose words follow a Zipf-like law over a
vocabulary (English stop words at the top, a few hundred English content words and
pronounceable made-up words after), ``[[wikilinks]]`` (bare, folder-qualified, aliased,
some dangling) skewed towards a few popular notes, inline ``#tags``, and folders up to
three levels deep. Note sizes are log-normal around ``mean_bytes`` (5 kB by default, so
10,000 notes are ~50 MB of markdown).
"""

from __future__ import annotations

import itertools
import random
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


def _words(text: str) -> list[str]:
    return text.split()


STOP_WORDS = _words(
    "the of and to a in is it that for on with as was at by this be are or not but from"
    " they will their there into if then such these an no"
)

ENGLISH = _words(
    "project meeting review decided plan week notes team idea design budget release"
    " deploy server client database migration schema query index search cache latency"
    " memory paper draft chapter book reading summary question answer problem solution"
    " customer contract invoice payment travel flight hotel recipe garden health sleep"
    " exercise running doctor family birthday gift holiday weekend morning evening"
    " research experiment result metric dashboard report quarter goal roadmap priority"
    " deadline feedback interview hiring onboarding architecture service endpoint token"
    " account backup restore export import sync phone laptop keyboard monitor music"
    " podcast movie article blog post letter email call decision risk issue bug fix"
    " feature test coverage benchmark profile throughput write read storage network"
    " security password policy privacy license vendor price cost estimate timeline"
    " milestone launch partner market product user interface mobile desktop browser"
)

SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"] + [
    "tha",
    "sho",
    "chi",
    "bre",
    "tru",
    "ank",
    "ell",
    "orn",
    "ist",
    "ung",
]

TOP_FOLDERS = {
    "": 6,
    "projects": 5,
    "areas": 3,
    "journal": 6,
    "resources": 4,
    "archive": 2,
    "people": 2,
    "inbox": 2,
}

ZIPF_EXPONENT = 1.07
ZIPF_OFFSET = 2.7  # Mandelbrot's shift: the top ranks are less extreme than pure Zipf


def _pseudo_words(rng: random.Random, count: int, taken: set[str]) -> list[str]:
    out: list[str] = []
    while len(out) < count:
        word = "".join(rng.choices(SYLLABLES, k=rng.choice((2, 2, 3, 3, 4))))
        if word not in taken:
            taken.add(word)
            out.append(word)
    return out


@dataclass(frozen=True)
class Vocabulary:
    words: list[str]  # by rank: words[0] is the most frequent
    cum_weights: list[float]

    @classmethod
    def build(cls, seed: int, size: int = 30_000) -> Vocabulary:
        rng = random.Random(f"vocab-{seed}")
        taken = set(STOP_WORDS) | set(ENGLISH)
        content = list(ENGLISH) + _pseudo_words(rng, size - len(STOP_WORDS) - len(ENGLISH), taken)
        rng.shuffle(content)
        # Keep the English content words out of the very top ranks, as in real notes.
        words = STOP_WORDS + content
        weights = [1.0 / (r + 1 + ZIPF_OFFSET) ** ZIPF_EXPONENT for r in range(len(words))]
        return cls(words=words, cum_weights=list(itertools.accumulate(weights)))

    def sample(self, rng: random.Random, k: int) -> list[str]:
        return rng.choices(self.words, cum_weights=self.cum_weights, k=k)

    def content_rank(self, rank: int) -> str:
        """The word at ``rank`` counting content words only (stop words skipped)."""
        return self.words[len(STOP_WORDS) + rank]


@dataclass(frozen=True)
class NoteSpec:
    path: str  # vault-relative, "projects/alpha/Foo Bar 12.md"
    name: str  # file name without .md, what a bare [[link]] names


def _folders(rng: random.Random, vocab: Vocabulary) -> tuple[list[str], list[int]]:
    folders: list[str] = []
    weights: list[int] = []
    for top, weight in TOP_FOLDERS.items():
        folders.append(top)
        weights.append(weight)
        if not top:
            continue
        for _ in range(rng.randint(2, 6)):
            sub = f"{top}/{vocab.content_rank(rng.randint(0, 3000)).capitalize()}"
            folders.append(sub)
            weights.append(weight)
            if rng.random() < 0.4:
                folders.append(f"{sub}/{vocab.content_rank(rng.randint(0, 3000))}")
                weights.append(max(1, weight // 2))
    return folders, weights


class VaultGenerator:
    def __init__(self, size: int, *, seed: int = 1, mean_bytes: int = 5_000) -> None:
        self.size = size
        self.seed = seed
        self.mean_bytes = mean_bytes
        self.vocab = Vocabulary.build(seed)
        rng = random.Random(f"layout-{seed}-{size}")
        folders, weights = _folders(rng, self.vocab)
        self.tags = [self.vocab.content_rank(rng.randint(0, 2000)) for _ in range(40)]
        self.tags += [f"{rng.choice(self.tags)}/{self.vocab.content_rank(i)}" for i in range(20)]
        self.notes: list[NoteSpec] = []
        for i in range(size):
            folder = rng.choices(folders, weights=weights)[0]
            a, b = self.vocab.sample(rng, 2)
            name = f"{a.capitalize()} {b} {i}"
            self.notes.append(NoteSpec(f"{folder}/{name}.md" if folder else f"{name}.md", name))

    # ------------------------------------------------------------------ one note
    def _sentence(self, words: list[str]) -> str:
        return words[0].capitalize() + " " + " ".join(words[1:]) + "."

    def _link(self, rng: random.Random) -> str:
        if rng.random() < 0.05:
            return f"[[{self.vocab.content_rank(rng.randint(0, 5000))} that does not exist]]"
        # Skewed towards low indices: a few notes are linked from many.
        target = self.notes[int(self.size * rng.random() ** 3)]
        text = target.path[: -len(".md")] if rng.random() < 0.2 else target.name
        if rng.random() < 0.2:
            text += "|" + " ".join(self.vocab.sample(rng, 2))
        return f"[[{text}]]"

    def markdown(self, rng: random.Random, spec: NoteSpec, target_bytes: int) -> str:
        tags = rng.sample(self.tags, rng.randint(1, 4))
        day = rng.randint(1, 28)
        out = [
            "---",
            f"tags: [{', '.join(tags)}]",
            f"created: 2024-{rng.randint(1, 12):02d}-{day:02d}",
            f"aliases: [{' '.join(self.vocab.sample(rng, 2))}]",
            "---",
            f"# {spec.name}",
            "",
        ]
        size = sum(len(line) + 1 for line in out)
        # ~6.3 bytes a word once spaces and punctuation are counted
        words = self.vocab.sample(rng, max(20, (target_bytes - size) * 10 // 63))
        links = rng.choice((0, 0, 1, 2, 3, 3, 5, 8))
        pos = 0
        while pos < len(words):
            kind = rng.random()
            if kind < 0.12:
                n = rng.randint(2, 5)
                out += [f"## {self._sentence(words[pos : pos + n])[:-1]}", ""]
                pos += n
                continue
            if kind < 0.25:
                for _ in range(rng.randint(2, 5)):
                    n = rng.randint(3, 10)
                    out.append("- " + " ".join(words[pos : pos + n]))
                    pos += n
                out.append("")
                continue
            sentences: list[str] = []
            for _ in range(rng.randint(2, 7)):
                n = rng.randint(6, 20)
                chunk = words[pos : pos + n]
                pos += n
                if not chunk:
                    break
                if links and rng.random() < 0.25:
                    chunk.insert(rng.randint(0, len(chunk)), self._link(rng))
                    links -= 1
                if rng.random() < 0.03:
                    chunk.append("#" + rng.choice(self.tags))
                sentences.append(self._sentence(chunk))
            out += [" ".join(sentences), ""]
        while links:
            out.append(f"See also {self._link(rng)}.")
            links -= 1
        return "\n".join(out) + "\n"

    def note_bytes(self, rng: random.Random) -> int:
        # log-normal with sigma 0.7 has mean exp(mu + 0.245): solve mu for mean_bytes
        return min(200_000, max(300, int(rng.lognormvariate(0.0, 0.7) * self.mean_bytes / 1.278)))

    def iter_notes(self) -> Iterator[tuple[NoteSpec, str]]:
        rng = random.Random(f"notes-{self.seed}-{self.size}")
        for spec in self.notes:
            yield spec, self.markdown(rng, spec, self.note_bytes(rng))

    # ------------------------------------------------------------------ archive
    def write_zip(self, path: Path, root: str = "Vault") -> tuple[int, int]:
        """Write the vault as an Obsidian zip; returns (notes, uncompressed markdown bytes)."""
        total = 0
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
            zf.writestr(f"{root}/.obsidian/app.json", '{"alwaysUpdateLinks": true}\n')
            zf.writestr(f"{root}/attachments/diagram.png", b"\x89PNG\r\n\x1a\n" + bytes(512))
            for spec, markdown in self.iter_notes():
                data = markdown.encode("utf-8")
                total += len(data)
                zf.writestr(f"{root}/{spec.path}", data)
        return self.size, total

    # ------------------------------------------------------------------ queries
    def queries(self) -> list[tuple[str, str]]:
        """(class, text): 1-word, 2-3 word and recall-sentence searches, fixed per seed."""
        v = self.vocab
        rng = random.Random(f"queries-{self.seed}")

        def pick(lo: int, hi: int) -> str:
            return v.content_rank(rng.randint(lo, hi))

        one = [pick(20, 80), pick(20, 80), pick(300, 1500), pick(300, 1500), pick(5000, 20000)]
        one.append("migration")
        few = [
            f"{pick(20, 200)} {pick(300, 1500)}",
            f"{pick(300, 1500)} {pick(1500, 8000)}",
            f"{pick(20, 200)} {pick(300, 1500)} {pick(5000, 20000)}",
            "deploy release plan",
            f"{pick(1500, 8000)} {pick(1500, 8000)} {pick(1500, 8000)}",
        ]
        sentences = [
            f"Can you remind me what we decided about the {pick(20, 300)} {pick(300, 2000)}"
            f" and whether the {pick(300, 2000)} should move to {pick(2000, 9000)} before the"
            " quarter review with the team?",
            f"I was reading about {pick(100, 1000)} {pick(1000, 5000)} last week and the"
            f" {pick(20, 200)} idea for the {pick(300, 3000)} project, what did my notes say"
            " about it?",
            f"Summarise my notes on the {pick(20, 100)} migration, the database schema and"
            f" the {pick(1000, 8000)} {pick(100, 800)} latency benchmark results",
        ]
        return (
            [("1-word", q) for q in one]
            + [("2-3 words", q) for q in few]
            + [("sentence", q) for q in sentences]
        )
