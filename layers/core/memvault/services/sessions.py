"""Signing in and out: server-side sessions behind an HttpOnly cookie, with CSRF tokens.

A person signs in with their address and password, or with an API key whose admin
toggle is on (a vault key cannot become a session: that would turn a key that may only
use the vault into a person with every right of their role). A session is revocable
(``SessionStore``), ends after ``idle_seconds`` without a request and ``max_seconds``
after sign-in whatever, and ends at once when its member is disabled or removed.

The cookie holds a random secret, stored only as its SHA-256 hash. The CSRF token is
derived from that secret (a keyed digest of it), so it needs no storage, the server can
check it on every unsafe request, and a page that cannot read the HttpOnly cookie
cannot make it (ADR 0020).

Sign-in attempts spend two token buckets, one per email address and one per client
address; every failure answers the same 401 ``invalid_credentials``, whether the address
is unknown, the password wrong, the member disabled or without a password, and an
unknown address still costs one password check, so the answer's time says nothing either.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import secrets
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from memvault.domain.identity import AuditKind, Member, Session, email_key
from memvault.domain.policy import Action, Target, require
from memvault.errors import (
    InvalidInput,
    NotFound,
    PermissionDenied,
    RateLimited,
    Unauthenticated,
)
from memvault.ports import IdentityStorage, PasswordHasher, RateLimiter
from memvault.services.accounts import AccountService, hash_key
from memvault.services.audit import AuditService
from memvault.services.context import Caller

log = logging.getLogger("memvault.sessions")

SESSION_PREFIX = "mvs_"
# The rate limiter's account for sign-in attempts (no organisation id starts with "!").
SIGN_IN_ACCOUNT = "!signin"
MAX_PASSWORD = 1024  # argon2 takes any length; this keeps a request from making it slow
MAX_USER_AGENT = 200
_CSRF_CONTEXT = b"memvault-csrf\x1f"


def csrf_token_for(secret: str) -> str:
    """The CSRF token of the session whose cookie holds ``secret``."""
    digest = hashlib.sha256(_CSRF_CONTEXT + secret.encode("utf-8")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()[:32]


def invalid_credentials() -> Unauthenticated:
    return Unauthenticated("the email address or password is not right", code="invalid_credentials")


def session_ended() -> Unauthenticated:
    return Unauthenticated("the session has ended; sign in again", code="session_expired")


@dataclass(frozen=True, slots=True)
class StartedSession:
    session: Session
    member: Member
    secret: str  # the cookie's value: given to the client once, never stored
    csrf_token: str


class SessionService:
    def __init__(
        self,
        store: IdentityStorage,
        accounts: AccountService,
        audit: AuditService,
        hasher: PasswordHasher,
        clock: Callable[[], float],
        *,
        email_attempts: RateLimiter,
        client_attempts: RateLimiter,
        idle_seconds: float,
        max_seconds: float,
    ) -> None:
        self.store = store
        self.accounts = accounts
        self.audit = audit
        self.hasher = hasher
        self.clock = clock
        self.email_attempts = email_attempts
        self.client_attempts = client_attempts
        self.idle_seconds = idle_seconds
        self.max_seconds = max_seconds
        # Activity is noted at most this often per session: a write per request is waste.
        self.touch_every = min(60.0, idle_seconds / 10)
        self._dummy_hash: str | None = None

    # ------------------------------------------------------------------ attempts
    def limit_attempts(self, *, client: str, email: str | None = None) -> None:
        """Spend one sign-in attempt of the client address (and of the email address)."""
        now = self.clock()
        checks = [(self.client_attempts, f"client:{_digest(client)}")]
        if email is not None:
            checks.append((self.email_attempts, f"email:{_digest(email_key(email))}"))
        for limiter, bucket in checks:
            decision = limiter.take(SIGN_IN_ACCOUNT, bucket, now=now)
            if not decision.allowed:
                wait = max(1, round(decision.retry_after))
                raise RateLimited(
                    f"too many sign-in attempts; retry in {wait} s",
                    retry_after=decision.retry_after,
                    code="sign_in_rate_limited",
                )

    def _dummy(self) -> str:
        if self._dummy_hash is None:
            self._dummy_hash = self.hasher.hash(secrets.token_urlsafe(16))
        return self._dummy_hash

    # ------------------------------------------------------------------ signing in
    def sign_in_password(
        self, email: str, password: str, *, client: str = "", user_agent: str = ""
    ) -> StartedSession:
        self.limit_attempts(client=client, email=email)
        member = self.store.member_by_email(email) if len(email) <= 254 else None
        stored = self.store.password_hash(member.account_id, member.id) if member else None
        # Always one check, against a throwaway hash when there is nothing to check.
        matches = self.hasher.verify(stored or self._dummy(), password[:MAX_PASSWORD])
        if member is None or stored is None or not matches or not member.active:
            if member is not None:
                self.audit.record(
                    member.account_id,
                    AuditKind.SIGN_IN_FAILED,
                    member_id=member.id,
                    detail={"method": "password"},
                    client=client,
                )
            log.info("sign-in refused", extra={"method": "password"})
            raise invalid_credentials()
        return self.start(member, "password", client=client, user_agent=user_agent)

    def sign_in_key(self, secret: str, *, client: str = "", user_agent: str = "") -> StartedSession:
        self.limit_attempts(client=client)
        key = self.accounts.authenticate(secret)
        if not key.admin:
            raise PermissionDenied(
                "only a key with its admin toggle on can sign in; this one may use the vault only",
                code="admin_required",
            )
        member = self.store.get_member(key.account_id, key.member_id) if key.member_id else None
        if member is None or not member.active:
            raise Unauthenticated(
                "the API key's owner is disabled or no longer a member", code="member_disabled"
            )
        return self.start(member, "api_key", client=client, user_agent=user_agent, key_id=key.id)

    def start(
        self,
        member: Member,
        method: str,
        *,
        client: str = "",
        user_agent: str = "",
        key_id: str | None = None,
    ) -> StartedSession:
        now = self.clock()
        secret = SESSION_PREFIX + secrets.token_urlsafe(32)
        session = Session(
            id=uuid.uuid4().hex,
            account_id=member.account_id,
            member_id=member.id,
            created_at=now,
            last_seen_at=now,
            expires_at=now + self.max_seconds,
            method=method,
            client=client[:64],
            user_agent=user_agent[:MAX_USER_AGENT],
        )
        self.store.put_session(session, hash_key(secret))
        detail = {"method": method} | ({"key_id": key_id} if key_id else {})
        self.audit.record(
            member.account_id,
            AuditKind.SIGN_IN,
            member_id=member.id,
            target_id=session.id,
            detail=detail,
            client=client,
        )
        return StartedSession(session, member, secret, csrf_token_for(secret))

    # ------------------------------------------------------------------ each request
    def authenticate(self, secret: str) -> tuple[Session, Member]:
        """The live session the cookie names, and its member (refused: 401)."""
        secret_hash = hash_key(secret.strip())
        session = self.store.session_by_hash(secret_hash)
        if session is None:
            raise session_ended()
        now = self.clock()
        if now >= session.expires_at or now - session.last_seen_at >= self.idle_seconds:
            self.store.delete_session(session.account_id, session.id)
            raise session_ended()
        member = self.store.get_member(session.account_id, session.member_id)
        if member is None or not member.active:
            self.store.delete_session(session.account_id, session.id)
            raise Unauthenticated(
                "the session's member is disabled or no longer a member", code="member_disabled"
            )
        if now - session.last_seen_at >= self.touch_every:
            self.store.touch_session(secret_hash, now)
        return session, member

    @staticmethod
    def check_csrf(secret: str, token: str | None) -> None:
        """An unsafe request made with the session's cookie must echo its CSRF token."""
        if not token:
            raise PermissionDenied(
                "a request that changes something, made with a session cookie, must send the"
                " session's CSRF token in the x-csrf-token header",
                code="csrf_token_missing",
            )
        if not hmac.compare_digest(token.strip(), csrf_token_for(secret.strip())):
            raise PermissionDenied(
                "the x-csrf-token header does not match this session", code="csrf_token_invalid"
            )

    # ------------------------------------------------------------------ one's own sessions
    def _live(self, session: Session, now: float) -> bool:
        return now < session.expires_at and now - session.last_seen_at < self.idle_seconds

    def list_sessions(self, actor: Caller) -> list[Session]:
        require(actor, Action.MANAGE_SELF, Target(member_id=actor.member_id))
        assert actor.member_id is not None  # the policy passed: a person
        now = self.clock()
        found = self.store.list_sessions(actor.account_id, actor.member_id)
        return [s for s in found if self._live(s, now)]

    def end_session(self, actor: Caller, session_id: str) -> None:
        require(actor, Action.MANAGE_SELF, Target(member_id=actor.member_id))
        if session_id not in {s.id for s in self.list_sessions(actor)}:
            raise NotFound(f"no session {session_id!r} of yours", code="session_not_found")
        self.store.delete_session(actor.account_id, session_id)
        self.audit.record(
            actor.account_id, AuditKind.SESSION_ENDED, actor=actor, target_id=session_id
        )

    def sign_out(self, actor: Caller) -> None:
        if actor.session_id is None:
            raise InvalidInput(
                "this request is not made with a session (it used an API key)",
                code="not_a_session",
            )
        self.store.delete_session(actor.account_id, actor.session_id)
        self.audit.record(
            actor.account_id, AuditKind.SIGN_OUT, actor=actor, target_id=actor.session_id
        )

    def end_member_sessions(
        self, account_id: str, member_id: str, *, keep: str | None = None
    ) -> int:
        return self.store.delete_member_sessions(account_id, member_id, keep=keep)

    def expire(self) -> int:
        return self.store.expire_sessions(self.clock())
