"""Write-screening: refuse model-written notes that carry a prompt injection.

Why this exists
---------------
Notes written by a model through the memory tools come back later inside the
recall block (``<memory source="memvault vault"> ... </memory>``) that is placed
ahead of the user's message in *every* later request. A note that says "ignore
all previous instructions" therefore does not hurt once, it poisons every
request that recalls it. :func:`screen_text` is meant for model writes only
(people edit their own vault freely) and is pure: no I/O, no state.

The trade-off
-------------
A false positive costs one note, and the refusal reason tells the model how to
rephrase it, so the write is usually retried at once. A false negative persists.
Even so the screen refuses only *unambiguous* forms: anything that normal notes
say in passing must pass, because a screen that refuses ordinary notes teaches
callers to turn it off. It is a heuristic tripwire, not a classifier; a
determined attacker who has read this file can phrase around it.

Normalisation (applied before every rule)
------------------------------------------
Unicode NFKC (folds fullwidth letters, mathematical alphanumerics, ligatures,
exotic spaces and ``＜｜`` style punctuation), removal of invisible characters
(U+200B-U+200F, U+2060-U+2064, U+FEFF, soft hyphen, bidi controls and a few
fillers), folding of common Cyrillic/Greek look-alike letters to Latin, and
unification of line breaks. Matching is case-insensitive.

Rules, in the order they are checked (the first hit decides the rule id)
-------------------------------------------------------------------------
``recall_block_escape``
    A literal closing memory tag (``</memory``, any case or spacing, e.g.
    ``</ memory >``) or a forged opening tag (``<memory ... source=``). This is
    structural: the reading model sees the tag whatever markdown surrounds it,
    so it is refused **everywhere**, including code blocks and quotes. A bare
    ``<memory>`` (no ``source=``) passes, as does ``<memory/>``. Entity-escaped
    forms (``&lt;/memory&gt;``) are left to the recall renderer's escaping.

``role_header``
    Text that forges a new chat turn:

    * chat-template special tokens anywhere: ``<|im_start|>``, ``<|im_end|>``,
      ``<|endoftext|>``, ``<|system|>`` and any other ``<|name|>`` token,
      ``[INST]``/``[/INST]``, ``<<SYS>>``/``<</SYS>>``, ``<start_of_turn>``,
      ``<system>``/``</system>`` (also ``<system-reminder>``, ``<system_prompt>``);
    * a system/developer header at the start of a line (``system:``,
      ``SYSTEM PROMPT:``, ``### System:``, ``**System:**``, ``[system]``)
      **followed by text addressed to the model** ("you ...", "ignore ...",
      "from now on", "act as", ...), on the same or the next non-blank line.
      ``System: Linux`` or a ``System:`` heading over a spec list is a
      key/value pair, not a turn, and passes;
    * a transcript: a line starting ``Human:`` (or ``User:``) **and** a line
      starting ``Assistant:`` in the same note (the legacy
      ``\\n\\nHuman: ... \\n\\nAssistant:`` format). A lone ``Assistant: Maria``
      line is a job title and passes.

``instruction_override``
    Imperative phrases telling the model to drop its instructions:

    * ignore/disregard/forget/set aside/abandon + (all|any|the|your)? +
      previous/prior/above/earlier/preceding/foregoing + instructions, prompts,
      rules, messages, context, directives, guidelines, system prompt...;
    * the same verbs + instructions ... "above", "you were given", "so far";
    * forget/ignore everything (or all) "you were told", "above", "so far"
      (not "... you were told about X", and not "forget everything about X");
    * ignore/disregard/forget/override/bypass + "your" instructions, system
      prompt, guidelines, programming; "ignore the system prompt";
    * "ignore the above and say/print/...";
    * "you are no longer bound by" + rules/instructions/guidelines/...;
      "you are now free from all rules"; "your previous instructions are void";
    * a line starting "New instructions:" followed by "from now on", "ignore",
      "you are now", ...

    Words may be separated by any whitespace (including newlines) and by
    markdown emphasis (``**ignore** _all_``). The verb-led forms must be
    *imperative*: the verb must open a clause (start of line, after
    punctuation, or after "please", "now", "and", "you must", "I want you
    to", ...). A verb after a subject is a description and passes: "models
    tend to ignore previous instructions", "don't ignore previous
    instructions". "Ignore the previous version of the doc" passes because a
    version is not an instruction; "we should forget everything about the old
    API" passes because "about" is not one of the override continuations.

    Deliberately refused although a person might mean it harmlessly: "Ignore
    the previous instructions for installing Postgres" and the like. Inside a
    recall block "the previous instructions" reads as the model's own, and the
    note is easily rephrased ("the earlier install steps are outdated").

Mentions, as opposed to uses, are allowed for ``role_header`` and
``instruction_override`` (never for ``recall_block_escape``):

* inside a fenced code block (a ``` or ~~~ fence that is closed; an unclosed
  fence runs to the end of the note and is not trusted) or an inline code span
  on one line, e.g. a tokenizer doc showing ``<|im_start|>system``;
* for ``instruction_override`` only, inside a short quotation (``"..."``,
  ``'...'``, ``“...”``, ``‘...’``, ``«...»``, at most 120 characters, on one
  line) when the rest of that line talks *about* it, i.e. carries a mention
  cue such as "injection", "attack(er)", "jailbreak", "payload", "phrase",
  "string", "example", "e.g.", "quote", "pattern", "red team", "filter" or
  "detect". A bare quoted order (``Note: "ignore all previous
  instructions"``) is still a use. Apostrophes (``it's``) never count as
  quotes. Role headers and tokens inside quotes are not exempt: code is the
  one explicit way to show literal chat markup.

Residual risks, accepted: text inside code blocks is exempt, so a payload can
be hidden in one (a serving stack that turns ``<|im_start|>`` text into the
special token would do so inside code too); the cue list can be gamed; and
paraphrases ("pay no attention to what came earlier") are not caught.

Everything is linear in the input: the regexes are precompiled, use bounded or
possessive repetition so they cannot backtrack catastrophically, and code and
quote regions are found with single scans.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass
from typing import Final

__all__ = [
    "RULE_IDS",
    "RULE_INSTRUCTION_OVERRIDE",
    "RULE_RECALL_BLOCK_ESCAPE",
    "RULE_ROLE_HEADER",
    "ScreeningVerdict",
    "screen_text",
]

RULE_RECALL_BLOCK_ESCAPE: Final = "recall_block_escape"
RULE_ROLE_HEADER: Final = "role_header"
RULE_INSTRUCTION_OVERRIDE: Final = "instruction_override"
#: Every rule id, in the order the rules are checked.
RULE_IDS: Final = (RULE_RECALL_BLOCK_ESCAPE, RULE_ROLE_HEADER, RULE_INSTRUCTION_OVERRIDE)


@dataclass(frozen=True, slots=True)
class ScreeningVerdict:
    """Outcome of :func:`screen_text`.

    ``rule`` is a stable id from :data:`RULE_IDS` (``None`` when allowed) and
    ``reason`` a short message the model can read and act on.
    """

    allowed: bool
    rule: str | None
    reason: str | None


_ALLOWED: Final = ScreeningVerdict(allowed=True, rule=None, reason=None)
_EXCERPT_MAX: Final = 60

_REASONS: Final = {
    RULE_RECALL_BLOCK_ESCAPE: (
        "refused: the text contains a memory tag ('{}') that would break the recall block; "
        "remove it or describe it in words"
    ),
    RULE_ROLE_HEADER: (
        "refused: the text contains a chat role header or special token ('{}'); "
        "describe it in words, or put it in `inline code` or a code block"
    ),
    RULE_INSTRUCTION_OVERRIDE: (
        "refused: the text contains an instruction-override phrase ('{}'); "
        "rephrase it as a plain note, or put a quoted example in `inline code`"
    ),
}

# --------------------------------------------------------------------------- normalisation

_INVISIBLE: Final = (
    0x00AD,  # soft hyphen
    0x034F,  # combining grapheme joiner
    0x061C,  # arabic letter mark
    0x115F,
    0x1160,  # hangul fillers
    0x17B4,
    0x17B5,
    0x180E,  # mongolian vowel separator
    *range(0x200B, 0x2010),  # zero-width space/non-joiner/joiner, LRM, RLM
    *range(0x202A, 0x202F),  # bidi embeddings and overrides
    *range(0x2060, 0x2065),  # word joiner, invisible operators
    *range(0x2066, 0x206A),  # bidi isolates
    0x3164,
    0xFEFF,  # zero-width no-break space / BOM
    0xFFA0,
)
_LINE_BREAKS: Final = (0x0B, 0x0C, 0x0D, 0x85, 0x2028, 0x2029)
# Cyrillic, Greek and a few Latin/Armenian letters that render like ASCII letters.
_CONFUSABLE_SRC: Final = (
    # а в е к м н о р с т у х / А В Е К М Н О Р С Т У Х
    "\u0430\u0432\u0435\u043a\u043c\u043d\u043e\u0440\u0441\u0442\u0443\u0445"
    "\u0410\u0412\u0415\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0423\u0425"
    "\u0456\u0406\u0458\u0408\u0455\u0405\u0501\u04bb\u04ba\u04cf\u04c0\u051b\u051d\u051c"
    "\u03bf\u039f\u03b1\u0391\u03b9\u0399\u03bd\u03c1\u03a1\u03c5\u0392\u0395\u0396\u0397"
    "\u039a\u039c\u039d\u03a4\u03a7\u03a5\u03ba"
    "\u0261\u0251\u0131\u0130\u0585\u057d\u0570"
)
_CONFUSABLE_DST: Final = "abekmhopctyxABEKMHOPCTYXiIjJsSdhHlIqwWoOaAiIvpPuBEZHKMNTXYkgaiIouh"
_TRANSLATION: Final[dict[int, int | None]] = {
    **dict.fromkeys(_INVISIBLE),
    **dict.fromkeys(_LINE_BREAKS, ord("\n")),
    **{ord(s): ord(d) for s, d in zip(_CONFUSABLE_SRC, _CONFUSABLE_DST, strict=True)},
}
_ASCII_TRANSLATION: Final[dict[int, int | None]] = {
    k: v for k, v in _TRANSLATION.items() if k < 0x80
}


def _normalise(text: str) -> str:
    text = text.replace("\r\n", "\n")
    if text.isascii():
        return text.translate(_ASCII_TRANSLATION)
    return unicodedata.normalize("NFKC", text).translate(_TRANSLATION)


# --------------------------------------------------------------------------- building blocks

_NOT_AFTER_WORD: Final = r"(?<![^\W_])"  # not preceded by a letter or digit
_NOT_BEFORE_WORD: Final = r"(?![^\W_])"  # not followed by a letter or digit
_SEP: Final = r"[\s*_~>\-]++"  # whitespace (incl. newlines) and markdown emphasis
_APOS: Final = "['\u2019]"


def _words(*alternatives: str) -> str:
    """``a b`` -> ``a<SEP>b`` for every alternative, joined into one group."""
    return "(?:" + "|".join(_SEP.join(alt.split(" ")) for alt in alternatives) + ")"


def _opt(pattern: str) -> str:
    """An optional ``pattern`` followed by a separator, never backtracked into."""
    return f"(?:{pattern}{_SEP})?+"


# The big scans run case-sensitively over lower-cased text (much faster than
# re.IGNORECASE, which defeats the regex engine's first-character search), so
# their patterns are written in lower case. Small, local regexes use _FLAGS.
_FLAGS: Final = re.IGNORECASE

# --------------------------------------------------------------------------- recall_block_escape

_RECALL_RE: Final = re.compile(
    r"<\s*+/\s*+memory(?![\w\-])"  # </memory, </ memory >, </MEMORY foo>
    r"|<\s*+memory(?![\w\-])[^<>]{0,256}?" + _NOT_AFTER_WORD + r"source\s*+=",  # <memory source=
)

# --------------------------------------------------------------------------- role_header

_ROLE_TOKEN_RE: Final = re.compile(
    r"<\|[\w\u2581.\-]{1,48}+\|>"  # <|im_start|>, <|endoftext|>, <|system|>, <|eot_id|>
    r"|\[\s*+/?\s*+inst\s*+\]"  # [INST] [/INST]
    r"|<<\s*+/?\s*+sys\s*+>>"  # <<SYS>> <</SYS>>
    r"|<\s*+/?\s*+(?:start|end)_of_turn\s*+>"  # <start_of_turn>
    r"|<\s*+/?\s*+system(?:[\s_\-]*+(?:prompt|message|instructions?|reminder|note))?+\s*+>",
)

# Words that, right after a role header, show the text is addressed to the model.
_ADDRESSED: Final = (
    r"(?:(?:you(?:" + _APOS + r"(?:re|ll|ve|d))?|your|yours"
    r"|from\s++now\s++on|ignore|disregard|forget|override|new\s++(?:instructions|rules|persona)"
    r"|the\s++(?:assistant|ai)|act\s++as|pretend|do\s++not|don" + _APOS + r"t|reveal"
    r"|as\s++an?\s++(?:ai|assistant|language\s++model)|developer\s++mode|jailbreak\w*+)"
    + _NOT_BEFORE_WORD
    + r"|<\||\[inst)"
)
_SYSTEM_ROLE: Final = (
    r"(?:system|developer)(?:[ \t]++(?:message|prompt|instructions?|override|note))?+"
)
_SYSTEM_HEADER_RE: Final = re.compile(
    r"^[ \t>#*_]*+"
    r"(?P<hdr>\[[ \t]*+" + _SYSTEM_ROLE + r"[ \t]*+\]"  # [system]
    r"|" + _SYSTEM_ROLE + r"[ \t*_]*+:)"  # system:, ### System:, **System:**
    r"[ \t*_:]*+\s*+(?=" + _ADDRESSED + ")",
    re.MULTILINE,
)
_TURN_HUMAN_RE: Final = re.compile(
    r"^[ \t>]*+[*_]{0,3}+(?P<hdr>(?:human|user)[*_]{0,3}+[ \t]*+:)", re.MULTILINE
)
_TURN_ASSISTANT_RE: Final = re.compile(
    r"^[ \t>]*+[*_]{0,3}+(?P<hdr>assistant[*_]{0,3}+[ \t]*+:)", re.MULTILINE
)

# --------------------------------------------------------------------------- instruction_override

# Verb-led forms must not start inside a word; that is checked on each match, because
# a leading look-behind would defeat the fast first-character search.
_VERB: Final = _words("ignore", "disregard", "forget", "set aside", "abandon")
_VERB_YOUR: Final = _words(
    "ignore", "disregard", "forget", "set aside", "abandon", "override", "bypass"
)
_SCOPE: Final = _opt(r"(?:all|any|every)") + _opt("of")
_DET: Final = _opt(r"(?:the|your|my|these|those)")
_POSITION: Final = "(?:previous|prior|above|earlier|preceding|foregoing|aforementioned|former)"
_TARGET: Final = (
    "(?:"
    + _words(
        "instructions?",
        "prompts?",
        "rules",
        "messages",
        "context",
        "directives?",
        "directions",
        "guidelines",
        "guidance",
        "commands",
        "orders",
        "constraints",
        "programming",
        "system prompts?",
        "system messages?",
        "system instructions",
    )
    + ")"
    + _NOT_BEFORE_WORD
)
_ABOUT_SOMETHING_ELSE: Final = r"(?![\s*_~]*+(?:about|regarding|concerning|on|of)" + (
    _NOT_BEFORE_WORD + ")"
)
_GIVEN_SO_FAR: Final = _words(
    "above",
    "before this",
    "that came before",
    "that come before",
    "that were given",
    "you were given",
    "you have been given",
    "you've been given",
    "you received",
    "you have received",
    "you've received",
    "given to you",
    "given before",
    "given above",
    "given earlier",
    "given previously",
    "so far",
    "up to now",
    "up to this point",
    "until now",
)

# Verb-led forms: they count only when the verb is used as an imperative.
_IMPERATIVE_FORMS: Final = (
    # ignore all previous instructions / disregard the above rules
    _VERB + _SEP + _SCOPE + _DET + _POSITION + _SEP + _opt("(?:the|your|system|user)") + _TARGET,
    # ignore the instructions above / you were given
    _VERB + _SEP + _SCOPE + _DET + _TARGET + _SEP + _GIVEN_SO_FAR + _NOT_BEFORE_WORD,
    # forget everything you were told / ignore everything above
    _VERB
    + _SEP
    + "(?:everything|all|anything)"
    + _SEP
    + _words(
        "above",
        "before this",
        "that came before",
        "said above",
        "said before",
        "written above",
        "so far",
        "up to now",
        "up to this point",
        "until now",
        "you were told",
        "you have been told",
        "you've been told",
        "you were given",
        "you have been given",
        "you've been given",
        "you were instructed",
        "you have been instructed",
        "you've been instructed",
        "that you were told",
    )
    + _NOT_BEFORE_WORD
    + r"(?![ \t]*+\d)"  # "ignore everything above 5%" is about numbers
    + _ABOUT_SOMETHING_ELSE,
    # ignore your instructions / override your system prompt / ignore the system prompt
    _VERB_YOUR
    + _SEP
    + _SCOPE
    + "(?:your"
    + _SEP
    + _opt("(?:current|existing|original|initial|default|safety|core|hidden|built-in)")
    + _words(
        "instructions",
        "system prompt",
        "system message",
        "guidelines",
        "programming",
        "directives",
        "rules",
        "restrictions",
    )
    + "|the"
    + _SEP
    + _words("system prompt", "system message", "system instructions")
    + ")"
    + _NOT_BEFORE_WORD,
    # ignore the above and say ...
    _VERB
    + _SEP
    + _opt("(?:all|everything)")
    + _opt("of")
    + _opt("the")
    + r"above[\s*_~]*+[,;:]?+[\s*_~]*+and"
    + _SEP
    + _opt("instead")
    + "(?:say|print|output|write|respond|reply|answer|tell|reveal|repeat|return|translate)"
    + _NOT_BEFORE_WORD,
)
# Forms that are overrides wherever they stand.
_FIXED_FORMS: Final = (
    # you are no longer bound by your rules / you are now free from all rules
    "you(?:"
    + _SEP
    + "are|"
    + _APOS
    + "re)"
    + _SEP
    + _opt("now")
    + "(?:"
    + _words("no longer", "not")
    + _SEP
    + "(?:bound|restricted|constrained|limited|governed|controlled)"
    + _SEP
    + "by"
    + _SEP
    + _opt("(?:any|your|the|these|those|all)")
    + _opt("(?:previous|prior|original|earlier|usual|old)")
    + "(?:rules|instructions|guidelines|restrictions|constraints|programming|policies|"
    + _words("system prompt", "content policy", "safety")
    + "|filters|ethics)"
    + "|(?:free|freed|released|liberated|unbound)"
    + _SEP
    + "(?:from|of)"
    + _SEP
    + "(?:(?:all|any|your)"
    + _SEP
    + ")*+"
    + _opt("(?:previous|prior)")
    + "(?:rules|instructions|guidelines|programming|policies|"
    + _words("system prompt")
    + "))"
    + _NOT_BEFORE_WORD,
    # your previous instructions are void
    "your"
    + _SEP
    + _opt("(?:previous|prior|earlier|original|old|existing|current)")
    + "(?:instructions|rules|guidelines|directives|programming|"
    + _words("system prompt")
    + ")"
    + _SEP
    + _words("are", "have been", "were", "is", "has been")
    + _SEP
    + _opt("now")
    + "(?:void|null|revoked|cancell?ed|canceled|overridden|superseded|"
    + _words("no longer valid", "no longer in effect", "no longer apply")
    + ")"
    + _NOT_BEFORE_WORD,
)
# One scan for all forms; the ``imp`` group marks a verb-led (imperative) form.
_OVERRIDE_RE: Final = re.compile(
    "(?P<imp>"
    + "|".join(f"(?:{form})" for form in _IMPERATIVE_FORMS)
    + ")|"
    + "|".join(f"(?:{form})" for form in _FIXED_FORMS)
)
# New instructions: from now on ... (at the start of a line)
_NEW_INSTRUCTIONS_RE: Final = re.compile(
    r"^[ \t>#*_\-]*+"
    r"(?:new|updated|revised|real|actual|true|secret|hidden|override)[ \t]++"
    r"(?:system[ \t]++)?+(?:instructions?|directives?|orders)[ \t*_]*+:[ \t*_]*+\s*+"
    r"(?:from\s++now\s++on|ignore|disregard|forget|pretend"
    r"|you\s++(?:are|will|must|shall)\s++now|you\s++now)" + _NOT_BEFORE_WORD,
    re.MULTILINE,
)

# What may stand right before an imperative verb when it does not open a line or
# follow punctuation. A verb after anything else has a subject ("models ignore
# previous instructions", "tend to ignore ...") and is a description.
_IMPERATIVE_LEAD_RE: Final = re.compile(
    _NOT_AFTER_WORD
    + r"(?:please|pls|plz|kindly|now|just|simply|immediately|hereby|first|firstly|then|and"
    r"|also|so|but|or|instead|next|finally|again|always|from\s++now\s++on"
    r"|you" + _APOS + r"ll|you\s++(?:must|should|shall|will|can|may|need\s++to|have\s++to"
    r"|are\s++to|are\s++going\s++to|are\s++required\s++to|are\s++instructed\s++to"
    r"|ought\s++to)"
    r"|you" + _APOS + r"re\s++going\s++to"
    r"|(?:want|need|order|command|instruct|ask|tell|urge)\s++you\s++to"
    r"|(?:remember|make\s++sure|be\s++sure|forget\s++not|time)\s++to)$",
    _FLAGS,
)
# The window ends at the start of a line, optionally after a list/quote/heading marker.
_AT_LINE_START_RE: Final = re.compile(r"\n[ \t]*+(?:[-*+>#]++|\d{1,9}+[.)])?+[ \t*_~]*+$")
_LEAD_WINDOW: Final = 96
_LEAD_STRIP: Final = " \t\n*_~>-"


def _opens_clause(text: str, start: int) -> bool:
    """Whether the verb at ``start`` is used as an imperative (not after a subject)."""
    low = max(0, start - _LEAD_WINDOW)
    window = ("\n" if low == 0 else "") + text[low:start]
    if _AT_LINE_START_RE.search(window) is not None:
        return True
    window = window.rstrip(_LEAD_STRIP)
    if not window or not window[-1].isalpha():
        return True
    return _IMPERATIVE_LEAD_RE.search(window) is not None


# --------------------------------------------------------------------------- code and quotes

_FENCE_LINE_RE: Final = re.compile(r"^[ \t>]*+(`{3,}+|~{3,}+)([^\n]*+)", re.MULTILINE)
_BACKTICKS_RE: Final = re.compile(r"`++")
_QUOTE_RES: Final = (
    re.compile(r'"(?=[^\s"])[^"\n]{1,120}+(?<=[^\s"])"'),
    re.compile(_NOT_AFTER_WORD + r"'(?=[^\s'])[^'\n]{1,120}+(?<=[^\s'])'" + _NOT_BEFORE_WORD),
    re.compile("\u201c(?=\\S)[^\u201c\u201d\n]{1,120}+(?<=\\S)\u201d"),
    re.compile("\u2018(?=\\S)[^\u2018\u2019\n]{1,120}+(?<=\\S)\u2019"),
    re.compile("\u201e(?=\\S)[^\u201e\u201c\u201d\n]{1,120}+(?<=\\S)[\u201c\u201d]"),
    re.compile("\u00ab[^\u00ab\u00bb\n]{1,122}+\u00bb"),
)
_QUOTE_MAX_SPAN: Final = 126
# Words that show a line talks *about* the quoted text rather than ordering it.
_MENTION_CUE_RE: Final = re.compile(
    _NOT_AFTER_WORD + r"(?:inject\w*+|injection\w*+|attack\w*+|jailbreak\w*+|payloads?"
    r"|phrases?|phrased|phrasing|strings?|examples?|e\.g\.|quot(?:e|es|ed|ing)|patterns?"
    r"|malicious|adversar\w*+|exploit\w*+|canonical|classic|red[\s\-]*+team\w*+|detect\w*+"
    r"|filter\w*+|screen\w*+|block(?:s|ed|ing|list)?|flag(?:s|ged|ging)?|meme)" + _NOT_BEFORE_WORD,
    _FLAGS,
)

_Span = tuple[int, int]


def _fenced_blocks(text: str) -> list[tuple[_Span, _Span]]:
    """Closed fenced code blocks as (whole block, content between the fence lines)."""
    blocks: list[tuple[_Span, _Span]] = []
    opener: re.Match[str] | None = None
    for m in _FENCE_LINE_RE.finditer(text):
        fence, rest = m.group(1), m.group(2)
        if opener is None:
            if fence[0] == "`" and "`" in rest:
                continue  # ```code``` on one line is an inline span, not a fence
            opener = m
        elif fence[0] == opener.group(1)[0] and len(fence) >= len(opener.group(1)):
            if rest.strip():
                continue  # a closing fence carries no info string
            blocks.append(((opener.start(), m.end()), (opener.end(), m.start())))
            opener = None
    return blocks  # an unclosed fence is not trusted as code


def _inline_code_spans(text: str, start: int, end: int, out: list[_Span]) -> None:
    """Backtick code spans in ``text[start:end]`` that open and close on one line."""
    line: list[_Span] = []
    for m in _BACKTICKS_RE.finditer(text, start, end):
        run = m.span()
        if line and text.find("\n", line[-1][1], run[0]) != -1:
            _pair_runs(line, out)
            line = []
        line.append(run)
    _pair_runs(line, out)


def _pair_runs(runs: list[_Span], out: list[_Span]) -> None:
    """CommonMark pairing: a run closes at the next run of exactly the same length."""
    nxt: list[int] = [-1] * len(runs)
    last: dict[int, int] = {}
    for i in range(len(runs) - 1, -1, -1):
        length = runs[i][1] - runs[i][0]
        nxt[i] = last.get(length, -1)
        last[length] = i
    i = 0
    while i < len(runs):
        j = nxt[i]
        if j == -1:
            i += 1
        else:
            out.append((runs[i][0], runs[j][1]))
            i = j + 1


class _Regions:
    """Code and quotation regions of a normalised text, for the mention exemptions.

    Built lazily: most notes never produce a candidate match, so they never pay
    for the scan.
    """

    __slots__ = ("_code", "_code_starts", "_line", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        self._code: list[_Span] | None = None
        self._code_starts: list[int] = []
        # The line last examined for quotes: (start, end, quote spans, has a mention cue).
        self._line: tuple[int, int, list[_Span], bool] | None = None

    def _code_spans(self) -> list[_Span]:
        if self._code is None:
            text = self._text
            code: list[_Span] = []
            pos = 0
            for (block_start, block_end), content in _fenced_blocks(text):
                _inline_code_spans(text, pos, block_start, code)
                code.append(content)
                pos = block_end
            _inline_code_spans(text, pos, len(text), code)
            self._code = code  # already in order: blocks and spans never overlap
            self._code_starts = [s for s, _ in code]
        return self._code

    def in_code(self, start: int, end: int) -> bool:
        code = self._code_spans()
        i = bisect_right(self._code_starts, start) - 1
        return i >= 0 and end <= code[i][1]

    def in_mention_quote(self, start: int, end: int) -> bool:
        text = self._text
        if text.find("\n", start, end) != -1:
            return False
        line = self._line
        if line is None or not line[0] <= start <= line[1]:
            line_start = text.rfind("\n", 0, start) + 1
            line_end = text.find("\n", end)
            line_end = len(text) if line_end == -1 else line_end
            quotes = sorted(
                m.span() for rx in _QUOTE_RES for m in rx.finditer(text, line_start, line_end)
            )
            outside: list[str] = []
            pos = line_start
            for qs, qe in quotes:
                if qs >= pos:
                    outside.append(text[pos:qs])
                    pos = qe
            outside.append(text[pos:line_end])
            has_cue = _MENTION_CUE_RE.search(" ".join(outside)) is not None
            line = self._line = (line_start, line_end, quotes, has_cue)
        _, _, quotes, has_cue = line
        if not has_cue:
            return False
        # quotes of different kinds may nest, so look at every quote that starts
        # close enough before the match to contain it (each is at most ~125 chars)
        i = bisect_right(quotes, (start, len(text)))
        while i > 0 and quotes[i - 1][0] >= start - _QUOTE_MAX_SPAN:
            i -= 1
            if end <= quotes[i][1]:
                return True
        return False


# --------------------------------------------------------------------------- screening


def _excerpt(matched: str) -> str:
    flat = " ".join(matched.split())
    if len(flat) > _EXCERPT_MAX:
        flat = flat[: _EXCERPT_MAX - 3].rstrip() + "..."
    return flat


def _refuse(rule: str, matched: str) -> ScreeningVerdict:
    return ScreeningVerdict(
        allowed=False, rule=rule, reason=_REASONS[rule].format(_excerpt(matched))
    )


def _first_outside_code(rx: re.Pattern[str], text: str, regions: _Regions) -> _Span | None:
    for m in rx.finditer(text):
        span = m.span("hdr") if "hdr" in rx.groupindex else m.span()
        if not regions.in_code(*span):
            return span
    return None


def _role_header(text: str, regions: _Regions) -> _Span | None:
    for rx in (_ROLE_TOKEN_RE, _SYSTEM_HEADER_RE):
        found = _first_outside_code(rx, text, regions)
        if found is not None:
            return found
    human = _first_outside_code(_TURN_HUMAN_RE, text, regions)
    if human is not None and _first_outside_code(_TURN_ASSISTANT_RE, text, regions):
        return human
    return None


def _instruction_override(text: str, regions: _Regions) -> _Span | None:
    pos = 0
    while (m := _OVERRIDE_RE.search(text, pos)) is not None:
        start, end = m.span()
        if (start > 0 and text[start - 1].isalnum()) or (
            m.group("imp") is not None and not _opens_clause(text, start)
        ):
            pos = start + 1  # inside a word, or a description: look further on
            continue
        if not (regions.in_code(start, end) or regions.in_mention_quote(start, end)):
            return start, end
        pos = end
    for m in _NEW_INSTRUCTIONS_RE.finditer(text):
        if not (regions.in_code(*m.span()) or regions.in_mention_quote(*m.span())):
            return m.span()
    return None


def screen_text(text: str) -> ScreeningVerdict:
    """Screen a model-written note; refuse it if it carries an unambiguous injection.

    Pure and linear-time. See the module docstring for what is caught, what
    passes and why. Rules are checked in :data:`RULE_IDS` order and the first
    one that fires is reported.
    """
    norm = _normalise(text)
    low = norm.lower()
    if len(low) != len(norm):  # lower() is length-preserving after _normalise; be safe
        norm = low
    recall = _RECALL_RE.search(low)
    if recall is not None:
        return _refuse(RULE_RECALL_BLOCK_ESCAPE, norm[recall.start() : recall.end()])
    regions = _Regions(low)
    for rule, check in (
        (RULE_ROLE_HEADER, _role_header),
        (RULE_INSTRUCTION_OVERRIDE, _instruction_override),
    ):
        span = check(low, regions)
        if span is not None:
            return _refuse(rule, norm[span[0] : span[1]])
    return _ALLOWED
