"""Who a request is: a Bearer key or a session cookie, resolved to one ``Caller``.

Both resolve to the same member, with their role as it is now (read on every request,
so a role change, a disable or a removal applies to the next request). A key acts with
its owner's role only when its admin toggle is on (``Caller.manage``); a session always
does. The inference routes and MCP take keys only and use ``AccountService.authenticate``
directly; this is for the management routes.
"""

from __future__ import annotations

from memvault.domain.models import ApiKey
from memvault.errors import PermissionDenied, Unauthenticated
from memvault.ports import MemberStore
from memvault.services.accounts import AccountService
from memvault.services.context import Caller, Surface
from memvault.services.sessions import SessionService


class CallerResolver:
    def __init__(
        self, accounts: AccountService, members: MemberStore, sessions: SessionService
    ) -> None:
        self.accounts = accounts
        self.members = members
        self.sessions = sessions

    def for_key(
        self, secret: str | None, *, surface: Surface = Surface.REST, client: str = ""
    ) -> tuple[Caller, ApiKey]:
        key = self.accounts.authenticate(secret)
        role = None
        if key.member_id is not None:
            member = self.members.get_member(key.account_id, key.member_id)
            if member is None or not member.active:
                raise Unauthenticated(
                    "the API key's owner is disabled or no longer a member",
                    code="member_disabled",
                )
            role = member.role
        caller = Caller(
            account_id=key.account_id,
            surface=surface,
            key_id=key.id,
            member_id=key.member_id,
            role=role,
            manage=key.admin,
            client=client,
        )
        return caller, key

    def for_session(
        self, secret: str, *, csrf_token: str | None, unsafe: bool, client: str = ""
    ) -> Caller:
        session, member = self.sessions.authenticate(secret)
        if unsafe:
            self.sessions.check_csrf(secret, csrf_token)
        return Caller(
            account_id=session.account_id,
            surface=Surface.REST,
            member_id=member.id,
            role=member.role,
            manage=True,
            session_id=session.id,
            client=client,
        )

    @staticmethod
    def require_manager(caller: Caller) -> None:
        """Refuse a vault key (no admin toggle) on a route only people use, before its
        body is read; the services decide the rest by role."""
        if not caller.manage:
            raise PermissionDenied(
                "this needs an admin key or a signed-in session; the key used can manage"
                " notes only",
                code="admin_required",
            )
