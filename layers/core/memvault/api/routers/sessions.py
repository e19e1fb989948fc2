"""REST routes for signing in and out, one's own sessions, password and profile, and who
the caller is (/v1/me). Thin: the rules are services.sessions' and services.members'."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from memvault.api import identity_schemas as ids
from memvault.api.deps import ActorDep, ManagerDep, ServicesDep, VaultRoute, api_key
from memvault.api.routers.keys import key_out
from memvault.container import Services
from memvault.errors import InvalidInput
from memvault.http_edge import SESSION_COOKIE, client_address, over_https
from memvault.services.sessions import StartedSession, csrf_token_for

router = APIRouter(prefix="/v1", tags=["sign-in and sessions"], route_class=VaultRoute)


def signed_in(
    svc: Services, request: Request, response: Response, started: StartedSession
) -> ids.SignedInOut:
    """Answer a new session: its cookie (HttpOnly, SameSite=Lax, Secure over HTTPS) on
    the response, its CSRF token in the body."""
    response.set_cookie(
        SESSION_COOKIE,
        started.secret,
        max_age=int(svc.settings.session_max_hours * 3600),
        httponly=True,
        samesite="lax",
        secure=over_https(request),
        path="/",
    )
    account = svc.accounts.get_account(started.member.account_id)
    return ids.SignedInOut(
        session=ids.SessionOut.of(started.session, started.session.id),
        member=ids.MemberOut.of(started.member),
        organisation=ids.OrgOut.of_org(account),
        csrf_token=started.csrf_token,
    )


def _user_agent(request: Request) -> str:
    return request.headers.get("user-agent", "")


@router.post("/sessions", response_model=ids.SignedInOut, status_code=201)
def sign_in(
    svc: ServicesDep, request: Request, response: Response, body: ids.SignInIn
) -> ids.SignedInOut:
    """Sign in with ``{email, password}`` or ``{api_key}`` (a key with its admin toggle
    on). Every failed password sign-in answers the same 401 invalid_credentials."""
    client, agent = client_address(request), _user_agent(request)
    if body.api_key is not None and body.email is None and body.password is None:
        started = svc.sessions.sign_in_key(body.api_key, client=client, user_agent=agent)
    elif body.api_key is None and body.email is not None and body.password is not None:
        started = svc.sessions.sign_in_password(
            body.email, body.password, client=client, user_agent=agent
        )
    else:
        raise InvalidInput(
            "send either email and password, or api_key", code="invalid_credentials_shape"
        )
    return signed_in(svc, request, response, started)


@router.delete("/sessions/current", status_code=204)
def sign_out(svc: ServicesDep, who: ActorDep) -> Response:
    svc.sessions.sign_out(who)
    response = Response(status_code=204)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


@router.get("/sessions", response_model=list[ids.SessionOut])
def list_sessions(svc: ServicesDep, who: ManagerDep) -> list[ids.SessionOut]:
    """One's own live sessions (``current`` marks this request's)."""
    return [ids.SessionOut.of(s, who.session_id) for s in svc.sessions.list_sessions(who)]


@router.delete("/sessions/{session_id}", status_code=204)
def end_session(svc: ServicesDep, who: ManagerDep, session_id: str) -> Response:
    svc.sessions.end_session(who, session_id)
    return Response(status_code=204)


@router.get("/me", response_model=ids.MeOut)
def whoami(svc: ServicesDep, who: ActorDep, request: Request) -> ids.MeOut:
    """The member, their role and organisation, and how this request authenticated."""
    key = api_key(request)
    member = svc.members.me(who) if who.member_id is not None else None
    session = None
    if who.session_id is not None:
        session = next((s for s in svc.sessions.list_sessions(who) if s.id == who.session_id), None)
    cookie = request.cookies.get(SESSION_COOKIE) if key is None else None
    return ids.MeOut(
        auth="key" if key is not None else "session",
        member=ids.MemberOut.of(member) if member else None,
        role=who.role.value if who.role is not None else None,
        organisation=ids.OrgOut.of_org(svc.org.organisation(who)),
        key=key_out(svc, key) if key is not None else None,
        session=ids.SessionOut.of(session, who.session_id) if session else None,
        csrf_token=csrf_token_for(cookie) if cookie else None,
    )


@router.patch("/me", response_model=ids.MemberOut)
def update_me(svc: ServicesDep, who: ManagerDep, body: ids.ProfileIn) -> ids.MemberOut:
    """One's name and sign-in address (a new address needs the current password)."""
    member = svc.members.update_profile(
        who, name=body.name, email=body.email, current_password=body.current_password
    )
    return ids.MemberOut.of(member)


@router.post("/me/password", response_model=ids.PasswordOut)
def change_password(svc: ServicesDep, who: ManagerDep, body: ids.PasswordIn) -> ids.PasswordOut:
    """Set a new password (the current one is needed when one is set); every other
    session of the member ends."""
    ended = svc.members.change_password(who, current=body.current_password, new=body.new_password)
    return ids.PasswordOut(changed=True, sessions_ended=ended)


signup_router = APIRouter(prefix="/v1", tags=["sign-in and sessions"], route_class=VaultRoute)


@signup_router.post("/signup", response_model=ids.SignedInOut, status_code=201)
async def sign_up(
    svc: ServicesDep, request: Request, response: Response, body: ids.SignUpIn
) -> ids.SignedInOut:
    """A new organisation and its owner, signed in (only with MEMVAULT_SIGNUP=open;
    rate limited per address and client)."""
    started = await run_in_threadpool(
        lambda: svc.members.sign_up(
            body.organisation,
            email=body.email,
            name=body.name,
            password=body.password,
            client=client_address(request),
            user_agent=_user_agent(request),
        )
    )
    return signed_in(svc, request, response, started)
