"""API keys as people manage them: each one their own, owners and admins everyone's.

``AccountService`` holds the key operations themselves; this module decides, through
``domain.policy``, who may make, list, change and revoke which key, and records it in the
audit log. A spend cap is billing: only an owner sets or changes one.
"""

from __future__ import annotations

from memvault.domain.identity import AuditKind
from memvault.domain.models import ApiKey, KeySettings, Toggles
from memvault.domain.policy import Action, Target, allowed, require
from memvault.ports import AccountDirectory
from memvault.services.accounts import AccountService, IssuedKey
from memvault.services.audit import AuditService
from memvault.services.context import Caller


def target_of(key: ApiKey) -> Target:
    return Target(member_id=key.member_id, key_id=key.id)


class KeyService:
    def __init__(self, store: AccountDirectory, accounts: AccountService, audit: AuditService):
        self.store = store
        self.accounts = accounts
        self.audit = audit

    def list_keys(self, actor: Caller) -> list[ApiKey]:
        """Every key of the organisation for owners and admins; one's own for a member."""
        require(actor, Action.LIST_KEYS, Target(member_id=actor.member_id, key_id=actor.key_id))
        keys = self.store.list_keys(actor.account_id)
        if any(k.member_id is None for k in keys):
            self.accounts.upgrade(actor.account_id)
            keys = self.store.list_keys(actor.account_id)
        return [k for k in keys if allowed(actor, Action.LIST_KEYS, target_of(k))]

    def get_key(self, actor: Caller, key_id: str) -> ApiKey:
        key = self.accounts.get_key(actor.account_id, key_id)
        require(actor, Action.LIST_KEYS, target_of(key))
        return key

    def create_key(
        self,
        actor: Caller,
        *,
        name: str,
        toggles: Toggles,
        admin: bool = False,
        settings: KeySettings | None = None,
        vault: bool = True,
    ) -> IssuedKey:
        """A key of one's own (toggles within what one's role allows)."""
        require(actor, Action.CREATE_KEY, Target(member_id=actor.member_id))
        if settings is not None and settings.spend_cap_micros is not None:
            require(actor, Action.CHANGE_BILLING)
        issued = self.accounts.issue_key(
            actor.account_id,
            name=name,
            toggles=toggles,
            admin=admin,
            settings=settings,
            member_id=actor.member_id,
            vault=vault,
        )
        self.audit.record(
            actor.account_id,
            AuditKind.KEY_CREATED,
            actor=actor,
            target_id=issued.key.id,
            detail={"admin": str(admin).lower(), "vault": str(vault).lower()},
        )
        return issued

    def update_key(
        self,
        actor: Caller,
        key_id: str,
        *,
        toggles: Toggles | None = None,
        settings: KeySettings | None = None,
    ) -> ApiKey:
        key = self.accounts.get_key(actor.account_id, key_id)
        require(actor, Action.UPDATE_KEY, target_of(key))
        if settings is not None and settings.spend_cap_micros != key.spend_cap_micros:
            require(actor, Action.CHANGE_BILLING)
        return self.accounts.update_key(
            actor.account_id, key_id, toggles=toggles, settings=settings
        )

    def revoke_key(self, actor: Caller, key_id: str) -> ApiKey:
        key = self.accounts.get_key(actor.account_id, key_id)
        require(actor, Action.REVOKE_KEY, target_of(key))
        revoked = self.accounts.revoke(actor.account_id, key_id)
        if key.active:
            self.audit.record(
                actor.account_id, AuditKind.KEY_REVOKED, actor=actor, target_id=key_id
            )
        return revoked
