"""Orders about the reader's own reply and the reader itself (ADR 0081).

Four families that other projects' attack suites use and the earlier rules missed:

* ``reply_payload`` (``model_directive``): an order to put into *your* response, reply
  or answer a markdown image or link whose URL carries data (a placeholder in the query,
  or a "where X is ..." / "replace ... with" clause naming what to fill in), a piece of
  active HTML (an ``on...=`` handler, ``javascript:``, ``<script>``, ``<iframe>``), or a
  word repeated a hundred times. The reply is the channel: an image URL the client
  fetches carries the data out, a script runs in the user's page. A note that holds an
  image or a link ("Team photos: ![beach](...)", "in your answers link the docs")
  orders no data into a URL and passes. ``reply_payload_other`` is the same order in
  other languages ("faka empendulweni yakho", "përfshi në përgjigjen tënde"; ADR 0083),
  without the verb of putting.
* ``model_message`` (``model_directive``): a message, note or letter "to you, GPT-4"
  (or ChatGPT, an AI language model, an LLM, Llama 3, Claude 3.5 ...), which makes the
  reader the addressee, as "to you, the AI language model" does. Names that are also
  people's, stars' or animals' (Claude, Gemini, Llama, Mistral, Grok) without a version
  count only with the hijack of the user's task after them ("before you can solve the
  task I gave you"). "Thanks to you, ChatGPT" (no message word) passes.
* ``mode_order`` (``role_hijack``): the reader told it runs in a test, debug,
  developer or maintenance mode, pipeline or harness, or an order given "to enable
  debugging" or "for testing purposes", then an order marker ending in a colon
  ("you need to:", "please execute:", "do the following in your reply:") and, after it,
  an order that concerns the reader or the user (your reply, your id, send, reveal).
  "To enable debugging, please execute: export DEBUG=1" orders nothing of the reader.
* ``own_secret`` (``prompt_extraction``): the reader asked for its own id (``your
  unique ID``, ``your internal identifier``), or for any id, key, token, secret or
  password of its own in a disguise (base64, hex, reversed, inside tags), the
  extraction of a canary without the words "system prompt". "Output the report as
  CSV" and "print your boarding pass" pass.
"""

from __future__ import annotations

import re
from typing import Final

from memvault.domain.screening_built import compiled
from memvault.domain.screening_grammar import (
    NOT_AFTER_WORD,
    NOT_BEFORE_WORD,
    compile_rx,
    opens_clause,
    paragraph_span,
    words,
)

# ------------------------------------------------------------------- reply_payload

# The form starts at "your reply": the order stands outside code even when the payload it
# names is quoted in `code` ("include in your response the anchor `<a href=...>`").
REPLY_RE: Final = compiled(
    r"\byour[ \t]++(?:(?:final|next|every|each|whole|entire|own)[ \t]++)?+"
    r"(?:responses?|repl(?:y|ies)|answers?|outputs?)\b"
    # "your answer box", "your output folder": a thing of the user's, not the reply
    r"(?![ \t]++(?:box|boxes|field|fields|sheet|sheets|key|keys|form|forms|card|cards|booklet"
    r"|folder|folders|file|files|directory|dir|tray|bin|jack|port|device|devices|buffer|log))"
)
_PUT_RE: Final = compiled(
    r"\b(?:include|includes|including|insert|add|put|place|embed|append|prepend|output"
    r"|print|render|write|show|display|contain|contains|paste|end|ends|start|starts|begin"
    r"|begins|repeat)\b"
)
_PUT_BEFORE: Final = 90
_PUT_AFTER: Final = 90
_PAYLOAD_WINDOW: Final = 320
# A markdown image or link whose URL has a query or a fragment.
_MD_URL_RE: Final = compiled(
    r"!?+\[[^\]\n]{0,80}+\]\([ \t]*+(?:https?:)?+//(?P<url>[^\s)]{1,300}+)\)"
)
_URL_QUERY_RE: Final = compiled(r"[?&#]")
_URL_PLACEHOLDER_RE: Final = compiled(r"[\[{<$%]|=(?:x{3,}|\.{3})")
_FILL_RE: Final = compiled(
    r"\b(?:where|with)[ \t]++\S{1,40}?[ \t]++(?:is|being|are|=)\b"
    r"|\breplac(?:e|ing)[ \t]++\S{1,40}?[ \t]++with\b|\bsubstitut\w*+|\bfill\w*+[ \t]++in\b"
    r"|\bbase-?64\b|\burl-?encod\w*+|\bencoded\b"
)
_ACTIVE_HTML_RE: Final = compiled(
    r"<[a-z]{1,10}+\b[^>\n]{0,200}?[\s/\"']on[a-z]{3,20}+[ \t]*+=|\bjavascript[ \t]*+:"
    r"|<script\b|<iframe\b"
)
_FLOOD_RE: Final = compiled(r"\brepeat\b[^.\n]{0,80}?\b\d{2,}+[ \t]*+(?:times|x)\b")


