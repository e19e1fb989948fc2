"""The vault's link graph: which notes link to which, resolved by domain.links' rules.

Storage keeps raw link targets (what each note's [[links]] say); resolution against the
vault's current notes happens here, in one place, for every backend.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from memvault.domain import links as link_rules
from memvault.domain import paths
from memvault.domain.models import BacklinkSource
from memvault.ports import LinkedNotes

Resolver = Callable[[BacklinkSource], str | None]


class LinkGraph:
    def __init__(self, store: LinkedNotes) -> None:
        self.store = store

    def resolver(self, account_id: str, target_keys: Collection[str]) -> Resolver:
        """Resolves links with these target keys against the vault as it is now."""
        live = self.store.live_paths(account_id, [key + ".md" for key in target_keys])
        live_by_link_key = {path_key[: -len(".md")]: path for path_key, path in live.items()}
        by_name = self.store.paths_by_name(account_id, target_keys)

        def resolve(link: BacklinkSource) -> str | None:
            return link_rules.resolve(link.target_key, link.has_folder, live_by_link_key, by_name)

        return resolve

    def sources(self, account_id: str, targets: Collection[str]) -> dict[str, set[str]]:
        """For each target path, the live notes whose links resolve to it."""
        keys: set[str] = set()
        for target in targets:
            keys.update(link_rules.keys_pointing_at(target))
        links = self.store.links_to(account_id, keys)
        resolve = self.resolver(account_id, {link.target_key for link in links})
        found: dict[str, set[str]] = {t: set() for t in targets}
        for link in links:
            resolved = resolve(link)
            if resolved in found:
                found[resolved].add(link.source_path)
        return found

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

    def link_text_for(self, account_id: str, old: str, new: str) -> str:
        """The shortest link text that will resolve to ``new`` once ``old`` moves there."""
        name = paths.name_key(new)
        others = [p for p in self.store.paths_by_name(account_id, [name]).get(name, []) if p != old]
        if paths.folder(new) == "" or not others:
            return paths.stem(new)
        return new[: -len(".md")]
