"""The vault's behaviour: every surface (REST, CLI, gateway tools, MCP) calls these.

Budgets, size limits, quotas and write screening are enforced here and nowhere else,
so they hold identically on every surface.

Paths differing only in case name one note: every operation finds the note under any
case of its path and acts on it under its own spelling (a put under another case is
refused as a clash, ``domain.write_plan``). A path that makes a note must pass every
path rule (``paths.normalize_path``); one that only finds a note may hold characters
refused since it was stored (``paths.lookup_path``), so such a note can be renamed.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memvault.domain import links as link_rules
from memvault.domain import markdown as md
from memvault.domain import paths
from memvault.domain.budgets import Bucket
from memvault.domain.fusion import SearchMode
from memvault.domain.models import (
    MAX_NOTE_BYTES,
    DeleteNote,
    LinkRef,
    MoveNote,
    Note,
    NoteChange,
    NoteSummary,
    NoteVersion,
    PutNote,
    SearchHit,
    SearchQuery,
    VersionInfo,
)
from memvault.domain.screening import ScreeningVerdict, screen_path, screen_text
from memvault.errors import Conflict, InvalidInput, NotFound, TooLarge, Unprocessable
from memvault.ports import AttachmentStore, CommitResult, Page, SearchIndex, VaultStorage
from memvault.services.budgets import BudgetGuard
from memvault.services.context import Caller
from memvault.services.hybrid import HybridSearch, SearchOutcome, SemanticSearch
from memvault.services.indexing import IndexSync
from memvault.services.links import LinkGraph
from memvault.services.search_defaults import SearchDefaultsReader
from memvault.services.vectors import VectorStatus, VectorSync

log = logging.getLogger("memvault.vault")

MAX_PAGE = 500
MAX_VERSION = 2**31
MAX_SEARCH_LIMIT = 100
# Length limits of what a caller may send besides paths (512 bytes, domain.paths) and
# notes (1 MB): each is read, matched or echoed, so each is bounded.
MAX_QUERY_CHARS = 4096
MAX_TAG_CHARS = 256  # a tag filter; tags people write are far shorter
MAX_CURSOR_CHARS = 2048  # a cursor this server issues: a path key in base64
# An unpinned append re-reads and retries this often when another writer got in first.
APPEND_ATTEMPTS = 20
# A model's append is screened where it joins the note too (this much on each side), so
# an injection cannot be split across two appends; longer than any screening match.
SCREEN_JUNCTION_CHARS = 400


@dataclass(frozen=True, slots=True)
class WriteOutcome:
    note: Note
    changed: bool  # False when the markdown was identical and no version was made
    created: bool  # True when no live note was there before (new, or a deleted one revived)


def parse_mode(mode: str) -> SearchMode:
    """A search mode by name; InvalidInput (field ``mode``) for any other."""
    try:
        return SearchMode(mode)
    except ValueError:
        names = ", ".join(m.value for m in SearchMode)
        raise InvalidInput(
            f"mode must be one of {names}, not {mode[:40]!r}", code="invalid_input", field="mode"
        ) from None


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_unicode(text: str) -> None:
    """Refuse text that cannot be stored as UTF-8 (lone surrogates from a bad decoder)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(
            f"the text is not valid Unicode (a lone surrogate at character {exc.start})",
            code="invalid_text",
        ) from exc


def check_length(what: str, value: str | None, limit: int) -> None:
    """Refuse a string over its limit (every surface; REST also checks it at the edge)."""
    if value is not None and len(value) > limit:
        raise InvalidInput(
            f"{what} is {len(value)} characters; it may be at most {limit}", code="invalid_input"
        )


def check_note_size(path: str, markdown: str) -> None:
    size = len(markdown.encode("utf-8"))
    if size > MAX_NOTE_BYTES:
        raise TooLarge(
            f"{path!r} is {size} bytes; a note may hold at most {MAX_NOTE_BYTES} bytes"
            " (1 MB) of markdown",
            code="note_too_large",
            limit=MAX_NOTE_BYTES,
        )


