"""Accounts (organisations) and API keys: creation, authentication, toggles, revocation.

A key's secret is shown once, when it is made, and stored only as a SHA-256 hash
(keys are 256-bit random, so a fast hash is enough: there is nothing to brute-force).

These are the trusted operations (first start, ``memvault bootstrap`` and ``orgs
create``, tests); what a person may do with keys is decided in ``services.keys`` through
``domain.policy``. Every key belongs to a member: one issued without ``member_id`` goes
to the organisation's first owner, made when it has none (the upgrade of an account made
before members existed does the same with the keys it had).
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from memvault.domain.identity import FOUNDER_NAME, Member, Role, founder_id
from memvault.domain.models import Account, ApiKey, KeySettings, Limits, Toggles
from memvault.domain.response_cache import MAX_TTL_SECONDS, MIN_TTL_SECONDS
from memvault.errors import Conflict, InvalidInput, NotFound, Unauthenticated
from memvault.ports import AccountDirectory

KEY_PREFIX = "mvk_"
LOCAL_ACCOUNT_ID = "local"
MAX_KEY_NAME = 100
# The largest value a limit may take: every storage integer (and a JSON number) holds it.
MAX_LIMIT_VALUE = 2**53
# Gateway settings' ranges (recall: notes put ahead of the message, and their token budget).
RECALL_NOTES_RANGE = (1, 20)
RECALL_TOKENS_RANGE = (100, 32_000)


# A key's recall search mode: None is the vault's default (services.vault.default_mode).
RECALL_MODES = (None, "keyword", "semantic", "hybrid")


def check_key_settings(settings: KeySettings) -> KeySettings:
    """Refuse out-of-range gateway settings with a message naming the range."""
    low, high = RECALL_NOTES_RANGE
    if not low <= settings.recall_notes <= high:
        raise InvalidInput(
            f"recall_notes must be between {low} and {high}", code="invalid_key_settings"
        )
    low, high = RECALL_TOKENS_RANGE
    if not low <= settings.recall_tokens <= high:
        raise InvalidInput(
            f"recall_tokens must be between {low} and {high}", code="invalid_key_settings"
        )
    if not low <= settings.memory_tokens <= high:
        raise InvalidInput(
            f"memory_tokens must be between {low} and {high}", code="invalid_key_settings"
        )
    ttl = settings.cache_ttl_seconds
    if ttl is not None and not MIN_TTL_SECONDS <= ttl <= MAX_TTL_SECONDS:
        raise InvalidInput(
            f"cache_ttl_seconds must be between {MIN_TTL_SECONDS} and {MAX_TTL_SECONDS}",
            code="invalid_key_settings",
        )
    if settings.recall_mode not in RECALL_MODES:
        raise InvalidInput(
            "recall_mode must be keyword, semantic, hybrid or null (the vault's default)",
            code="invalid_key_settings",
        )
    cap = settings.spend_cap_micros
    if cap is not None and not 0 <= cap <= MAX_LIMIT_VALUE:
        raise InvalidInput(
            f"spend_cap_micros must be null (no cap) or between 0 and {MAX_LIMIT_VALUE}",
            code="invalid_key_settings",
        )
    return settings


def hash_key(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def new_secret() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


@dataclass(frozen=True, slots=True)
class IssuedKey:
    key: ApiKey
    secret: str  # shown to the user once; never stored


class AccountService:
    def __init__(self, store: AccountDirectory, clock: Callable[[], float]) -> None:
        self.store = store
        self.clock = clock

    def create_account(
        self, name: str, *, account_id: str | None = None, limits: Limits | None = None
    ) -> Account:
        account = Account(
            id=account_id or uuid.uuid4().hex,
            name=name,
            created_at=self.clock(),
            limits=limits or Limits(),
        )
        self.store.create_account(account)
        return account

    def bootstrap_local(self) -> IssuedKey | None:
        """Create the embedded install's organisation, its owner and their admin key on
        first start.

        Returns the admin key the first time (to print once), None ever after. The owner
        has no password yet: they sign in with the key (POST /v1/sessions) and set one.
        """
        if self.store.get_account(LOCAL_ACCOUNT_ID) is not None:
            return None
        self.create_account("local", account_id=LOCAL_ACCOUNT_ID)
        return self.issue_key(
            LOCAL_ACCOUNT_ID,
            name="admin",
            toggles=Toggles(recall=True, tools=True, mcp=True),
            admin=True,
        )

    def founding_owner(self, account_id: str) -> Member:
        """The organisation's first active owner, made (with no address) when it has none.

        Its id is derived from the organisation's, so two processes doing this at once
        make one member."""
        owners = [
            m for m in self.store.list_members(account_id) if m.role is Role.OWNER and m.active
        ]
        if owners:
            return owners[0]
        account = self.get_account(account_id)
        founder = Member(
            id=founder_id(account_id),
            account_id=account_id,
            email=None,
            name=FOUNDER_NAME,
            role=Role.OWNER,
            created_at=account.created_at,
        )
        try:
            self.store.create_member(founder)
        except Conflict:
            existing = self.store.get_member(account_id, founder.id)
            if existing is None:
                raise
            return existing
        return founder

    def upgrade(self, account_id: str) -> int:
        """Give the organisation's keys that have no owner (stored before members existed)
        to its first owner, toggles kept; how many. Idempotent."""
        orphans = [k.id for k in self.store.list_keys(account_id) if k.member_id is None]
        if orphans:
            self.store.give_keys(account_id, self.founding_owner(account_id).id, orphans)
        return len(orphans)

    def issue_key(
        self,
        account_id: str,
        *,
        name: str,
        toggles: Toggles,
        admin: bool = False,
        settings: KeySettings | None = None,
        member_id: str | None = None,
        vault: bool = True,
    ) -> IssuedKey:
        """A new key of ``member_id`` (default: the organisation's first owner)."""
        settings = check_key_settings(settings or KeySettings())
        name = name.strip()
        if not name or len(name) > MAX_KEY_NAME:
            raise InvalidInput(
                f"a key name must be 1 to {MAX_KEY_NAME} characters", code="invalid_key_name"
            )
        if any(not ch.isprintable() for ch in name):
            raise InvalidInput(
                "a key name may not contain control characters", code="invalid_key_name"
            )
        if self.store.get_account(account_id) is None:
            raise NotFound(f"no account {account_id!r}", code="account_not_found")
        if member_id is None:
            member_id = self.founding_owner(account_id).id
        else:
            owner = self.store.get_member(account_id, member_id)
            if owner is None or not owner.active:
                raise NotFound(
                    f"no active member {member_id!r} in this organisation",
                    code="member_not_found",
                )
        secret = new_secret()
        key = ApiKey(
            id=uuid.uuid4().hex[:16],
            account_id=account_id,
            name=name,
            prefix=secret[: len(KEY_PREFIX) + 6],
            toggles=toggles,
            admin=admin,
            created_at=self.clock(),
            recall_notes=settings.recall_notes,
            recall_tokens=settings.recall_tokens,
            spend_cap_micros=settings.spend_cap_micros,
            memory_tokens=settings.memory_tokens,
            recall_mode=settings.recall_mode,
            cache_ttl_seconds=settings.cache_ttl_seconds,
            member_id=member_id,
            vault=vault,
        )
        self.store.put_key(key, hash_key(secret))
        return IssuedKey(key=key, secret=secret)

    def authenticate(self, secret: str | None) -> ApiKey:
        if not secret:
            raise Unauthenticated(
                "an API key is required (Authorization: Bearer <key>)", code="missing_api_key"
            )
        key = self.store.key_by_hash(hash_key(secret.strip()))
        if key is None:
            raise Unauthenticated("the API key is not valid", code="invalid_api_key")
        if not key.active:
            raise Unauthenticated("the API key has been revoked", code="revoked_api_key")
        if not key.owner_active:
            raise Unauthenticated(
                "the API key's owner is disabled or no longer a member", code="member_disabled"
            )
        if key.member_id is None and self.store.get_account(key.account_id) is not None:
            # Stored before members existed: the upgrade gives it to the first owner.
            self.upgrade(key.account_id)
            key = self.store.key_by_hash(hash_key(secret.strip())) or key
        return key

    def list_keys(self, account_id: str) -> list[ApiKey]:
        return self.store.list_keys(account_id)

    def get_key(self, account_id: str, key_id: str) -> ApiKey:
        key = self.store.get_key(account_id, key_id)
        if key is None:
            raise NotFound(f"no key {key_id!r} in this account", code="key_not_found")
        return key

    def set_toggles(self, account_id: str, key_id: str, toggles: Toggles) -> ApiKey:
        if not self.get_key(account_id, key_id).active:
            raise Conflict(
                "the key is revoked; its toggles can no longer change", code="key_revoked"
            )
        return self.store.update_key(account_id, key_id, toggles=toggles, revoked_at=None)

    def set_key_settings(self, account_id: str, key_id: str, settings: KeySettings) -> ApiKey:
        """Replace a key's gateway settings (recall sizes, spend cap)."""
        return self.update_key(account_id, key_id, settings=settings)

    def update_key(
        self,
        account_id: str,
        key_id: str,
        *,
        toggles: Toggles | None = None,
        settings: KeySettings | None = None,
    ) -> ApiKey:
        """Change a live key's toggles and gateway settings in one write (None keeps)."""
        if settings is not None:
            check_key_settings(settings)
        if not self.get_key(account_id, key_id).active:
            raise Conflict(
                "the key is revoked; its toggles and settings can no longer change",
                code="key_revoked",
            )
        return self.store.update_key(
            account_id, key_id, toggles=toggles, revoked_at=None, settings=settings
        )

    def revoke(self, account_id: str, key_id: str, *, owner_leaving: bool = False) -> ApiKey:
        """Revoke a key. Refused (last_admin_key) when no one could manage the
        organisation after it: no other active admin key of an active owner, and no
        active owner with a password to sign in with. ``owner_leaving``: the key's owner
        is being removed (the last-owner rule guards that instead)."""
        key = self.get_key(account_id, key_id)
        if key.admin and key.active and not owner_leaving:
            owners = {
                m.id: m
                for m in self.store.list_members(account_id)
                if m.role is Role.OWNER and m.active
            }
            if key.member_id in owners and not any(m.has_password for m in owners.values()):
                admins = [
                    k
                    for k in self.store.list_keys(account_id)
                    if k.admin and k.active and k.member_id in owners
                ]
                if len(admins) <= 1:
                    # Nothing could ever manage the organisation again. To rotate a
                    # leaked admin key, create a new admin key first, then revoke the old.
                    raise Conflict(
                        "this is the organisation's last admin key of an owner, and no owner"
                        " has a password; create another admin key (or set a password)"
                        " before revoking it",
                        code="last_admin_key",
                    )
        return self.store.update_key(account_id, key_id, toggles=None, revoked_at=self.clock())

    def set_limits(self, account_id: str, limits: Limits) -> Account:
        values = (limits.max_notes, limits.max_bytes, limits.max_files, limits.max_file_bytes)
        if any(not 1 <= value <= MAX_LIMIT_VALUE for value in values):
            raise InvalidInput(
                f"limits must be between 1 and {MAX_LIMIT_VALUE}", code="invalid_limits"
            )
        return self.store.set_limits(account_id, limits)

    def get_account(self, account_id: str) -> Account:
        account = self.store.get_account(account_id)
        if account is None:
            raise NotFound(f"no account {account_id!r}", code="account_not_found")
        return account
