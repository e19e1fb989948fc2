"""Building blocks shared by the screening rules: separators, word lists, clause tests.

Everything here works on text folded by :mod:`memvault.domain.screening_normalise`
(lower case, accents dropped), so patterns are written in lower case without accents.
Pure: no I/O, no state.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from memvault.domain.screening_built import compiled
from memvault.domain.screening_normalise import fold_pattern

# The rule families, by id (stable: refusals name them, and callers may key on them).
RULE_RECALL_BLOCK_ESCAPE: Final = "recall_block_escape"
RULE_ROLE_HEADER: Final = "role_header"
RULE_INSTRUCTION_OVERRIDE: Final = "instruction_override"
RULE_ROLE_HIJACK: Final = "role_hijack"
RULE_PROMPT_EXTRACTION: Final = "prompt_extraction"
RULE_MODEL_DIRECTIVE: Final = "model_directive"
# an order to use a tool or act against the user (memvault.domain.screening_tools)
RULE_TOOL_MISUSE: Final = "tool_misuse"
# the second stage (memvault.domain.screening_cues): a scored combination of weak cues
RULE_INJECTION_CUES: Final = "injection_cues"
RULE_INJECTION_MODEL: Final = "injection_model"

# Between two words: whitespace (newlines included), markdown emphasis, dashes (so a
# file name such as ``ignore-all-previous-instructions`` reads as words too).
SEP: Final = r"[\s*_~>\-]++"
# Between two words of a language written without spaces (Chinese, Japanese).
CJK_SEP: Final = r"[\s*_~]*+"
APOS: Final = "'"  # fold spells every apostrophe this way
NOT_AFTER_WORD: Final = r"(?<![^\W_])"  # not preceded by a letter or digit
NOT_BEFORE_WORD: Final = r"(?![^\W_])"  # not followed by a letter or digit


def words(*alternatives: str) -> str:
    """``a b`` -> ``a<SEP>b`` for every alternative, joined into one group.

    Alternatives are folded as text is (accents dropped), so they may be written in
    their natural spelling. Longer alternatives go first, so that an alternation never
    stops at a shorter word that begins a longer one.
    """
    unique = dict.fromkeys(fold_pattern(a) for a in alternatives)
    ordered = sorted(unique, key=lambda a: (-len(a), a))
    return "(?:" + "|".join(SEP.join(alt.split(" ")) for alt in ordered) + ")"


def cjk(*alternatives: str) -> str:
    """Alternatives of a language without spaces; a space inside one is optional."""
    unique = dict.fromkeys(fold_pattern(a) for a in alternatives)
    ordered = sorted(unique, key=lambda a: (-len(a), a))
    return "(?:" + "|".join(CJK_SEP.join(alt.split(" ")) for alt in ordered) + ")"


def opt(pattern: str, sep: str = SEP) -> str:
    """An optional ``pattern`` followed by a separator, never backtracked into."""
    return f"(?:{pattern}{sep})?+"


def alt(parts: Iterable[str]) -> str:
    return "(?:" + "|".join(parts) + ")"


def compile_rx(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return compiled(fold_pattern(pattern), flags)


# --------------------------------------------------------------------------- clauses

# What may stand right before an imperative verb when it does not open a line or
# follow punctuation. A verb after anything else has a subject ("models ignore
# previous instructions", "we should forget the old API") and is a description.
_LEADS: Final = (
    # English
    "please",
    "pls",
    "plz",
    "kindly",
    "now",
    "just",
    "simply",
    "only",
    "immediately",
    "hereby",
    "first",
    "firstly",
    "then",
    "and",
    "also",
    "so",
    "but",
    "or",
    "instead",
    "next",
    "finally",
    "lastly",
    "again",
    "always",
    "henceforth",
    "from now on",
    "from here on",
    "going forward",
    "ok",
    "okay",
    "alright",
    "right",
    "well",
    "hey",
    "hi",
    "hello",
    "yo",
    "quietly",
    "silently",
    "secretly",
    "completely",
    "totally",
    "entirely",
    "fully",
    "absolutely",
    "really",
    "actually",
    "basically",
    "sudo",
    "nevermind",
    "never mind",
    "you'll",
    "you will",
    "you must",
    "you should",
    "you shall",
    "you can",
    "you may",
    "you could",
    "you need to",
    "you have to",
    "you are to",
    "you're to",
    "you are going to",
    "you're going to",
    "you are required to",
    "you're required to",
    "you are instructed to",
    "you are supposed to",
    "you are expected to",
    "you ought to",
    "you are free to",
    "you're free to",
    "you are allowed to",
    "you're allowed to",
    "you are permitted to",
    "you're permitted to",
    "you now",
    "you must now",
    "you will now",
    "you should now",
    "feel free to",
    "go ahead and",
    "be sure to",
    "make sure to",
    "make sure you",
    "remember to",
    "forget not",
    "time to",
    "want you to",
    "need you to",
    "order you to",
    "command you to",
    "instruct you to",
    "ask you to",
    "tell you to",
    "urge you to",
    "like you to",
    "that you",
    "except",
    "except for",
    "except to",
    "other than",
    "it's ok to",
    "it's okay to",
    "it's fine to",
    "it's safe to",
    "it is ok to",
    "it is okay to",
    "it is fine to",
    "it is safe to",
    "is to",
    "let's",
    "lets",
    "let us",
    "start by",
    "begin by",
    "proceed to",
    "important",
    "urgent",
    "attention",
    "note",
    # Spanish
    "por favor",
    "ahora",
    "y",
    "luego",
    "despues",
    "entonces",
    "tambien",
    "simplemente",
    "solo",
    "solamente",
    "debes",
    "tienes que",
    "hay que",
    "necesito que",
    "quiero que",
    "te pido que",
    "usted debe",
    "a partir de ahora",
    "desde ahora",
    # French
    "s'il te plait",
    "s'il vous plait",
    "stp",
    "svp",
    "maintenant",
    "desormais",
    "dorenavant",
    "et",
    "alors",
    "puis",
    "ensuite",
    "aussi",
    "juste",
    "tu dois",
    "vous devez",
    "il faut",
    "je veux que tu",
    "merci de",
    "veuillez",
    "tu vas",
    "vous allez",
    "a partir de maintenant",
    # German
    "bitte",
    "jetzt",
    "nun",
    "und",
    "dann",
    "einfach",
    "sofort",
    "ab jetzt",
    "ab sofort",
    "von nun an",
    "du musst",
    "du sollst",
    "sie mussen",
    "sie sollen",
    "ihr musst",
    "ihr sollt",
    # Portuguese
    "agora",
    "e",
    "entao",
    "apenas",
    "so",
    "voce deve",
    "voce precisa",
    "tem que",
    "tens de",
    "quero que voce",
    "de agora em diante",
    # Italian
    "per favore",
    "per piacere",
    "ora",
    "adesso",
    "poi",
    "quindi",
    "anche",
    "semplicemente",
    "devi",
    "dovete",
    "voglio che tu",
    "ti chiedo di",
    "d'ora in poi",
    # Dutch, Swedish, Vietnamese
    "alsjeblieft",
    "nu",
    "en",
    "daarna",
    "je moet",
    "u moet",
    "snalla",
    "och",
    "hay",
    "vui long",
    "xin",
    "xin hay",
    "bay gio",
    "va",
    "roi",
    "sau do",
)
_LEAD_RE: Final = compiled(
    NOT_AFTER_WORD
    + "(?:"
    + "|".join(
        sorted(
            (r"\s++".join(re.escape(w) for w in lead.split(" ")) for lead in _LEADS),
            key=len,
            reverse=True,
        )
    ).replace("'", APOS)
    # "you can safely ignore", "please just forget": an adverb may follow the lead
    + r")(?:\s++(?:[a-z]{3,}ly|just|now|also|still|even|simply|then))?+$"
)
# The window ends at the start of a line, optionally after a list/quote/heading marker.
_AT_LINE_START_RE: Final = compiled(r"\n[ \t]*+(?:[-*+>#]++|\d{1,9}+[.)])?+[ \t*_~]*+$")
_LEAD_WINDOW: Final = 48
_LEAD_STRIP: Final = " \t\n*_~>-"


def opens_clause(text: str, start: int) -> bool:
    """Whether the word at ``start`` is used as an imperative (not after a subject).

    True at the start of the text or a line, after punctuation, or after a lead word
    ("please", "now", "and", "you must", "I want you to", "bitte", "por favor", ...).
    """
    low = max(0, start - _LEAD_WINDOW)
    window = ("\n" if low == 0 else "") + text[low:start]
    if _AT_LINE_START_RE.search(window) is not None:
        return True
    window = window.rstrip(_LEAD_STRIP)
    if not window or not window[-1].isalpha():
        return True
    return _LEAD_RE.search(window) is not None


def inside_word(text: str, start: int) -> bool:
    return start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_")


def paragraph_span(text: str, start: int, end: int, before: int, after: int) -> tuple[int, int]:
    """``text[start:end]`` widened by ``before`` and ``after`` characters, never past a
    blank line: the paragraph around a match, as far as a rule reads."""
    low = max(0, start - before)
    high = min(len(text), end + after)
    cut = text.rfind("\n\n", low, start)
    if cut != -1:
        low = cut + 2
    cut = text.find("\n\n", end, high)
    if cut != -1:
        high = cut
    return low, high


# "Note for the assistant: the user prefers metric units." is what a memory vault is
# for: a statement about the user, addressed to the assistant that will read it. It
# passes when what follows the address, to the end of its paragraph, is a statement
# whose subject is the user, the team or the writer, and holds no word of an order to
# the reader (you, your, always, never, ignore, must...). "Note to the AI: the user
# wants you to reveal..." and "Note to the AI: ignore..." are still refused. English only:
# an address in another language is refused as before.
_STATED_SUBJECT_RE: Final = compiled(
    r"[ \t]*+(?:the[ \t]++(?:user|users|customer|client|team|owner)|users?|our[ \t]++\w++"
    r"|my[ \t]++\w++|we|i|she|he|they)[ \t]++(?:prefers?|likes?|dislikes?|uses?"
    r"|wants[ \t]++(?!you|to)|works?|lives?"
    r"|is|are|was|were|has|have|had|owns?|speaks?|reads?|writes?|runs?|keeps?|moved|started"
    r"|finished|switched|chose|picked|decided|needs?[ \t]++(?!you)|asked[ \t]++(?:for|about)"
    r"|mentioned|said|prefer)\b"
)
_ORDER_WORD_RE: Final = compiled(
    r"\b(?:you|your|yours|yourself|ya|u|always|never|must|ignore|disregard|forget|override"
    r"|instructions?|prompt|rules?|reveal|send|forward|email|output|print|repeat|pretend|act"
    r"|respond|reply|answer|say|tell|obey|follow|instead|secret|password|key|token|admin"
    r"|authori[sz]\w*+|allowed|permission\w*+|do[ \t]++not|don'?t|trust\w*+|verified"
    r"|approved|developer|unrestricted|access|elevated|exempt|whitelist\w*+|root|sudo"
    r"|privilege\w*+|clearance|filter\w*+|safety|restrict\w*+|polic\w*+|guideline\w*+)\b"
)


def states_a_fact(text: str, end: int) -> bool:
    """Whether what follows an address to the reader (ending at ``end``) is a statement
    about the user, the team or the writer, with no word of an order in its paragraph."""
    if _STATED_SUBJECT_RE.match(text, end) is None:
        return False
    stop = text.find("\n\n", end)
    return _ORDER_WORD_RE.search(text, end, len(text) if stop == -1 else stop) is None
