"""The vault's link graph: which notes link to which, resolved by domain.links' rules.

Storage keeps each note's link keys (``domain.links.stored_key``: the targets as written,
folder-relative ones made absolute); resolution against the vault's current notes happens
here, in one place, for every backend. Because a link can resolve differently from two
notes (the linking note's own folder breaks ties), resolution always takes the source.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from memvault.domain import links as link_rules
from memvault.domain import markdown as md
from memvault.domain import paths
from memvault.domain.models import BacklinkSource
from memvault.ports import AttachmentStore, LinkedNotes

Resolver = Callable[[BacklinkSource], str | None]


@dataclass(frozen=True, slots=True)
class LinkTargets:
    """The live notes (and attachments) a set of link keys can reach, as
    ``domain.links`` reads them."""

    live_by_link_key: dict[str, str]
    paths_by_name_key: dict[str, list[str]]
    files_by_link_key: dict[str, str] = field(default_factory=dict)
    files_by_name_key: dict[str, list[str]] = field(default_factory=dict)
    # The link keys these were read for: ``LinkGraph.targets(known=...)`` reads only
    # what more keys need beyond them (one index update asks twice, for overlapping keys).
    keys: frozenset[str] = frozenset()

    def resolve(self, link: BacklinkSource) -> str | None:
        return link_rules.resolve(
            link.target_key,
            link.source_path,
            self.live_by_link_key,
            self.paths_by_name_key,
            self.files_by_link_key,
            self.files_by_name_key,
        )

    def candidates(self, key: str) -> list[str]:
        return link_rules.candidates(key, self.live_by_link_key, self.paths_by_name_key)

    def moved(self, old: str, new: str) -> LinkTargets:
        """These targets once the note at ``old`` is at ``new``."""
        live = {k: p for k, p in self.live_by_link_key.items() if p != old}
        live[paths.link_key(new)] = new
        by_name = {n: [p for p in ps if p != old] for n, ps in self.paths_by_name_key.items()}
        by_name.setdefault(paths.name_key(new), []).append(new)
        return LinkTargets(live, by_name, self.files_by_link_key, self.files_by_name_key, self.keys)

    def link_text(self, target: str) -> str:
        if not target.endswith(paths.NOTE_SUFFIX):  # an attachment, among attachments
            return link_rules.link_text(target, self.files_by_link_key, self.files_by_name_key)
        return link_rules.link_text(target, self.live_by_link_key, self.paths_by_name_key)


class LinkGraph:
    def __init__(self, store: LinkedNotes, files: AttachmentStore | None = None) -> None:
        self.store = store
        # The vault's attachments, which links resolve to first (domain.links); None on
        # a service built without them (links then reach notes only).
        self.files = files

    def targets(
        self, account_id: str, keys: Collection[str], *, known: LinkTargets | None = None
    ) -> LinkTargets:
        """What links with these keys can resolve to, in the vault as it is now.

        ``known``: targets read moments ago in the same piece of work (the vault as it
        is now too); only what these keys need beyond its keys is read, and the two are
        returned as one."""
        asked = frozenset(keys) | (known.keys if known is not None else frozenset())
        if known is not None:
            keys = [k for k in keys if k not in known.keys]
        exact = {k.removeprefix(link_rules.EXACT) for k in keys}
        names = {link_rules.name_of(k) for k in keys}
        file_keys = [k for k in keys if link_rules.may_name_file(k)]
        file_exact = {k.removeprefix(link_rules.EXACT) for k in file_keys}
        file_names = {link_rules.name_of(k) for k in file_keys}
        targets = LinkTargets({}, {}, keys=asked)
        if known is not None:
            targets.live_by_link_key.update(known.live_by_link_key)
            targets.paths_by_name_key.update(known.paths_by_name_key)
            targets.files_by_link_key.update(known.files_by_link_key)
            targets.files_by_name_key.update(known.files_by_name_key)
            known_exact = {k.removeprefix(link_rules.EXACT) for k in known.keys}
            known_files = [k for k in known.keys if link_rules.may_name_file(k)]
            exact -= known_exact
            names -= {link_rules.name_of(k) for k in known.keys}
            file_exact -= {k.removeprefix(link_rules.EXACT) for k in known_files}
            file_names -= {link_rules.name_of(k) for k in known_files}
        if exact:
            live = self.store.live_paths(account_id, [key + paths.NOTE_SUFFIX for key in exact])
            targets.live_by_link_key.update(
                {path_key[: -len(paths.NOTE_SUFFIX)]: p for path_key, p in live.items()}
            )
        if names:
            targets.paths_by_name_key.update(self.store.paths_by_name(account_id, names))
        if self.files is not None and file_exact:
            targets.files_by_link_key.update(self.files.files_by_link_key(account_id, file_exact))
        if self.files is not None and file_names:
            targets.files_by_name_key.update(self.files.files_by_name(account_id, file_names))
        return targets

    def resolver(
        self, account_id: str, target_keys: Collection[str], *, known: LinkTargets | None = None
    ) -> Resolver:
        """Resolves links with these target keys against the vault as it is now."""
        return self.targets(account_id, target_keys, known=known).resolve

    def outgoing(
        self, account_id: str, source_path: str, markdown: str
    ) -> list[tuple[md.WikiLink, str | None]]:
        """Each link written in the note at ``source_path`` (every form, in the order
        written) with the path it resolves to in the vault as it is now, None when it
        dangles: what the note's reader needs to follow its links without the whole
        vault's list."""
        found = [
            (link, link_rules.stored_key(link.target, source_path))
            for link in md.parse_note(source_path, markdown).links
        ]
        keys = {key for _, key in found if key}
        if not keys:
            return [(link, None) for link, _ in found]
        targets = self.targets(account_id, keys)
        return [
            (link, targets.resolve(BacklinkSource(source_path, key, "/" in key)) if key else None)
            for link, key in found
        ]

    def sources(
        self, account_id: str, targets: Collection[str], *, known: LinkTargets | None = None
    ) -> dict[str, set[str]]:
        """For each target path, the live notes whose links resolve to it (``known``: as
        for ``targets``)."""
        keys: set[str] = set()
        for target in targets:
            keys.update(link_rules.keys_pointing_at(target))
        links = self.store.links_to(account_id, keys)
        resolve = self.resolver(account_id, {link.target_key for link in links}, known=known)
        found: dict[str, set[str]] = {t: set() for t in targets}
        for link in links:
            resolved = resolve(link)
            if resolved in found:
                found[resolved].add(link.source_path)
        return found

    def inbound_counts_all(self, account_id: str) -> dict[str, int]:
        """Inbound link counts for every live note, in one pass over the vault's links."""
        live = {path_key: key.path for path_key, key in self.store.note_keys(account_id).items()}
        live_by_link_key = {k[: -len(paths.NOTE_SUFFIX)]: p for k, p in live.items()}
        by_name: dict[str, list[str]] = {}
        for path in live.values():
            by_name.setdefault(paths.name_key(path), []).append(path)
        counts = dict.fromkeys(live.values(), 0)
        seen: set[tuple[str, str]] = set()
        for link in self.store.all_links(account_id):
            target = link_rules.resolve(
                link.target_key, link.source_path, live_by_link_key, by_name
            )
            if target is not None and (link.source_path, target) not in seen:
                seen.add((link.source_path, target))
                counts[target] += 1
        return counts

    def link_text_for(self, account_id: str, old: str, new: str) -> str:
        """The shortest link text that names ``new`` unambiguously once the note at
        ``old`` has moved there (``old == new``: the note where it is)."""
        targets = self.targets(account_id, link_rules.keys_pointing_at(new))
        return targets.moved(old, new).link_text(new)

    def move_rewrites(
        self, account_id: str, old: str, new: str, markdown_by_path: dict[str, str]
    ) -> dict[str, str]:
        """The notes whose text must change when the note at ``old`` moves to ``new``, as
        path (before the move) -> rewritten markdown.

        ``markdown_by_path`` holds the notes that link to ``old`` and the moved note itself.
        A link that resolved to ``old`` is pointed at ``new``; in the moved note, a link
        whose resolution would change with its folder (``[[./b]]``, or a bare name whose
        tie-break was the old folder) is rewritten to keep its target. Each new link text
        is the shortest that resolves from its note, by the same rules as reading.
        """
        parsed = {
            path: [
                (link, link_rules.stored_key(link.target, path))
                for link in md.parse_note(path, text).links
            ]
            for path, text in markdown_by_path.items()
        }
        before = self.targets(account_id, {key for found in parsed.values() for _, key in found})
        wanted: dict[tuple[str, str], str] = {}  # (source, key) -> the path it must reach
        for path, found in parsed.items():
            for _, key in found:
                target = before.resolve(BacklinkSource(path, key, "/" in key))
                if target == old:
                    wanted[(path, key)] = new
                elif target is not None and path == old:
                    wanted[(path, key)] = target
        if not wanted:
            return {}
        after = self._after_move(account_id, old, new, set(wanted.values()), parsed)
        out: dict[str, str] = {}
        for path, text in markdown_by_path.items():
            source_after = new if path == old else path

            def retarget(
                link: md.WikiLink, path: str = path, source: str = source_after
            ) -> str | None:
                key = link_rules.stored_key(link.target, path)
                goal = wanted.get((path, key))
                if goal is None:
                    return None
                now = after.resolve(
                    BacklinkSource(source, link_rules.stored_key(link.target, source), False)
                )
                if now == goal:
                    return None  # the text as written still reaches its target
                if link.kind == "markdown" and "/" in link.target.lstrip("./"):
                    return goal.removesuffix(paths.NOTE_SUFFIX)  # a path-style link stays one
                return after.link_text(goal)

            rewritten = md.retarget_links(text, retarget)
            if rewritten != text:
                out[path] = rewritten
        return out

    def _after_move(
        self,
        account_id: str,
        old: str,
        new: str,
        goals: set[str],
        parsed: dict[str, list[tuple[md.WikiLink, str]]],
    ) -> LinkTargets:
        """The link targets as they will be once ``old`` is at ``new``."""
        keys: set[str] = set()
        for goal in goals:
            keys.update(link_rules.keys_pointing_at(goal))
        for path, found in parsed.items():
            source = new if path == old else path
            keys.update(link_rules.stored_key(link.target, source) for link, _ in found)
        return self.targets(account_id, keys).moved(old, new)
