"""The vault's behaviour: every surface (REST, CLI, gateway tools, MCP) calls these.

Budgets, size limits, quotas and write screening are enforced here and nowhere else,
so they hold identically on every surface.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from memvault.domain import links as link_rules
from memvault.domain import markdown as md
from memvault.domain import paths
from memvault.domain.budgets import Bucket
from memvault.domain.models import (
    MAX_NOTE_BYTES,
    BacklinkSource,
    DeleteNote,
    LinkRef,
    MoveNote,
    Note,
    NoteChange,
    NoteSummary,
    NoteVersion,
    PutNote,
    SearchDoc,
    SearchHit,
    SearchQuery,
    VersionInfo,
)
from memvault.domain.screening import screen_text
from memvault.errors import Conflict, InvalidInput, NotFound, TooLarge, Unprocessable
from memvault.ports import CommitResult, Page, SearchIndex, VaultStore
from memvault.services.budgets import BudgetGuard
from memvault.services.context import Caller

log = logging.getLogger("memvault.vault")

MAX_PAGE = 500
MAX_SEARCH_LIMIT = 100
# Past this many changed notes in one commit, inbound link counts are recomputed for
# the whole vault in one pass instead of note by note.
BULK_RELINK_THRESHOLD = 200
# An unpinned append re-reads and retries this often when another writer got in first.
APPEND_ATTEMPTS = 20


@dataclass(frozen=True, slots=True)
class WriteOutcome:
    note: Note
    changed: bool  # False when the markdown was identical and no version was made


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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
    refs = {
        link.target_key: LinkRef(target_key=link.target_key, has_folder=link.has_folder)
        for link in parsed.links
        if link.target_key
    }
    return PutNote(
        path=path,
        markdown=markdown,
        title=parsed.title,
        tags=parsed.tags,
        links=tuple(refs.values()),
        sha256=sha256_text(markdown),
        expected_version=expected_version,
    )


def search_doc(note: Note, inbound: int) -> SearchDoc:
    body = md.truncate_utf8(md.body_for_search(note.markdown), md.SEARCH_BODY_LIMIT_BYTES)
    return SearchDoc(
        note_id=note.id,
        path=note.path,
        title=note.title,
        tags=note.tags,
        body=body,
        updated_at=note.updated_at,
        inbound_links=inbound,
    )


class VaultService:
    def __init__(
        self,
        store: VaultStore,
        index: SearchIndex,
        budgets: BudgetGuard,
        clock: Callable[[], float],
    ) -> None:
        self.store = store
        self.index = index
        self.budgets = budgets
        self.clock = clock

    # ------------------------------------------------------------------ reads
    def read(self, caller: Caller, path: str) -> Note:
        norm = paths.normalize_path(path)
        note = self.store.get_note(caller.account_id, norm)
        if note is None:
            raise NotFound(f"no note at {norm!r}", code="note_not_found")
        return note

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
        return self.store.list_notes(
            caller.account_id,
            folder=paths.normalize_folder(folder),
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
    ) -> list[SearchHit]:
        if not 1 <= limit <= MAX_SEARCH_LIMIT:
            raise InvalidInput(
                f"limit must be between 1 and {MAX_SEARCH_LIMIT}", code="invalid_limit"
            )
        if not text.strip():
            raise InvalidInput("the search text is empty", code="empty_query")
        query = SearchQuery(text=text, folder=paths.normalize_folder(folder), tag=tag, limit=limit)
        if charge:
            self.budgets.charge(caller.account_id, Bucket.SEARCHES)
        return self.index.search(caller.account_id, query, now=self.clock())

    def backlinks(self, caller: Caller, path: str) -> list[NoteSummary]:
        target = self.read(caller, path)
        sources = self._backlink_sources(caller.account_id, [target.path])[target.path]
        return self.store.get_summaries(caller.account_id, sources)

    # ------------------------------------------------------------------ versions
    def versions(self, caller: Caller, path: str) -> list[VersionInfo]:
        norm = paths.normalize_path(path)
        found = self.store.list_versions(caller.account_id, norm)
        if not found:
            raise NotFound(f"no note or history at {norm!r}", code="note_not_found")
        return found

    def version(self, caller: Caller, path: str, version: int) -> NoteVersion:
        norm = paths.normalize_path(path)
        found = self.store.get_version(caller.account_id, norm, version)
        if found is None:
            raise NotFound(f"{norm!r} has no kept version {version}", code="version_not_found")
        return found

    # ------------------------------------------------------------------ writes
    def write(
        self, caller: Caller, path: str, markdown: str, *, expected_version: int | None = None
    ) -> WriteOutcome:
        norm = paths.normalize_path(path)
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
        self._check_content(caller, norm, text)
        self.budgets.charge(caller.account_id, Bucket.WRITES)
        # Each attempt is pinned to the version it read, so a concurrent writer can never
        # be overwritten. Unpinned appends commute, so they re-read and retry instead of
        # surfacing the race; a pinned one reports it (409).
        attempts = 1 if expected_version is not None else APPEND_ATTEMPTS
        for attempt in range(attempts):
            current = self.store.get_note(caller.account_id, norm)
            base = current.markdown if current else ""
            if base and not base.endswith("\n"):
                base += "\n"
            markdown = base + text
            check_note_size(norm, markdown)
            pinned = expected_version
            if pinned is None:
                pinned = current.version if current else 0
            try:
                return self._put(caller, build_put(norm, markdown, pinned))
            except Conflict as exc:
                if exc.code != "version_conflict" or attempt == attempts - 1:
                    raise
        raise AssertionError("unreachable")

    def restore(
        self, caller: Caller, path: str, version: int, *, expected_version: int | None = None
    ) -> WriteOutcome:
        """Make a kept version current again; this is itself a new version."""
        old = self.version(caller, path, version)
        norm = paths.normalize_path(path)
        self.budgets.charge(caller.account_id, Bucket.WRITES)
        return self._put(caller, build_put(norm, old.markdown, expected_version))

    def delete(self, caller: Caller, path: str, *, expected_version: int | None = None) -> None:
        norm = paths.normalize_path(path)
        self.budgets.charge(caller.account_id, Bucket.WRITES)
        self.commit(caller, [DeleteNote(path=norm, expected_version=expected_version)])

    def purge(self, caller: Caller, path: str) -> None:
        norm = paths.normalize_path(path)
        if self.store.get_note(caller.account_id, norm) is not None:
            raise InvalidInput(
                f"{norm!r} is a live note; delete it before purging its history",
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
        old = paths.normalize_path(path)
        new = paths.normalize_path(new_path)
        self.budgets.charge(caller.account_id, Bucket.WRITES)
        account = caller.account_id
        note = self.store.get_note(account, old)
        if note is None:
            raise NotFound(f"no note at {old!r}", code="note_not_found")
        if old == new:
            return note
        sources = self._backlink_sources(account, [old])[old]
        new_target = self._link_text_for(account, old, new)

        def points_at_old(link: md.WikiLink) -> bool:
            return link.target_key in paths_to_old

        paths_to_old = {paths.link_key(old), paths.name_key(old)}
        changes: list[NoteChange] = [
            MoveNote(path=old, new_path=new, expected_version=expected_version)
        ]
        for source_path in sorted(sources):
            source = note if source_path == old else self.store.get_note(account, source_path)
            if source is None:
                continue
            rewritten = md.rewrite_links(source.markdown, points_at_old, new_target)
            if rewritten == source.markdown:
                continue
            target_path = new if source_path == old else source_path
            check_note_size(target_path, rewritten)
            changes.append(build_put(target_path, rewritten, source.version))
        result = self.commit(caller, changes)
        moved = result[0]
        assert moved is not None
        return self.store.get_note(account, new) or moved

    # ------------------------------------------------------------------ the commit path
    def commit(self, caller: Caller, changes: Sequence[NoteChange]) -> list[Note | None]:
        """Apply changes atomically, then bring search and link counts up to date."""
        return self._commit(caller.account_id, changes).notes

    def _commit(self, account_id: str, changes: Sequence[NoteChange]) -> CommitResult:
        result = self.store.commit(account_id, changes, now=self.clock())
        self._after_commit(account_id, changes, result)
        return result

    def _put(self, caller: Caller, change: PutNote) -> WriteOutcome:
        result = self._commit(caller.account_id, [change])
        note, previous = result.notes[0], result.previous[0]
        assert note is not None
        return WriteOutcome(note=note, changed=previous is None or previous.version != note.version)

    def _check_content(self, caller: Caller, path: str, markdown: str) -> None:
        check_note_size(path, markdown)
        if caller.is_model:
            verdict = screen_text(markdown)
            if not verdict.allowed:
                raise Unprocessable(
                    verdict.reason or "the text was refused by write screening",
                    code="write_screened",
                    rule=verdict.rule,
                )

    # ------------------------------------------------------------------ links
    def _link_text_for(self, account_id: str, old: str, new: str) -> str:
        """The shortest link text that will resolve to ``new`` once the move is done."""
        name = paths.name_key(new)
        others = [p for p in self.store.paths_by_name(account_id, [name]).get(name, []) if p != old]
        at_root = paths.folder(new) == ""
        if at_root or not others:
            return paths.stem(new)
        return new[: -len(".md")]

    def _backlink_sources(self, account_id: str, targets: Collection[str]) -> dict[str, set[str]]:
        """For each target path, the live notes whose links resolve to it."""
        keys: set[str] = set()
        for target in targets:
            keys.update(link_rules.keys_pointing_at(target))
        links = self.store.links_to(account_id, keys)
        resolver = self._resolver(account_id, {link.target_key for link in links})
        found: dict[str, set[str]] = {t: set() for t in targets}
        for link in links:
            resolved = resolver(link)
            if resolved in found:
                found[resolved].add(link.source_path)
        return found

    def _resolver(
        self, account_id: str, target_keys: Collection[str]
    ) -> Callable[[BacklinkSource], str | None]:
        live = self.store.live_paths(account_id, [key + ".md" for key in target_keys])
        live_by_link_key = {path_key[: -len(".md")]: path for path_key, path in live.items()}
        by_name = self.store.paths_by_name(account_id, target_keys)

        def resolve(link: BacklinkSource) -> str | None:
            return link_rules.resolve(link.target_key, link.has_folder, live_by_link_key, by_name)

        return resolve

    def inbound_counts_all(self, account_id: str) -> dict[str, int]:
        """Inbound link counts for every live note, in one pass over the vault's links."""
        live = {path_key: key.path for path_key, key in self.store.note_keys(account_id).items()}
        live_by_link_key = {k[: -len(".md")]: p for k, p in live.items()}
        by_name: dict[str, list[str]] = {}
        for path in live.values():
            by_name.setdefault(paths.name_key(path), []).append(path)
        counts = dict.fromkeys(live.values(), 0)
        seen: set[tuple[str, str]] = set()
        for link in self.store.all_links(account_id):
            target = link_rules.resolve(link.target_key, link.has_folder, live_by_link_key, by_name)
            if target is not None and (link.source_path, target) not in seen:
                seen.add((link.source_path, target))
                counts[target] += 1
        return counts

    def _after_commit(
        self, account_id: str, changes: Sequence[NoteChange], result: CommitResult
    ) -> None:
        """Bring the search index and inbound link counts up to date with a commit.

        Storage is the source of truth and has already committed; a failing index must
        not undo or fail the write (``memvault reindex`` rebuilds it from storage).
        """
        try:
            self._reindex_changes(account_id, changes, result)
        except Exception:
            log.exception("search index update failed", extra={"account_id": account_id})

    def _reindex_changes(
        self, account_id: str, changes: Sequence[NoteChange], result: CommitResult
    ) -> None:
        removed = [c.path for c in changes if isinstance(c, (DeleteNote, MoveNote))]
        if removed:
            self.index.delete(account_id, removed)
        written = {n.path: n for n in result.notes if n is not None}
        if len(changes) > BULK_RELINK_THRESHOLD:
            counts = self.inbound_counts_all(account_id)
            self.index.upsert(
                account_id, [search_doc(n, counts.get(n.path, 0)) for n in written.values()]
            )
            self.index.set_inbound(
                account_id, {p: c for p, c in counts.items() if p not in written}
            )
            return
        # Targets whose inbound count may have moved: what the old and new versions of
        # each changed note linked to, and every note sharing a file name with one that
        # appeared or vanished (bare links to that name may have changed resolution).
        touched_keys: set[str] = set()
        touched_names: set[str] = set()
        for prior in result.previous:
            if prior is not None:
                touched_names.add(paths.name_key(prior.path))
                touched_keys.update(link.target_key for link in prior.links)
        for note in written.values():
            touched_names.add(paths.name_key(note.path))
            touched_keys.update(
                link.target_key for link in md.parse_note(note.path, note.markdown).links
            )
        for change in changes:
            if isinstance(change, MoveNote):
                touched_names.add(paths.name_key(change.new_path))
        resolver = self._resolver(account_id, touched_keys)
        affected: set[str] = set(written)
        for key in touched_keys:
            for has_folder in (False, True):
                target = resolver(BacklinkSource("", key, has_folder))
                if target is not None:
                    affected.add(target)
        for names in self.store.paths_by_name(account_id, touched_names).values():
            affected.update(names)
        sources = self._backlink_sources(account_id, affected)
        counts = {p: len(s) for p, s in sources.items()}
        self.index.upsert(
            account_id, [search_doc(n, counts.get(n.path, 0)) for n in written.values()]
        )
        self.index.set_inbound(account_id, {p: c for p, c in counts.items() if p not in written})

    def reindex(self, account_id: str) -> int:
        """Rebuild the account's search index from storage. Returns notes indexed."""
        counts = self.inbound_counts_all(account_id)
        self.index.clear(account_id)
        batch: list[SearchDoc] = []
        total = 0
        for note in self.store.iter_notes(account_id):
            batch.append(search_doc(note, counts.get(note.path, 0)))
            if len(batch) >= 500:
                self.index.upsert(account_id, batch)
                total += len(batch)
                batch = []
        self.index.upsert(account_id, batch)
        return total + len(batch)