def build_put(path: str, markdown: str, expected_version: int | None = None) -> PutNote:
    """Parse a note into the change storage applies (title, tags and links derived)."""
    parsed = md.parse_note(path, markdown)
    keys = (link_rules.stored_key(link.target, path) for link in parsed.links)
    refs = {key: LinkRef(target_key=key, has_folder="/" in key) for key in keys if key}
    return PutNote(
        path=path,
        markdown=markdown,
        title=parsed.title,
        tags=parsed.tags,
        links=tuple(refs.values()),
        sha256=sha256_text(markdown),
        expected_version=expected_version,
    )


def _refuse_if_screened(verdict: ScreeningVerdict, field: str) -> None:
    if not verdict.allowed:
        raise Unprocessable(
            verdict.reason or "the text was refused by write screening",
            code="write_screened",
            rule=verdict.rule,
            field=field,
        )


def _check_junction(base: str, text: str) -> None:
    """Screen where a model's append meets the note (an injection split over two
    appends), unless the note's own end is what the screen refuses: that is the text of
    whoever wrote it, screened (or not) when it was written."""
    tail = base[-SCREEN_JUNCTION_CHARS:]
    joined = screen_text(tail + text[:SCREEN_JUNCTION_CHARS])
    if not joined.allowed and screen_text(tail).allowed:
        _refuse_if_screened(joined, "text")