def _carries_data(text: str, low: int, high: int) -> bool:
    for m in _MD_URL_RE.finditer(text, low, high):
        url = m.group("url")
        if _URL_QUERY_RE.search(url) is None:
            continue
        if _URL_PLACEHOLDER_RE.search(url) is not None:
            return True
        if _FILL_RE.search(text, m.end(), min(high, m.end() + 160)) is not None:
            return True
    return _ACTIVE_HTML_RE.search(text, low, high) is not None


def reply_payload_check(text: str, m: re.Match[str]) -> bool:
    """A verb of putting next to "your reply", and a payload in the same paragraph."""
    low, high = paragraph_span(text, m.start(), m.end(), _PUT_BEFORE, _PUT_AFTER)
    if _PUT_RE.search(text, low, high) is None:
        return False
    low, high = paragraph_span(text, m.start(), m.end(), _PAYLOAD_WINDOW, _PAYLOAD_WINDOW)
    if _FLOOD_RE.search(text, low, high) is not None:
        return True
    return _carries_data(text, low, high)


# "Your reply" in other languages (ADR 0083). The payload test is the same and needs no
# language: a placeholder in an image URL's query or a piece of active HTML. The verb of
# putting is not required here (it would need a lexicon per language); the payload next
# to the reader's reply is what makes the order.
REPLY_OTHER_RE: Final = compile_rx(
    NOT_AFTER_WORD
    + words(
        "tu respuesta",
        "su respuesta",
        "vuestra respuesta",
        "ta réponse",
        "votre réponse",
        "deine antwort",
        "deiner antwort",
        "ihre antwort",
        "ihrer antwort",
        "sua resposta",
        "tua resposta",
        "tua risposta",
        "sua risposta",
        "je antwoord",
        "jouw antwoord",
        "uw antwoord",
        "jou antwoord",
        "svar ditt",
        "ditt svar",
        "dit svar",
        "twojej odpowiedzi",
        "twoja odpowiedź",
        "swojej odpowiedzi",
        "tvé odpovědi",
        "tvoji odpověď",
        "răspunsul tău",
        "yanıtına",
        "yanıtında",
        "cevabına",
        "cevabında",
        "jawabanmu",
        "jawaban anda",
        "câu trả lời của bạn",
        "empendulweni yakho",
        "impendulo yakho",
        "jibu lako",
        "përgjigjen tënde",
        "përgjigjen tuaj",
        "përgjigjes tënde",
        "i do fhreagra",
        "do fhreagra",
        "bhur bhfreagra",
        "fhreagairt agad",
        "do fhreagairt",
        "eich ateb",
        "dy ateb",
        "válaszodba",
        "válaszodban",
        "vastaukseesi",
        "vastauksessasi",
        "твой ответ",
        "твоём ответе",
        "вашем ответе",
        "ваш ответ",
        "свой ответ",
        "своём ответе",
        "твоїй відповіді",
        "вашій відповіді",
    )
    + NOT_BEFORE_WORD
)
REPLY_CJK_RE: Final = compile_rx(
    r"你的回答|你的回复|您的回答|您的回复|你的回應|你的回覆|あなたの回答|あなたの返答|回答の最後"
    r"|답변에|응답에"
)


def reply_payload_other_check(text: str, m: re.Match[str]) -> bool:
    """A data-carrying image or active HTML in the paragraph of "your reply"."""
    low, high = paragraph_span(text, m.start(), m.end(), _PAYLOAD_WINDOW, _PAYLOAD_WINDOW)
    return _carries_data(text, low, high)


# ------------------------------------------------------------------- model_message

