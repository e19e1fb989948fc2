"""An organisation's default search mode and min_score (ADR 0050): checked when set, and
read (remembered a few seconds) when a search or recall names none.

Precedence, first that is set: the request (REST ``mode``/``min_score``, memory_search's
arguments, the CLI's options), the key (``recall_mode``, for recall only), the
organisation (``Account.search``), the deployment (MEMVAULT_SEARCH_MODE, else hybrid when
vectors are on; the mode's own cut-off: domain.fusion.DEFAULT_MIN_SCORE for semantic and
hybrid, none for keyword).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from memvault.domain.fusion import SearchMode
from memvault.domain.memo import Memo
from memvault.domain.models import Account, SearchDefaults
from memvault.errors import InvalidInput
from memvault.ports import AccountStore

# How long a process keeps an organisation's defaults before reading them again. The
# process that changes them (and the gateway, which reads the account on every request
# anyway) sees the change at once; another process within this long.
MAX_AGE_SECONDS = 5.0
MAX_ENTRIES = 4096


def checked_defaults(mode: str | None, min_score: float | None) -> SearchDefaults:
    """The defaults as given, or InvalidInput naming the field (``mode`` one of keyword,
    semantic, hybrid; ``min_score`` 0-1; None for either: the deployment's)."""
    if mode is not None and mode not in {m.value for m in SearchMode}:
        names = ", ".join(m.value for m in SearchMode)
        raise InvalidInput(
            f"search_mode must be one of {names} or null, not {str(mode)[:40]!r}",
            code="invalid_input",
            field="search_mode",
        )
    if min_score is not None and (
        isinstance(min_score, bool)
        or not isinstance(min_score, (int, float))
        or not math.isfinite(min_score)
        or not 0.0 <= min_score <= 1.0
    ):
        raise InvalidInput(
            f"min_score must be between 0 and 1 or null, not {min_score!r}",
            code="invalid_input",
            field="min_score",
        )
    return SearchDefaults(mode=mode, min_score=None if min_score is None else float(min_score))


class SearchDefaultsReader:
    """The organisation's defaults, from its account record, remembered per process."""

    def __init__(self, accounts: AccountStore, clock: Callable[[], float] = time.monotonic) -> None:
        self.accounts = accounts
        self._memo: Memo[str, SearchDefaults] = Memo(
            MAX_ENTRIES, max_age=MAX_AGE_SECONDS, clock=clock
        )

    def get(self, account_id: str) -> SearchDefaults:
        found, defaults = self._memo.lookup(account_id)
        if found and defaults is not None:
            return defaults
        account = self.accounts.get_account(account_id)
        defaults = account.search if account is not None else SearchDefaults()
        self._memo.put(account_id, defaults)
        return defaults

    def remember(self, account: Account) -> None:
        """The account as just read or written: its defaults are the current ones."""
        self._memo.put(account.id, account.search)

    def resolve(
        self,
        account_id: str,
        mode: SearchMode | None,
        min_score: float | None,
        deployment: Callable[[], SearchMode],
    ) -> tuple[SearchMode, float | None]:
        """The mode and cut-off a search runs with: what was asked, else the
        organisation's, else the deployment's (``deployment()``; a None cut-off is the
        mode's own)."""
        if mode is not None and min_score is not None:
            return mode, min_score  # no read
        org = self.get(account_id)
        if mode is None:
            mode = SearchMode(org.mode) if org.mode is not None else deployment()
        return mode, min_score if min_score is not None else org.min_score