class VaultService:
    def __init__(
        self,
        store: VaultStorage,
        index: SearchIndex,
        budgets: BudgetGuard,
        clock: Callable[[], float],
        semantic: SemanticSearch | None = None,
        vectors: VectorSync | None = None,
        *,
        search_mode: str = "auto",
        files: AttachmentStore | None = None,
    ) -> None:
        # MEMVAULT_SEARCH_MODE: "auto" or a mode (see default_mode).
        self.search_mode = None if search_mode == "auto" else parse_mode(search_mode)
        self.store = store
        self.index = index
        self.budgets = budgets
        self.clock = clock
        self.hybrid = HybridSearch(store, index, semantic, clock)
        # The organisation's default mode and min_score (services.search_defaults).
        self.search_defaults = SearchDefaultsReader(store)
        self.links = LinkGraph(store, files)  # files: links reach attachments too
        self.vectors = vectors
        self.indexing = IndexSync(store, index, self.links, vectors)

    # ------------------------------------------------------------------ reads
    def read(self, caller: Caller, path: str) -> Note:
        norm = paths.lookup_path(path)
        note = self.store.get_note(caller.account_id, norm)
        if note is None:
            raise NotFound(f"no note at {norm!r}", code="note_not_found")
        return note

    def read_many(self, caller: Caller, note_paths: Sequence[str]) -> list[Note]:
        """The live notes at these paths (under any case), in the order asked, each once;
        paths with no live note (deleted or moved since they were found, say) are left
        out."""
        wanted = list(dict.fromkeys(paths.lookup_path(p) for p in note_paths))
        found = self.store.get_notes(caller.account_id, wanted) if wanted else {}
        by_key = {paths.path_key(note.path): note for note in found.values()}
        keys = dict.fromkeys(paths.path_key(p) for p in wanted)
        return [by_key[key] for key in keys if key in by_key]

    def list_notes(
        self,
        caller: Caller,
        *,
        folder: str = "",
        tag: str | None = None,
        cursor: str | None = None,
        limit: int = 100,
    ) -> Page:
        if not 1 <= limit <= MAX_PAGE:
            raise InvalidInput(f"limit must be between 1 and {MAX_PAGE}", code="invalid_limit")
        check_length("the tag filter", tag, MAX_TAG_CHARS)
        check_length("the cursor", cursor, MAX_CURSOR_CHARS)
        return self.store.list_notes(
            caller.account_id,
            folder=paths.lookup_folder(folder),
            tag=tag or None,
            cursor=cursor,
            limit=limit,
        )

    def recent(self, caller: Caller, limit: int = 10) -> list[NoteSummary]:
        if not 1 <= limit <= MAX_PAGE:
            raise InvalidInput(f"limit must be between 1 and {MAX_PAGE}", code="invalid_limit")
        return self.store.recent_notes(caller.account_id, limit=limit)

    def tags(self, caller: Caller) -> dict[str, int]:
        return self.store.tag_counts(caller.account_id)

    def search(
        self,
        caller: Caller,
        text: str,
        *,
        folder: str = "",
        tag: str | None = None,
        limit: int = 10,
        charge: bool = True,
        snippets: bool = True,
        skip_common_terms: bool = False,
        mode: str | None = None,
        min_score: float | None = None,
        keyword_limit: int | None = None,
    ) -> list[SearchHit]:
        """The hits of ``search_outcome``, without saying which mode ran."""
        return self.search_outcome(
            caller,
            text,
            folder=folder,
            tag=tag,
            limit=limit,
            charge=charge,
            snippets=snippets,
            skip_common_terms=skip_common_terms,
            mode=mode,
            min_score=min_score,
            keyword_limit=keyword_limit,
        ).hits

    def default_mode(self) -> SearchMode:
        """The mode a search runs in when none is asked: MEMVAULT_SEARCH_MODE, else
        (auto) hybrid when vectors are on and keyword when they are off. A semantic or
        hybrid default still falls back to keyword, saying why, where vectors cannot
        answer."""
        if self.search_mode is not None:
            return self.search_mode
        return SearchMode.HYBRID if self.hybrid.vectors_on else SearchMode.KEYWORD

    def search_outcome(
        self,
        caller: Caller,
        text: str,
        *,
        folder: str = "",
        tag: str | None = None,
        limit: int = 10,
        charge: bool = True,
        snippets: bool = True,
        skip_common_terms: bool = False,
        mode: str | None = None,
        min_score: float | None = None,
        keyword_limit: int | None = None,
    ) -> SearchOutcome:
        """Ranked search in ``mode`` (keyword, semantic or hybrid; None: the
        organisation's default, else the deployment's), hits under ``min_score`` dropped
        (None: the organisation's, else semantic and hybrid DEFAULT_MIN_SCORE and keyword
        none), with the mode that ran (services.hybrid; ``keyword_limit``: the depth of a
        hybrid search's keyword half, HybridSearch.run)."""
        requested = parse_mode(mode) if mode is not None else None
        if min_score is not None and not 0.0 <= min_score <= 1.0:
            raise InvalidInput(
                f"min_score must be between 0 and 1, not {min_score}",
                code="invalid_input",
                field="min_score",
            )
        if not 1 <= limit <= MAX_SEARCH_LIMIT:
            raise InvalidInput(
                f"limit must be between 1 and {MAX_SEARCH_LIMIT}", code="invalid_limit"
            )
        check_length("the search text", text, MAX_QUERY_CHARS)
        check_length("the tag filter", tag, MAX_TAG_CHARS)
        if not text.strip():
            raise InvalidInput("the search text is empty", code="empty_query")
        query = SearchQuery(
            text=text,
            folder=paths.lookup_folder(folder),
            tag=tag,
            limit=limit,
            snippets=snippets,
            skip_common_terms=skip_common_terms,
        )
        if charge:
            self.budgets.charge(caller.account_id, Bucket.SEARCHES)
        asked, min_score = self.search_defaults.resolve(
            caller.account_id, requested, min_score, self.default_mode
        )
        return self.hybrid.run(
            caller.account_id, query, mode=asked, min_score=min_score, keyword_limit=keyword_limit
        )

    def backlinks(self, caller: Caller, path: str) -> list[NoteSummary]:
        target = self.read(caller, path)
        sources = self.links.sources(caller.account_id, [target.path])[target.path]
        return self.store.get_summaries(caller.account_id, sources)

    def outgoing(self, caller: Caller, path: str) -> list[tuple[md.WikiLink, str | None]]:
        """The note's links as written, each with the note or attachment it resolves to
        now (None: dangling), by the rules backlinks use (domain.links)."""
        note = self.read(caller, path)
        return self.links.outgoing(caller.account_id, note.path, note.markdown)

    # ------------------------------------------------------------------ versions
    def versions(self, caller: Caller, path: str) -> list[VersionInfo]:
        norm = paths.lookup_path(path)
        found = self.store.list_versions(caller.account_id, norm)
        if not found:
            raise NotFound(f"no note or history at {norm!r}", code="note_not_found")
        return found

    def version(self, caller: Caller, path: str, version: int) -> NoteVersion:
        norm = paths.lookup_path(path)
        found = None
        if 1 <= version <= MAX_VERSION:  # storage integers are 64-bit; never ask past that
            found = self.store.get_version(caller.account_id, norm, version)
        if found is None:
            raise NotFound(f"{norm!r} has no kept version {version}", code="version_not_found")
        return found

    # ------------------------------------------------------------------ writes
    def write(
        self, caller: Caller, path: str, markdown: str, *, expected_version: int | None = None
    ) -> WriteOutcome:
        norm = paths.normalize_path(path)
        self._check_path(caller, norm)
        self._check_content(caller, norm, markdown)
        self.budgets.charge(caller.account_id, Bucket.WRITES)
        return self._put(caller, build_put(norm, markdown, expected_version))

    def append(
        self, caller: Caller, path: str, text: str, *, expected_version: int | None = None
    ) -> WriteOutcome:
        """Add ``text`` at the end of the note (created when missing), on its own line."""
        norm = paths.normalize_path(path)
        if not text:
            raise InvalidInput("there is nothing to append", code="empty_append")
        self._check_path(caller, norm)
        self._check_content(caller, norm, text)
        self.budgets.charge(caller.account_id, Bucket.WRITES)
        # Each attempt is pinned to the version it read, so a concurrent writer can never
        # be overwritten. Unpinned appends commute, so they re-read and retry instead of
        # surfacing the race; a pinned one reports it (409).
        attempts = 1 if expected_version is not None else APPEND_ATTEMPTS
        for attempt in range(attempts):
            current = self.store.get_note(caller.account_id, norm)
            target = current.path if current else norm  # the note's own spelling
            base = current.markdown if current else ""
            if base and not base.endswith("\n"):
                base += "\n"
            markdown = base + text
            check_note_size(target, markdown)
            if caller.is_model and base:
                _check_junction(base, text)
            pinned = expected_version
            if pinned is None:
                pinned = current.version if current else 0
            try:
                return self._put(caller, build_put(target, markdown, pinned))
            except Conflict as exc:
                if exc.code != "version_conflict" or attempt == attempts - 1:
                    raise
        raise AssertionError("unreachable")

    def restore(
        self, caller: Caller, path: str, version: int, *, expected_version: int | None = None
    ) -> WriteOutcome:
        """Make a kept version current again; this is itself a new version (of the live
        note, or of the deleted one, which comes back with its history)."""
        norm = paths.normalize_path(path)
        old = self.version(caller, norm, version)
        target = self._stored_spelling(caller.account_id, norm)
        self.budgets.charge(caller.account_id, Bucket.WRITES)
        return self._put(caller, build_put(target, old.markdown, expected_version))

    def _stored_spelling(self, account_id: str, norm: str) -> str:
        """How storage spells the note ``norm`` names under any case: the live note's
        path, else the path of the one deleted last (a put there revives it), else
        ``norm``."""
        key = paths.path_key(norm)
        live = self.store.live_paths(account_id, [key]).get(key)
        if live is not None:
            return live
        deleted = self.store.get_note(account_id, norm, include_deleted=True)
        return deleted.path if deleted is not None else norm

    def delete(self, caller: Caller, path: str, *, expected_version: int | None = None) -> None:
        norm = paths.lookup_path(path)
        self.budgets.charge(caller.account_id, Bucket.WRITES)
        try:
            self.commit(caller, [DeleteNote(path=norm, expected_version=expected_version)])
        except NotFound:
            # Asked under another case than it is stored: delete it under its own
            # spelling. Trying the path as asked first spares the usual delete a read.
            key = paths.path_key(norm)
            stored = self.store.live_paths(caller.account_id, [key]).get(key)
            if stored is None or stored == norm:
                raise
            self.commit(caller, [DeleteNote(path=stored, expected_version=expected_version)])

    def purge(self, caller: Caller, path: str) -> None:
        norm = paths.lookup_path(path)
        live = self.store.get_note(caller.account_id, norm)
        if live is not None:
            raise Conflict(
                f"{live.path!r} is a live note; delete it before purging its history",
                code="note_is_live",
            )
        if not self.store.purge_note(caller.account_id, norm):
            raise NotFound(f"no deleted note at {norm!r}", code="note_not_found")

    def move(
        self,
        caller: Caller,
        path: str,
        new_path: str,
        *,
        expected_version: int | None = None,
    ) -> Note:
        """Move a note and rewrite every link that pointed at it, in one atomic commit."""
        old = paths.lookup_path(path)
        new = paths.normalize_path(new_path)
        self._check_path(caller, new)
        self.budgets.charge(caller.account_id, Bucket.WRITES)
        account = caller.account_id
        note = self.store.get_note(account, old)
        if note is None:
            raise NotFound(f"no note at {old!r}", code="note_not_found")
        old = note.path  # the note's own spelling, whatever case it was asked under
        if old == new:
            return note
        # The notes that link to it, and the note itself (its own relative links).
        involved = {old: note}
        for source_path in sorted(self.links.sources(account, [old])[old] - {old}):
            source = self.store.get_note(account, source_path)
            if source is not None:
                involved[source_path] = source
        rewrites = self.links.move_rewrites(
            account, old, new, {p: n.markdown for p, n in involved.items()}
        )
        # A link whose key depends on the note's folder ([[./b]], [[../x]]) and that the
        # rewrite leaves as written (it is dangling, or still reaches its target) is
        # stored again under the key of the new folder.
        relinked = None
        if old not in rewrites:
            after = build_put(new, note.markdown).links
            if set(after) != set(build_put(old, note.markdown).links):
                relinked = after
        changes: list[NoteChange] = [
            MoveNote(path=old, new_path=new, expected_version=expected_version, links=relinked)
        ]
        for source_path in sorted(rewrites):
            rewritten = rewrites[source_path]
            target_path = new if source_path == old else source_path
            check_note_size(target_path, rewritten)
            changes.append(build_put(target_path, rewritten, involved[source_path].version))
        result = self.commit(caller, changes)
        # The note as it ended up at ``new``: rewritten (if it linked to itself) or moved.
        moved = next(n for n in reversed(result) if n is not None and n.path == new)
        return moved

    # ------------------------------------------------------------------ the commit path
    def commit(self, caller: Caller, changes: Sequence[NoteChange]) -> list[Note | None]:
        """Apply changes atomically, then bring search and link counts up to date."""
        return self._commit(caller.account_id, changes).notes

    def _commit(self, account_id: str, changes: Sequence[NoteChange]) -> CommitResult:
        result = self.store.commit(account_id, changes, now=self.clock())
        self.indexing.after_commit(account_id, changes, result)
        return result

    def _put(self, caller: Caller, change: PutNote) -> WriteOutcome:
        result = self._commit(caller.account_id, [change])
        note, previous = result.notes[0], result.previous[0]
        assert note is not None
        return WriteOutcome(
            note=note,
            changed=previous is None or previous.version != note.version,
            created=previous is None,
        )

    def _check_content(self, caller: Caller, path: str, markdown: str) -> None:
        check_unicode(markdown)
        check_note_size(path, markdown)
        if caller.is_model:
            _refuse_if_screened(screen_text(markdown), "text")

    def _check_path(self, caller: Caller, path: str) -> None:
        """A model's note path comes back in recall (``<note path="...">``): screened too."""
        if caller.is_model:
            _refuse_if_screened(screen_path(path), "path")

    def reindex(self, account_id: str, *, vectors: bool = False) -> int:
        """Rebuild the account's search index from storage (``vectors``: re-embed every
        note too). Returns notes indexed."""
        return self.indexing.reindex(account_id, vectors=vectors)

    def vector_status(self, caller: Caller, path: str) -> VectorStatus:
        """Whether the note at ``path`` is searchable by meaning yet: "indexed", "pending"
        (its vectors wait in the outbox, or are of an older model) or "off"."""
        if self.vectors is None:
            return "off"
        note = self.read(caller, path)
        return self.vectors.note_status(caller.account_id, note.path)