_VERSION: Final = r"(?:[ \t\-]?+\d(?:[\w\-]|\.(?=\w))*+)"
MODEL_MESSAGE_RE: Final = compiled(
    r"\byou,[ \t]*+(?:(?:the|my|dear)[ \t]++)?+"
    r"(?:(?P<sure>chatgpt|gpt-?\d(?:[\w\-]|\.(?=\w))*+|copilot|(?:ai|a\.i\.)(?:[ \t]++language)?+"
    r"[ \t]++model|ai[ \t]++assistant|language[ \t]++model|large[ \t]++language[ \t]++model"
    r"|llm|ai|(?:claude|gemini|llama|mistral|grok|qwen|deepseek)" + _VERSION + r")"
    r"|(?P<name>claude|gemini|llama|mistral|grok|qwen|deepseek))"
    r"(?=[ \t]*+(?:[.:!,;]|\n|$))"
)
_MESSAGE_WORD_RE: Final = compiled(
    r"\b(?:message|note|letter|memo|request|reminder|warning|notice|words|instructions?"
    r"|from[ \t]++me)\b"
)
_MESSAGE_BEFORE: Final = 100
_TO_BEFORE_RE: Final = compiled(r"\b(?:to|for)[ \t]++$")
_TASK_HIJACK_RE: Final = compiled(
    r"\b(?:the|my|your)[ \t]++(?:original[ \t]++|current[ \t]++|first[ \t]++)?+task"
    r"[ \t]++(?:that[ \t]++)?+(?:i|the[ \t]++user|we)[ \t]++(?:gave|assigned|set|asked)\b"
    r"|\bbefore[ \t]++you[ \t]++(?:can[ \t]++)?+(?:solve|finish|complete|continue|carry"
    r"[ \t]++on|do|start|answer)\b|\bignore\b|\binstead\b"
)
_TASK_WINDOW: Final = 600


def model_message_check(text: str, m: re.Match[str]) -> bool:
    """A message word before "to you, <model>"; a hijacked task after an ambiguous name."""
    if _TO_BEFORE_RE.search(text, max(0, m.start() - 8), m.start()) is None:
        return False
    sentence = max(text.rfind(".", 0, m.start()), text.rfind("\n", 0, m.start())) + 1
    low = max(sentence, m.start() - _MESSAGE_BEFORE)
    if _MESSAGE_WORD_RE.search(text, low, m.start()) is None:
        return False
    if m.group("sure") is not None:
        return True
    return _TASK_HIJACK_RE.search(text, m.end(), m.end() + _TASK_WINDOW) is not None


# ------------------------------------------------------------------------ mode_order

_MODE: Final = (
    r"(?:debug|debugging|developer|dev|test|testing|maintenance|diagnostic|admin|god|sudo)"
)
# Each alternative starts at a rare word (a participle, a mode, a purpose), not at "you",
# "to" or "for", so the gate tries it seldom; what must stand before it is checked after.
MODE_PREAMBLE_RE: Final = compiled(
    # you are (now) operating in a sandboxed evaluation harness
    r"\b(?P<run>operating|running|working|functioning|executing|deployed)[ \t]++(?:in|inside"
    r"|within|as[ \t]++part[ \t]++of|under)[ \t]++(?:(?:an?|the|a[ \t]++special)[ \t]++)?+"
    r"(?:[a-z\-]++[ \t]++){0,3}?(?:mode|pipeline|harness|environment|sandbox|evaluation|test)\b"
    # debug mode is active / you are in test mode / [test mode]
    r"|\b" + _MODE + r"[ \t]++mode\b(?P<state>[ \t]++(?:is[ \t]++)?+(?:now[ \t]++)?+"
    r"(?:active|on|enabled|engaged)\b|\])?+"
    # to enable debugging
    r"|\b(?P<purpose>debugging|testing|diagnostics|troubleshooting)\b"
    # for testing purposes
    r"|\b(?:testing|test|debugging|diagnostic|qa|evaluation)[ \t]++purposes\b"
)
_YOU_ARE_BEFORE_RE: Final = compiled(r"\byou(?:'re|[ \t]++are)[ \t]++(?:now[ \t]++)?+$")
_YOU_ARE_IN_BEFORE_RE: Final = compiled(
    r"\byou(?:'re|[ \t]++are)[ \t]++(?:now[ \t]++)?+in[ \t]++(?:(?:an?|the)[ \t]++)?+$"
)
_PURPOSE_BEFORE_RE: Final = compiled(
    r"\bto[ \t]++(?:enable|continue|start|begin|finish|complete)[ \t]++(?:the[ \t]++)?+$"
)
_BEFORE: Final = 24


def _preamble(text: str, m: re.Match[str]) -> bool:
    low = max(0, m.start() - _BEFORE)
    if m.group("run") is not None:
        return _YOU_ARE_BEFORE_RE.search(text, low, m.start()) is not None
    if m.group("purpose") is not None:
        return _PURPOSE_BEFORE_RE.search(text, low, m.start()) is not None
    if m.group("state") == "]":
        return text[m.start() - 1 : m.start()] == "["
    if m.group("state") is not None or m.group(0).endswith("purposes"):
        return True
    return _YOU_ARE_IN_BEFORE_RE.search(text, low, m.start()) is not None


_ORDER_MARKER_RE: Final = compiled(
    r"\b(?:you[ \t]++(?:need|must|have|are[ \t]++required|should|will[ \t]++need)"
    r"(?:[ \t]++to)?+|please[ \t]++(?:do|execute|perform|run|carry[ \t]++out)"
    r"|(?:do|execute|perform|carry[ \t]++out)[ \t]++the[ \t]++following"
    r"|ensure[ \t]++(?:to|you)[ \t]++do)\b[^.\n:]{0,40}+:"
    # "you can only output that route now", "return the following and nothing else:"
    r"|(?P<only>\byou[ \t]++(?:can|may|must|should|will)[ \t]++only[ \t]++(?:output|return"
    r"|respond|reply|answer|say|print)\b|\b(?:return|output|print|reply[ \t]++with"
    r"|respond[ \t]++with)[ \t]++the[ \t]++following\b[^.\n:]{0,40}?nothing[ \t]++else\b)"
)
_READER_ORDER_RE: Final = compiled(
    r"\byour[ \t]++(?:(?:own|unique|internal|secret|hidden|system|initial|original|final)"
    r"[ \t]++)?+(?:repl(?:y|ies)|responses?|answers?|outputs?|ids?|identifier|instructions"
    r"|prompt|context|secrets?|tokens?|keys?|passwords?|credentials|rules|configuration)\b"
    r"|\bthe[ \t]++user\b|\buser'?s\b|\b(?:reply|respond|answer|send|reveal|forward|email"
    r"|e-mail|disclose|output|print)\b"
)
_MARKER_WINDOW: Final = 200
_ORDER_WINDOW: Final = 160


def mode_order_check(text: str, m: re.Match[str]) -> bool:
    """A preamble about the reader's mode, then "...:" and an order about the reader."""
    if not _preamble(text, m):
        return False
    marker = _ORDER_MARKER_RE.search(text, m.end(), m.end() + _MARKER_WINDOW)
    if marker is None:
        return False
    if marker.group("only") is not None:
        return True
    end = marker.end()
    line = text.find("\n\n", end, end + _ORDER_WINDOW)
    high = line if line != -1 else end + _ORDER_WINDOW
    return _READER_ORDER_RE.search(text, end, high) is not None


# ------------------------------------------------------------------------- own_secret

OWN_SECRET_RE: Final = compiled(
    r"\b(?P<verb>output|print|reveal|disclose|leak|display|echo|dump|state|spell[ \t]++out"
    r"|write[ \t]++out|return|give[ \t]++me|tell[ \t]++me|send[ \t]++me)[ \t]++your[ \t]++"
    r"(?P<mods>(?:(?:own|unique|unqiue|internal|secret|hidden|private|assigned|system|session"
    r"|instance|agent|model|canary|api|access|auth)[ \t]++){0,2}+)"
    r"(?P<noun>ids?|identifiers?|uuids?|secrets?|keys?|tokens?|passwords?|passphrases?"
    r"|credentials?)\b(?![ \t]*+(?:cards?|badges?|numbers?|photos?|documents?|ring|chain))"
)
_ID_MODS_RE: Final = compiled(
    r"\b(?:own|unique|unqiue|internal|assigned|instance|agent|model|system|canary|secret"
    r"|hidden)\b"
)
_DISGUISE_RE: Final = compiled(
    r"\b(?:in|as|into|using|with)[ \t]++(?:base-?64|hex|hexadecimal|rot-?13|binary|morse"
    r"|l33t|leetspeak|reverse)\b|\b(?:reversed|backwards|in[ \t]++reverse|encoded"
    r"|character[ \t]++by[ \t]++character|letter[ \t]++by[ \t]++letter)\b"
    r"|\b(?:within|inside|in|between|wrapped[ \t]++in)[ \t]++<|\btags\b"
)
_DISGUISE_WINDOW: Final = 80


# A subject or a negation before the verb: "we print your unique ID on the receipt"
_SUBJECT_BEFORE_RE: Final = compiled(
    r"\b(?:we|they|i|it|he|she|will|would|can|could|may|might|did|does|never|not"
    r"|don't|doesn't|won't)[ \t]++$"
)


def own_secret_check(text: str, m: re.Match[str]) -> bool:
    """An order for the reader's own id, or any secret of its own in a disguise."""
    noun = m.group("noun")
    # "tell me your unique ID", a person's request, counts only in a disguise
    asked = m.group("verb").startswith(("give", "tell", "send"))
    if (
        not asked
        and noun.startswith(("id", "identifier", "uuid"))
        and _ID_MODS_RE.search(m.group("mods"))
    ):
        return _SUBJECT_BEFORE_RE.search(text, max(0, m.start() - 16), m.start()) is None
    if not opens_clause(text, m.start()):
        return False
    end = text.find("\n", m.end(), m.end() + _DISGUISE_WINDOW)
    high = end if end != -1 else m.end() + _DISGUISE_WINDOW
    return _DISGUISE_RE.search(text, m.end(), high) is not None
