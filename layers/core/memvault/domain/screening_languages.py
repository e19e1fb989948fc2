"""Write-screening rules in languages other than English.

Each language gets the same families as English where attacks are common (instruction
override everywhere; role hijack and prompt extraction for the larger ones), written as
override verb x prior-context object x instruction noun, in the language's own word
order. Patterns are written in natural spelling and folded like the text (accents
dropped, lower case), so ``instrucciones anteriores`` also matches ``INSTRUCCIONES
ANTERIORES`` and ``instrucciónes anteriores``.

Only instruction nouns count (instructions, rules, directives, prompts...): "ignora el
correo anterior" (the previous e-mail) passes in every language, as in English.
Languages whose imperative has the same form as a description ("el modelo ignora las
instrucciones anteriores") are checked for an imperative the way English is (the verb
opens a clause); languages with a distinct imperative form (Russian, Polish, Turkish,
Korean, Japanese, Hindi, Indonesian, Arabic) are not. Chinese has no imperative form:
a verb right after 会, 不, 别, 没, 被, 可能 ("would", "not", "may") is a description or a
negation and passes. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Final

from memvault.domain.screening_built import compiled
from memvault.domain.screening_grammar import (
    CJK_SEP,
    NOT_BEFORE_WORD,
    RULE_INSTRUCTION_OVERRIDE,
    RULE_MODEL_DIRECTIVE,
    RULE_PROMPT_EXTRACTION,
    RULE_ROLE_HIJACK,
    SEP,
    alt,
    cjk,
    compile_rx,
    inside_word,
    opens_clause,
    opt,
    words,
)
from memvault.domain.screening_languages_more import MORE_LANGUAGE_FORMS
from memvault.domain.screening_reply_languages import REPLY_LANGUAGE_FORMS
from memvault.domain.screening_reply_languages_more import REPLY_LANGUAGE_MORE_FORMS
from memvault.domain.screening_rules import (
    Form,
    always,
    imperative,
    word_start,
)

# Topic qualifiers, in the languages with an imperative check: "ignora las instrucciones
# anteriores sobre la instalación" is a note about the installation.
_SCOPE_RE: Final = compile_rx(
    r"[\s*_~]*+,?+[\s*_~]*+(?:sobre|acerca\s++de|respecto\s++(?:a|de)|en\s++cuanto\s++a|para"
    r"|del|de\s++la|de\s++los|de\s++las|relativas?\s++a|referentes?\s++a|sur|pour|concernant"
    r"|au\s++sujet\s++d|a\s++propos\s++d|du|des|relatives?\s++a|zu|zur|zum|fur|uber|bezuglich"
    r"|betreffend|vom|von|hinsichtlich|beim|do|da|dos|das|a\s++respeito\s++d|su|sul|sulla|sui"
    r"|sulle|per|riguardo|riguardanti|circa|della|dello|dei|delle|over|voor|van|betreffende"
    r"|om|for|kring|gallande|hakkinda|tentang|mengenai|untuk|dari|о|об|про|по|для|насчет"
    r"|касательно|относительно|dla|w\s++sprawie|na\s++temat|dotyczace|od|з|щодо|про)"
    + NOT_BEFORE_WORD
)
_SELF_SCOPE_RE: Final = compile_rx(
    r"[\s*_~]*+(?:(?:esta|este|la|el|cette|ce|la|le|diese|dieser|dieses|die|das|der|questa"
    r"|questo|la|il|esta|este|a|o|deze|dit|de|het|эту|этот|этого|этой|этом)\s++)?+"
    r"(?:conversacion|conversation|unterhaltung|gesprach|conversazione|conversa|gesprek"
    r"|sesion|session|sitzung|sessione|sessao|chat|tarea|tache|aufgabe|compito|tarefa|taak"
    r"|ahora|maintenant|jetzt|ora|adesso|agora|nu|sistema|systeme|system|asistente|assistant"
    r"|assistent|assistente|ia|ki|ai|openai|usuario|utilisateur|benutzer|utente|gebruiker"
    r"|разговор\w*+|бесед\w*+|чат\w*+|сесси\w*+|систем\w*+)" + NOT_BEFORE_WORD
)


def _imperative_scoped(text: str, m: re.Match[str]) -> bool:
    """An imperative whose object is not narrowed to a topic of its own."""
    if not imperative(text, m):
        return False
    scope = _SCOPE_RE.match(text, m.end())
    if scope is None:
        return True
    return _SELF_SCOPE_RE.match(text, scope.end(), scope.end() + 48) is not None


def _scoped(text: str, m: re.Match[str]) -> bool:
    """A morphological imperative (no clause test) not narrowed to a topic."""
    if inside_word(text, m.start()):
        return False
    scope = _SCOPE_RE.match(text, m.end())
    if scope is None:
        return True
    return _SELF_SCOPE_RE.match(text, scope.end(), scope.end() + 48) is not None


_SLAVIC_NOUN_END_RE: Final = compile_rx(
    r"(?:инструкци|указани|правил|директив|команд|промпт|ограничени|установк|установок|вказів"
    r"|настанов|інструкці|instrukcj|polece|zasad|regul|wytyczn|rozkaz|komend|prompt|ograniczen"
    r"|wskazow|dyrektyw|pokyn|pravidl|instrukc)\w*+$"
)
# What may follow such a noun in an order: a conjunction, a position, or punctuation.
_SLAVIC_ORDER_NEXT_RE: Final = compile_rx(
    r"[\s*_~]*+(?:[,;:.!?\-\u2013\u2014)\]]|$|(?:и|а|но|или|и|та|і|або|i|a|oraz|ale|lub|albo"
    r"|ani|potem|теперь|затем|потом|выше|ранее|powyzej|wczesniej|przedtem|систем\w*+"
    r"|system\w*+|чат\w*+|разговор\w*+|модел\w*+|ии|openai|вам|тебе|ci|wam)(?![^\W_]))"
)


def _slavic_scoped(text: str, m: re.Match[str]) -> bool:
    """Like :func:`_scoped`, and "instrukcje karmienia" (the feeding instructions, a
    genitive after the noun) is about a topic too."""
    if not _scoped(text, m):
        return False
    if _SLAVIC_NOUN_END_RE.search(m.group()) is None:
        return True
    return _SLAVIC_ORDER_NEXT_RE.match(text, m.end()) is not None


def _clause_start(text: str, m: re.Match[str]) -> bool:
    """An object-first order ("Alle vorherigen Anweisungen ignorieren!") opens a clause."""
    return not inside_word(text, m.start()) and opens_clause(text, m.start())


# =========================================================================== Spanish

_ES_VERB: Final = alt(
    [
        words(
            "ignora",
            "ignore",
            "ignoren",
            "ignorad",
            "ignorar",
            "ignores",
            "olvida",
            "olvide",
            "olviden",
            "olvidad",
            "olvidar",
            "olvides",
            "olvidate de",
            "olvidese de",
            "olvidense de",
            "descarta",
            "descarte",
            "descarten",
            "descartar",
            "omite",
            "omita",
            "omitan",
            "omitir",
            "desestima",
            "desestime",
            "desatiende",
            "desatienda",
            "anula",
            "anule",
            "borra",
            "borre",
            "elimina",
            "elimine",
            "salta",
            "saltate",
            "pasa por alto",
            "pase por alto",
            "haz caso omiso de",
            "haga caso omiso de",
            "hagan caso omiso de",
            "haz caso omiso a",
            "deja de lado",
            "deja atras",
            "deja de seguir",
            "deja de obedecer",
            "prescinde de",
            "sobrescribe",
            "evita",
        ),
        words("no", "ya no", "nunca")
        + SEP
        + words(
            "sigas",
            "siga",
            "sigan",
            "seguir",
            "obedezcas",
            "obedezca",
            "obedezcan",
            "cumplas",
            "cumpla",
            "respetes",
            "respete",
            "tengas en cuenta",
            "tenga en cuenta",
            "tomes en cuenta",
            "tome en cuenta",
            "hagas caso a",
            "hagas caso de",
            "haga caso a",
            "haga caso de",
            "hagan caso a",
            "hagan caso de",
            "prestes atencion a",
            "preste atencion a",
        ),
    ]
)
_ES_NOUN: Final = words(
    "instrucciones",
    "instruccion",
    "indicaciones",
    "ordenes",
    "reglas",
    "normas",
    "directrices",
    "directivas",
    "pautas",
    "consignas",
    "comandos",
    "mensajes",
    "prompts",
    "prompt",
    "restricciones",
    "limitaciones",
    "politicas",
    "programacion",
    "prompt del sistema",
    "mensaje del sistema",
    "instrucciones del sistema",
)
_ES_POS: Final = words(
    "anteriores",
    "previas",
    "precedentes",
    "de antes",
    "de arriba",
    "de mas arriba",
    "dadas",
    "recibidas",
    "originales",
    "iniciales",
    "hasta ahora",
    "mencionadas",
    "anteriormente dadas",
    "previamente dadas",
    "que te dieron",
    "que se te dieron",
    "que te han dado",
    "que le dieron",
    "que se le dieron",
    "que recibiste",
    "que has recibido",
    "que recibio",
    "que te pasaron",
    "que te ensenaron",
    "arriba",
    "de siempre",
)
_ES_DET: Final = opt(
    words(
        "todas las",
        "todos los",
        "toda la",
        "todo el",
        "cualquier",
        "cada una de las",
        "las",
        "los",
        "la",
        "el",
        "tus",
        "sus",
        "vuestras",
        "estas",
        "esas",
        "a las",
        "a los",
        "de las",
        "de los",
        "con las",
    )
)
_ES_RE: Final = compile_rx(
    _ES_VERB
    + SEP
    + alt(
        [
            _ES_DET + opt(words("anteriores", "previas", "primeras")) + _ES_NOUN + SEP + _ES_POS,
            _ES_DET + words("anteriores", "previas") + SEP + _ES_NOUN,
            words("tus", "sus", "vuestras", "todas tus", "todas sus")
            + SEP
            + _ES_NOUN
            + "(?:"
            + SEP
            + words("originales", "iniciales", "de sistema", "del sistema")
            + ")?+",
            r"todo(?:\s++lo)?+\s++(?:que\s++)?+(?:(?:se|te|le|me|nos|les)\s++)?+(?:(?:ha|han|habia"
            r"|habian)\s++)?+(?:dijo|dijeron|dicho|dije|escribio|escribi|escribiste|escrito|indico"
            r"|indicaron|indicado|menciono|mencionado|ordeno|ordenado|explico|explicado|enseno"
            r"|ensenado|sabes|aprendiste|aprendido)(?:\s++(?:antes|anteriormente|hasta\s++ahora"
            r"|arriba|previamente))?+",
            words(
                "todo lo anterior",
                "lo anterior",
                "todo lo de arriba",
                "todo lo que esta arriba",
                "todo lo que precede",
                "todo lo que te dijeron",
                "todo lo que se te dijo",
                "todo lo que te han dicho",
                "todo lo que le dijeron",
                "todo lo que se le dijo",
                "todo lo que le han dicho",
                "todo lo que sabes",
                "todo lo que aprendiste",
                "todo lo que has aprendido",
                "todo lo dicho",
                "todo lo previo",
                "todo lo que te dije",
            ),
        ]
    )
    + NOT_BEFORE_WORD
)

# =========================================================================== French

_FR_VERB: Final = alt(
    [
        words(
            "ignore",
            "ignorez",
            "ignorer",
            "ignorons",
            "oublie",
            "oubliez",
            "oublier",
            "oublions",
            "neglige",
            "negligez",
            "ecarte",
            "ecartez",
            "annule",
            "annulez",
            "efface",
            "effacez",
            "abandonne",
            "abandonnez",
            "contourne",
            "contournez",
            "outrepasse",
            "outrepassez",
            "saute",
            "sautez",
            "supprime",
            "supprimez",
            "passe outre",
            "passez outre",
            "mets de cote",
            "mettez de cote",
            "laisse tomber",
            "laissez tomber",
            "fais abstraction",
            "faites abstraction",
            "fais fi",
            "faites fi",
        ),
        words("ne", "n'")
        + opt("")
        + words(
            "tiens pas compte",
            "tenez pas compte",
            "tiens plus compte",
            "tenez plus compte",
            "suis pas",
            "suivez pas",
            "suis plus",
            "suivez plus",
            "obeis plus a",
            "obeissez plus a",
            "obeis pas a",
            "obeissez pas a",
            "respecte plus",
            "respectez plus",
            "respecte pas",
            "respectez pas",
            "prends pas en compte",
            "prenez pas en compte",
            "prends plus en compte",
            "prenez plus en compte",
            "applique plus",
            "appliquez plus",
        ),
        "n'"
        + words(
            "obeis plus a",
            "obeissez plus a",
            "obeis pas a",
            "obeissez pas a",
            "applique plus",
            "appliquez plus",
        ),
    ]
)
_FR_DET: Final = opt(
    alt(
        [
            words(
                "toutes les",
                "tous les",
                "l'ensemble des",
                "chacune des",
                "les",
                "la",
                "le",
                "tes",
                "vos",
                "ces",
                "de toutes les",
                "de tous les",
                "des",
                "du",
                "de la",
                "aux",
                "a toutes les",
            ),
            "(?:d|l)['\u2019]",
        ]
    )
)
_FR_NOUN: Final = words(
    "instructions",
    "instruction",
    "consignes",
    "consigne",
    "regles",
    "directives",
    "indications",
    "ordres",
    "commandes",
    "messages",
    "prompts",
    "prompt",
    "prompt systeme",
    "message systeme",
    "instructions systeme",
    "contraintes",
    "restrictions",
    "limites",
    "politiques",
    "programmation",
    "directions",
)
_FR_POS: Final = words(
    "precedentes",
    "precedents",
    "anterieures",
    "anterieurs",
    "ci-dessus",
    "ci dessus",
    "plus haut",
    "d'avant",
    "donnees",
    "recues",
    "initiales",
    "originales",
    "prealables",
    "qu'on t'a donnees",
    "qu'on vous a donnees",
    "qu'on t'a transmises",
    "qu'on t'a fixees",
    "que tu as recues",
    "que vous avez recues",
    "jusqu'ici",
    "jusqu'a present",
    "deja donnees",
    "du dessus",
    "au-dessus",
    "passees",
    "d'origine",
)
_FR_RE: Final = compile_rx(
    _FR_VERB
    + SEP
    + alt(
        [
            "(?:"
            + words("de", "des", "du", "d'")
            + SEP
            + ")?+"
            + _FR_DET
            + opt(words("precedentes", "anciennes", "premieres"))
            + _FR_NOUN
            + SEP
            + _FR_POS,
            _FR_DET + words("precedentes", "anciennes") + SEP + _FR_NOUN,
            opt(words("de", "des"))
            + words("tes", "vos", "toutes tes", "toutes vos")
            + SEP
            + _FR_NOUN,
            opt(words("de", "d'"))
            + words(
                "tout ce qui precede",
                "tout ce qui est ecrit ci-dessus",
                "tout ce qui est ecrit plus haut",
                "tout ce qui a ete dit",
                "tout ce qui est au-dessus",
                "tout ce qui vient avant",
                "tout ce qu'on t'a dit",
                "tout ce qu'on vous a dit",
                "tout ce que l'on t'a dit",
                "tout ce que l'on vous a dit",
                "tout ce que tu sais",
                "tout ce que tu as appris",
                "tout ce que vous savez",
                "tout ce que vous avez appris",
                "tout ce que je t'ai dit",
                "tout ce que je vous ai dit",
                "ce qui precede",
                "tout ce qui a ete ecrit avant",
            ),
        ]
    )
    + NOT_BEFORE_WORD
)

# =========================================================================== German

_DE_POS: Final = words(
    "vorherigen",
    "vorherige",
    "vorigen",
    "vorige",
    "bisherigen",
    "bisherige",
    "fruheren",
    "fruhere",
    "obigen",
    "obige",
    "vorangegangenen",
    "vorangehenden",
    "vorstehenden",
    "vorhergehenden",
    "ursprunglichen",
    "ursprungliche",
    "alten",
    "anfanglichen",
    "erhaltenen",
    "gegebenen",
    "oben genannten",
    "oben stehenden",
    "zuvor gegebenen",
)
_DE_NOUN: Final = words(
    "anweisungen",
    "anweisung",
    "instruktionen",
    "anordnungen",
    "befehle",
    "regeln",
    "richtlinien",
    "vorgaben",
    "vorschriften",
    "direktiven",
    "systemanweisungen",
    "systemprompt",
    "system-prompt",
    "systemnachricht",
    "prompts",
    "prompt",
    "nachrichten",
    "einschrankungen",
    "beschrankungen",
    "weisungen",
    "hinweise",
    "instruktion",
    "programmierung",
)
_DE_DET: Final = opt(
    words(
        "alle",
        "samtliche",
        "jegliche",
        "die",
        "deine",
        "ihre",
        "eure",
        "diese",
        "alle deine",
        "alle ihre",
        "all deine",
        "den",
        "der",
        "alle diese",
    )
)
_DE_NP: Final = alt(
    [
        _DE_DET + _DE_POS + SEP + _DE_NOUN,
        _DE_DET
        + _DE_NOUN
        + SEP
        + words("von oben", "oben", "davor", "zuvor", "bisher", "bis jetzt"),
        words("deine", "ihre", "eure", "alle deine", "alle ihre") + SEP + _DE_NOUN,
    ]
)
_DE_VERB: Final = words(
    "ignoriere",
    "ignorier",
    "ignoriert",
    "ignorieren sie",
    "vergiss",
    "vergesst",
    "vergessen sie",
    "missachte",
    "missachtet",
    "missachten sie",
    "verwirf",
    "verwerft",
    "verwerfen sie",
    "uberspringe",
    "uberspring",
    "ubergehe",
    "ubergeh",
    "losche",
    "losch",
    "umgehe",
    "umgeh",
)
_DE_EVERYTHING: Final = words(
    "alles was dir bisher gesagt wurde",
    "alles was dir gesagt wurde",
    "alles was dir zuvor gesagt wurde",
    "alles was dir vorher gesagt wurde",
    "alles was ihnen gesagt wurde",
    "alles was ihnen bisher gesagt wurde",
    "alles was man dir gesagt hat",
    "alles was man ihnen gesagt hat",
    "alles bisherige",
    "alles vorherige",
    "alles obige",
    "alles oben",
    "alles davor",
    "alles zuvor gesagte",
    "alles vorher gesagte",
    "alles was oben steht",
    "alles was du weisst",
    "alles was du gelernt hast",
)
_DE_RE: Final = compile_rx(
    _DE_VERB
    + SEP
    + alt([_DE_NP, _DE_EVERYTHING.replace("alles" + SEP, "alles,?+" + SEP)])
    + NOT_BEFORE_WORD
    # befolge die vorherigen Anweisungen nicht mehr
    + "|"
    + words(
        "befolge",
        "befolgt",
        "beachte",
        "beachtet",
        "folge",
        "gehorche",
        "befolgen sie",
        "beachten sie",
    )
    + SEP
    + _DE_NP
    + SEP
    + words("nicht mehr", "nicht", "ab sofort nicht mehr", "ab jetzt nicht mehr")
    + NOT_BEFORE_WORD
    # setze alle vorherigen Anweisungen ausser Kraft
    + "|"
    + words("setze", "setzt", "setzen sie")
    + SEP
    + _DE_NP
    + SEP
    + words("ausser kraft", "auser kraft")
    + NOT_BEFORE_WORD
)
# Object first, verb last: "Bitte die obigen Anweisungen ignorieren."
_DE_VERB_LAST_RE: Final = compile_rx(
    _DE_NP
    + SEP
    + opt(words("bitte", "einfach", "sofort", "ab jetzt", "ab sofort", "jetzt"))
    + words(
        "ignorieren",
        "vergessen",
        "missachten",
        "verwerfen",
        "uberspringen",
        "nicht mehr beachten",
        "nicht beachten",
        "nicht mehr befolgen",
        "nicht befolgen",
        "ausser acht lassen",
        "auser acht lassen",
        "ausser kraft setzen",
        "auser kraft setzen",
        "links liegen lassen",
    )
    + NOT_BEFORE_WORD
)

# =========================================================================== Portuguese

_PT_VERB: Final = alt(
    [
        words(
            "ignore",
            "ignora",
            "ignorem",
            "ignorar",
            "esqueca",
            "esquece",
            "esquecam",
            "esquecer",
            "esqueca-se de",
            "esqueca se de",
            "desconsidere",
            "desconsidera",
            "desconsiderem",
            "desconsiderar",
            "descarte",
            "descarta",
            "descartem",
            "descartar",
            "despreze",
            "despreza",
            "anule",
            "anula",
            "apague",
            "apaga",
            "abandone",
            "abandona",
            "pule",
            "pula",
            "deixe de lado",
            "deixa de lado",
            "deixe de seguir",
            "pare de seguir",
            "passe por cima de",
        ),
        words("nao", "nunca", "ja nao")
        + SEP
        + words(
            "siga",
            "sigas",
            "sigam",
            "seguir",
            "obedeca",
            "obedecas",
            "obedecam",
            "considere",
            "considerem",
            "leve em conta",
            "leves em conta",
            "levem em conta",
            "respeite",
            "cumpra",
        ),
    ]
)
_PT_NOUN: Final = words(
    "instrucoes",
    "instrucao",
    "orientacoes",
    "ordens",
    "regras",
    "normas",
    "diretrizes",
    "diretivas",
    "comandos",
    "mensagens",
    "prompts",
    "prompt",
    "prompt do sistema",
    "mensagem do sistema",
    "instrucoes do sistema",
    "restricoes",
    "limitacoes",
    "politicas",
    "programacao",
    "indicacoes",
)
_PT_POS: Final = words(
    "anteriores",
    "previas",
    "acima",
    "de antes",
    "dadas",
    "recebidas",
    "originais",
    "iniciais",
    "ate agora",
    "precedentes",
    "que te foram dadas",
    "que lhe foram dadas",
    "que te deram",
    "que lhe deram",
    "que voce recebeu",
    "que recebeu",
    "que recebeste",
    "que te passaram",
    "que lhe passaram",
    "que te ensinaram",
    "que te mandaram seguir",
)
_PT_DET: Final = opt(
    words(
        "todas as",
        "todos os",
        "quaisquer",
        "qualquer",
        "as",
        "os",
        "suas",
        "seus",
        "tuas",
        "teus",
        "as suas",
        "os seus",
        "estas",
        "essas",
        "das",
        "dos",
    )
)
_PT_RE: Final = compile_rx(
    _PT_VERB
    + SEP
    + alt(
        [
            _PT_DET + opt(words("anteriores", "primeiras")) + _PT_NOUN + SEP + _PT_POS,
            _PT_DET + words("anteriores") + SEP + _PT_NOUN,
            words("suas", "seus", "tuas", "teus", "as suas", "os seus", "todas as suas")
            + SEP
            + _PT_NOUN,
            words(
                "tudo o que lhe disseram",
                "tudo o que te disseram",
                "tudo que lhe disseram",
                "tudo que te disseram",
                "tudo o que foi dito",
                "tudo que foi dito",
                "tudo o que lhe foi dito",
                "tudo o que te foi dito",
                "tudo acima",
                "tudo o que esta acima",
                "tudo que esta acima",
                "tudo o que voce sabe",
                "tudo que voce sabe",
                "tudo o que voce aprendeu",
                "tudo que voce aprendeu",
                "o que foi dito antes",
                "tudo isso acima",
                "tudo o que eu disse",
                "tudo anterior",
            ),
        ]
    )
    + NOT_BEFORE_WORD
)

# =========================================================================== Italian

_IT_VERB: Final = alt(
    [
        words(
            "ignora",
            "ignori",
            "ignorate",
            "ignorare",
            "dimentica",
            "dimentichi",
            "dimenticate",
            "dimenticare",
            "dimenticati di",
            "scorda",
            "scordati",
            "scordatevi",
            "scordati di",
            "trascura",
            "trascuri",
            "trascurate",
            "tralascia",
            "tralasciate",
            "scarta",
            "scartate",
            "salta",
            "saltate",
            "annulla",
            "annullate",
            "cancella",
            "cancellate",
            "metti da parte",
            "mettete da parte",
            "lascia perdere",
            "lasciate perdere",
            "smetti di seguire",
            "smettila di seguire",
            "aggira",
            "bypassa",
        ),
        "non"
        + SEP
        + words(
            "tenere conto",
            "tenete conto",
            "tenga conto",
            "seguire",
            "seguite",
            "segua",
            "obbedire",
            "ubbidire",
            "considerare",
            "considerate",
            "rispettare",
            "rispettate",
            "dare retta",
            "date retta",
            "fare caso",
        ),
    ]
)
_IT_NOUN: Final = words(
    "istruzioni",
    "istruzione",
    "indicazioni",
    "regole",
    "norme",
    "direttive",
    "linee guida",
    "ordini",
    "comandi",
    "messaggi",
    "prompt",
    "prompt di sistema",
    "messaggio di sistema",
    "istruzioni di sistema",
    "restrizioni",
    "limitazioni",
    "vincoli",
    "politiche",
    "programmazione",
    "consegne",
)
_IT_POS: Final = words(
    "precedenti",
    "sopra",
    "di sopra",
    "qui sopra",
    "anteriori",
    "date",
    "ricevute",
    "originali",
    "iniziali",
    "che ti sono state date",
    "che ti hanno dato",
    "che ti hanno passato",
    "fino ad ora",
    "finora",
    "di prima",
    "gia date",
    "sopraindicate",
    "sopracitate",
    "suddette",
    "ricevute finora",
)
_IT_DET: Final = opt(
    words(
        "di tutte le",
        "di tutti i",
        "tutte le",
        "tutti i",
        "tutti gli",
        "qualsiasi",
        "ogni",
        "qualunque",
        "delle",
        "dei",
        "degli",
        "della",
        "del",
        "le",
        "i",
        "gli",
        "la",
        "il",
        "le tue",
        "i tuoi",
        "alle",
        "ai",
    )
)
_IT_RE: Final = compile_rx(
    _IT_VERB
    + SEP
    + alt(
        [
            _IT_DET + opt(words("precedenti", "vecchie")) + _IT_NOUN + SEP + _IT_POS,
            _IT_DET + words("precedenti") + SEP + _IT_NOUN,
            opt(words("delle", "dei", "le", "i", "alle", "ai"))
            + words("tue", "tuoi", "sue", "suoi")
            + SEP
            + _IT_NOUN,
            opt(words("di"))
            + words(
                "tutto quello che ti e stato detto",
                "tutto cio che ti e stato detto",
                "tutto quello che ti hanno detto",
                "tutto quello che ti ho detto",
                "tutto quanto sopra",
                "tutto sopra",
                "tutto quello sopra",
                "tutto cio che precede",
                "tutto quanto detto prima",
                "tutto cio che sai",
                "tutto quello che sai",
                "tutto quello che hai imparato",
                "tutto il resto",
                "tutto quanto precede",
            ),
        ]
    )
    + NOT_BEFORE_WORD
)

# =========================================================================== Dutch, Nordic

_NL_RE: Final = compile_rx(
    alt(
        [
            words("negeer", "vergeet", "verwerp", "schrap", "omzeil", "sla", "laat"),
            words("volg", "gehoorzaam") + SEP + "(?=.{0,60}\\bniet\\b)",
        ]
    )
    + SEP
    + alt(
        [
            opt(words("alle", "al de", "elke", "iedere", "de", "je", "jouw", "uw", "deze", "die"))
            + words(
                "vorige",
                "eerdere",
                "voorgaande",
                "bovenstaande",
                "oorspronkelijke",
                "gegeven",
                "eerder gegeven",
            )
            + SEP
            + words(
                "instructies",
                "instructie",
                "opdrachten",
                "opdracht",
                "regels",
                "richtlijnen",
                "aanwijzingen",
                "bevelen",
                "commando's",
                "prompts",
                "prompt",
                "systeemprompt",
                "berichten",
                "beperkingen",
            ),
            words("je", "jouw", "uw", "al je", "al jouw")
            + SEP
            + words("instructies", "regels", "richtlijnen", "opdrachten", "beperkingen"),
            words(
                "alles wat je eerder is verteld",
                "alles wat je is verteld",
                "alles wat jou eerder is verteld",
                "alles wat u is verteld",
                "alles wat je tot nu toe is verteld",
                "alles hierboven",
                "alles wat hierboven staat",
                "al het voorgaande",
                "alles daarvoor",
                "alles wat je weet",
            ),
        ]
    )
    + NOT_BEFORE_WORD
)
_SV_DA_NO_RE: Final = compile_rx(
    words(
        "ignorera", "glom", "strunta i", "bortse fran", "ignorer", "glem", "se bort fra", "ignorér"
    )
    + SEP
    + alt(
        [
            opt(words("alla", "samtliga", "alle", "de", "dina", "dine", "era"))
            + words(
                "tidigare",
                "foregaende",
                "ovanstaende",
                "ursprungliga",
                "tidligere",
                "forrige",
                "ovenstaende",
                "opprinnelige",
            )
            + SEP
            + words(
                "instruktioner",
                "instruktionerna",
                "anvisningar",
                "anvisningarna",
                "regler",
                "reglerna",
                "riktlinjer",
                "riktlinjerna",
                "instruksjoner",
                "instruktioner",
                "instrukser",
                "regler",
                "retningslinjer",
                "kommandoer",
                "kommandon",
                "direktiv",
            ),
            words("dina", "dine", "era")
            + SEP
            + words("instruktioner", "regler", "riktlinjer", "instruksjoner", "retningslinjer"),
            words(
                "allt ovan",
                "allt du har fatt hora",
                "allt som sagts tidigare",
                "alt ovenfor",
                "alt du har fatt beskjed om",
                "alt tidligere",
            ),
        ]
    )
    + NOT_BEFORE_WORD
)

# =========================================================================== Slavic

_RU_NOUN: Final = (
    r"(?:инструкци\w*+|указани\w*+|правил\w*+|директив\w*+|команд\w*+|приказ\w*+|распоряжени\w*+"
    r"|промпт\w*+|ограничени\w*+|установк\w*+|установок|сообщени\w*+|требовани\w*+|подсказк\w*+"
    r"|системн\w*+\s++(?:промпт\w*+|инструкци\w*+|сообщени\w*+))"
)
_RU_POS: Final = (
    r"(?:предыдущ\w*+|прежн\w*+|прошл\w*+|ранн\w*+|ранее\s++(?:данн\w*+|полученн\w*+)"
    r"|вышеуказанн\w*+|вышеприведенн\w*+|вышеизложенн\w*+|изначальн\w*+|первоначальн\w*+"
    r"|исходн\w*+|стар\w*+|данн\w*+\s++(?:тебе|вам)|полученн\w*+|все\s++предыдущ\w*+)"
)
_RU_RE: Final = compile_rx(
    r"(?:игнорируй|игнорируйте|проигнорируй|проигнорируйте|забудь|забудьте|отбрось|отбросьте"
    r"|отмени|отмените|пропусти|пропустите|пренебреги|пренебрегите|сбрось|сбросьте|сотри"
    r"|сотрите|удали|удалите|обойди|обойдите|выкинь|выбрось|оставь|оставьте"
    r"|не\s++обращай(?:те)?+\s++внимания\s++на|не\s++следуй(?:те)?+|перестань(?:те)?+\s++следовать"
    r"|не\s++учитывай(?:те)?+|не\s++выполняй(?:те)?+|не\s++слушай(?:те)?+|не\s++подчиняйся"
    r"|не\s++подчиняйтесь|больше\s++не\s++следуй(?:те)?+)"
    + SEP
    + r"(?:(?:все|всё|любые|каждое|всех|всем|всеми|эти)\s++)*"
    + r"(?:(?:свои|своим|своих|своими|твои|твоим|твоих|твоими|ваши|вашим|ваших|вашими)\s++)?"
    + r"(?:"
    + _RU_POS
    + SEP
    + r"(?:\w++\s++)?"
    + _RU_NOUN
    + r"|"
    + _RU_NOUN
    + SEP
    + r"(?:выше|ранее|до\s++этого|до\s++сих\s++пор)"
    + r"|(?:свои|своим|своих|своими|твои|твоим|твоих|твоими|ваши|вашим|ваших|вашими)\s++"
    + _RU_NOUN
    + r"|(?:все|всё),?+\s++что\s++(?:тебе|вам)\s++(?:говорили|сказали|было\s++сказано|давали"
    r"|объясняли|писали)|(?:всё|все)\s++(?:выше|вышесказанное|вышенаписанное|предыдущее"
    r"|сказанное\s++ранее|написанное\s++выше)|(?:всё|все),?+\s++что\s++было\s++(?:выше|до\s++этого"
    r"|сказано))"
)
_UK_RE: Final = compile_rx(
    r"(?:ігноруй|ігноруйте|проігноруй|проігноруйте|забудь|забудьте|відкинь|відкиньте"
    r"|не\s++звертай(?:те)?+\s++уваги\s++на|не\s++виконуй(?:те)?+|не\s++дотримуйся)"
    + SEP
    + r"(?:(?:усі|всі|будь-які)\s++)*"
    r"(?:(?:попередн\w*+|минул\w*+|вищезазначен\w*+|раніше\s++надан\w*+|початков\w*+|свої"
    r"|своїм|своїх|твої|твоїм|твоїх|ваші|вашим|ваших)\s++)?+"
    r"(?:інструкці\w*+|вказівк\w*+|вказівок|правил\w*+|команд\w*+|директив\w*+|настанов\w*+)"
)
_PL_RE: Final = compile_rx(
    r"(?:zignoruj|zignorujcie|ignoruj|ignorujcie|zapomnij|zapomnijcie|pomin|pomincie|porzuc"
    r"|odrzuc|olej|nie\s++zwracaj\s++uwagi\s++na|nie\s++stosuj\s++sie\s++do|nie\s++przestrzegaj"
    r"|nie\s++wykonuj|przestan\s++stosowac\s++sie\s++do)"
    + SEP
    + r"(?:o\s++)?+(?:(?:wszystkie|wszystkich|wszelkie|wszelkich|kazde|swoje|twoje)\s++)*"
    r"(?:(?:poprzedn\w*+|wczesniejsz\w*+|powyzsz\w*+|dotychczasow\w*+|pierwotn\w*+|uprzedni\w*+"
    r"|otrzyman\w*+|podan\w*+|swoje|swoich|swoim|twoje|twoich|twoim|wasze|waszych)\s++"
    r"(?:instrukcj\w*+|polece\w*+|zasad\w*+|regul\w*+|wytyczn\w*+|rozkaz\w*+|komend\w*+"
    r"|prompt\w*+|ograniczen\w*+|wskazow\w*+|dyrektyw\w*+)|wszystko,?+\s++co\s++(?:ci|wam|panu|pani)\s++(?:wczesniej\s++|dotad\s++"
    r"|przedtem\s++)?+(?:powiedziano|kazano|przekazano)|wszystko\s++powyzej)" + NOT_BEFORE_WORD
)
_CS_RE: Final = compile_rx(
    r"(?:ignoruj|ignorujte|zapomen|zapomente|nedbej|nevsimej\s++si|neposlouchej)"
    + SEP
    + r"(?:(?:vsechny|vsech|veskere|sve|tve)\s++)*+(?:predchozi|predeslé|predesle|dosavadni"
    r"|vyse\s++uvedene|puvodni)\s++(?:instrukce|pokyny|pravidla|prikazy|smernice|omezeni)"
    + NOT_BEFORE_WORD
)

# =========================================================================== tr, id, vi, ro, el

_TR_RE: Final = compile_rx(
    r"(?:(?:onceki|yukaridaki|daha\s++onceki|eski|ilk|verilen|sana\s++verilen|size\s++verilen"
    r"|bundan\s++onceki|evvelki|mevcut|orijinal)\s++)+(?:(?:tum|butun|her)\s++)?+"
    r"(?:talimat\w*+|kural\w*+|yonerge\w*+|komut\w*+|emir\w*+|emri\w*+|istem\w*+|sistem\s++istem\w*+"
    r"|direktif\w*+|kisitlama\w*+|sinirlama\w*+|mesaj\w*+|prompt\w*+|yonlendirme\w*+)"
    r"(?:\s++(?:tum|butun|hepsini|tamamen))?+\s++(?:yok\s++say\w*+|gormezden\s++gel(?:in|iniz)?+"
    r"|unut(?:un|unuz)?+|dikkate\s++alma(?:yin|yiniz)?+|umursama(?:yin|yiniz)?+|goz\s++ardi\s++et"
    r"(?:in|iniz)?+|hice\s++say(?:in|iniz)?+|iptal\s++et(?:in|iniz)?+|birak(?:in|iniz)?+"
    r"|uygulama(?:yin|yiniz)?+|uyma(?:yin|yiniz)?+|takma(?:yin)?+|aldirma(?:yin)?+)"
    + NOT_BEFORE_WORD
    + r"|(?:sana|size)\s++(?:daha\s++once\s++|onceden\s++|simdiye\s++kadar\s++)?+(?:soylenen"
    r"|verilen|anlatilan)\s++her\s++seyi\s++(?:unut|yok\s++say|gormezden\s++gel)\w*+"
    r"|yukaridaki\s++her\s++seyi\s++(?:unut|yok\s++say|gormezden\s++gel)\w*+"
)
_ID_RE: Final = compile_rx(
    r"(?:abaikan|lupakan|tinggalkan|buang|hapus|lewati|batalkan|acuhkan|kesampingkan|jangan"
    r"\s++(?:ikuti|patuhi|hiraukan|pedulikan|turuti|dengarkan|taati))"
    + SEP
    + r"(?:(?:semua|seluruh|segala|setiap)\s++)?+(?:(?:instruksi|perintah|aturan|peraturan"
    r"|petunjuk|arahan|pedoman|prompt|prompt\s++sistem|pesan|batasan|larangan|ketentuan)"
    r"(?:\s++(?:sistem|anda|kamu|mu))?+\s++(?:sebelumnya|di\s++atas|terdahulu|yang\s++(?:diberikan"
    r"|kamu\s++terima|anda\s++terima|sudah\s++diberikan|telah\s++diberikan)|awal|asli|lama|tadi"
    r"|yang\s++lalu|sebelum\s++ini)|(?:instruksi|perintah|aturan|pedoman|batasan)(?:mu|\s++anda"
    r"|\s++kamu)|(?:yang\s++)?+(?:dikatakan|diberitahukan|diajarkan)\s++(?:sebelumnya|kepadamu"
    r"|padamu|kepada\s++anda)|(?:hal\s++)?+(?:yang\s++)?+di\s++atas|sesuatu\s++(?:yang\s++)?+"
    r"(?:sebelumnya|di\s++atas))" + NOT_BEFORE_WORD
)
_VI_RE: Final = compile_rx(
    r"(?:bỏ\s++qua|phớt\s++lờ|lờ\s++đi|quên(?:\s++đi)?+|đừng\s++(?:làm\s++theo|tuân\s++theo"
    r"|nghe\s++theo)|không\s++(?:làm\s++theo|tuân\s++theo|cần\s++tuân\s++theo)|hủy\s++bỏ"
    r"|bác\s++bỏ|vứt\s++bỏ|xóa\s++bỏ|gạt\s++bỏ|mặc\s++kệ)"
    + SEP
    + r"(?:(?:tất\s++cả|mọi|toàn\s++bộ|hết|các|những)\s++)*+(?:hướng\s++dẫn|chỉ\s++dẫn|chỉ\s++thị"
    r"|lệnh|mệnh\s++lệnh|quy\s++tắc|nguyên\s++tắc|quy\s++định|yêu\s++cầu|lời\s++nhắc|prompt"
    r"|lời\s++nhắn|tin\s++nhắn|giới\s++hạn|ràng\s++buộc)(?:\s++hệ\s++thống)?+\s++(?:trước\s++đó"
    r"|trước\s++đây|trước|ở\s++trên|phía\s++trên|bên\s++trên|ban\s++đầu|gốc|cũ|đã\s++(?:được\s++)?+"
    r"(?:đưa\s++ra|cung\s++cấp|cho)|mà\s++bạn\s++(?:đã\s++)?+(?:nhận|được\s++giao)|từ\s++trước"
    r"\s++đến\s++nay)" + NOT_BEFORE_WORD
)
_RO_RE: Final = compile_rx(
    r"(?:ignora|ignorati|ignorați|uita|uitati|nu\s++mai\s++urma|nu\s++urma|nu\s++respecta)"
    + SEP
    + r"(?:(?:toate|orice)\s++)?+(?:instructiunile|instrucțiunile|regulile|indicatiile|indicațiile"
    r"|comenzile|directivele)\s++(?:anterioare|precedente|de\s++mai\s++sus|initiale|inițiale)"
    + NOT_BEFORE_WORD
)
_EL_RE: Final = compile_rx(
    r"(?:αγνόησε|αγνοήστε|ξέχασε|ξεχάστε|μην\s++ακολουθείς|μην\s++ακολουθείτε)"
    + SEP
    + r"(?:(?:όλες|ολες)\s++)?+(?:τις\s++)?+(?:προηγούμενες|προηγουμενες|παραπάνω|παραπανω"
    r"|αρχικές|αρχικες)\s++(?:οδηγίες|οδηγιες|εντολές|εντολες|κανόνες|κανονες)"
)
_HE_FA_AR_RE: Final = compile_rx(
    # Arabic
    r"(?:تجاهل|تجاهلي|تجاهلوا|انس|انسي|انسوا|انسى|تناس|اهمل|أهمل|اترك|تخط|تخطى|الغ|ألغ|دع"
    r"|لا\s++تتبع|لا\s++تتبعي|لا\s++تلتزم|لا\s++تلتزمي|لا\s++تطع|لا\s++تطيعي)"
    r"\s++(?:(?:جميع|كل|كافة)\s++)?+(?:(?:التعليمات|تعليمات|الأوامر|الاوامر|اوامر|التوجيهات"
    r"|توجيهات|القواعد|قواعد|الإرشادات|الارشادات|ارشادات|المطالبات|القيود|الموجهات)\s++"
    r"(?:السابقة|الماضية|المذكورة\s++أعلاه|أعلاه|اعلاه|الأولى|الاولى|الأصلية|الاصلية|القديمة"
    r"|التي\s++تلقيتها|المعطاة|السابقه)|ما\s++(?:قيل|ذكر|كتب)\s++(?:لك\s++)?+(?:من\s++قبل|سابقا"
    r"|أعلاه|اعلاه)|تعليماتك|أوامرك|اوامرك|قواعدك)"
    # Hebrew
    r"|(?:התעלם|התעלמי|התעלמו|שכח|שכחי|שכחו|אל\s++תציית)\s++(?:מ)?(?:כל\s++)?+(?:ה)?(?:הוראות"
    r"|הנחיות|כללים|פקודות)\s++(?:ה)?(?:קודמות|קודמים|הקודמות|הקודמים|שלמעלה)"
    # Persian
    r"|(?:همه\s++)?+(?:دستورالعمل|دستورات|قوانین|دستور)\w*+\s++(?:قبلی|پیشین|بالا)\s++(?:را\s++)?+"
    r"(?:نادیده\s++بگیر|فراموش\s++کن)\w*+"
)
_HI_RE: Final = compile_rx(
    r"(?:(?:पिछले|पिछली|पिछला|पहले\s++के|पहले\s++दिए\s++गए|ऊपर\s++के|ऊपर\s++दिए\s++गए|ऊपर\s++दिये"
    r"\s++गये|उपरोक्त|पूर्व|पुराने|मूल|अब\s++तक\s++के|सभी|सारे|सारी|तमाम)\s++)+(?:निर्देशों|निर्देश"
    r"|नियमों|नियम|आदेशों|आदेश|हिदायतों|हिदायत|सूचनाओं|प्रॉम्प्ट|सिस्टम\s++प्रॉम्प्ट|दिशानिर्देशों"
    r"|दिशा-निर्देशों|प्रतिबंधों)\s++(?:(?:को|की|का|के)\s++)?+(?:अनदेखा|नज़रअंदाज़|नजरअंदाज|भूल|भुला"
    r"|रद्द|छोड़|मत\s++मानो|न\s++मानें|का\s++पालन\s++(?:मत|न))"
)

# =========================================================================== statements
# Statements that void the model's orders, the English "void" form in other languages:
# "todas las instrucciones anteriores quedan anuladas", "deine bisherigen Anweisungen
# sind ab sofort ungültig", "все предыдущие инструкции больше не действуют". The subject
# is the model's (possessed, positioned before this text, or quantified), and the
# predicate says it no longer holds; "las instrucciones de instalación ya no son
# válidas" (a topic) has no positioned subject and passes.
_STATEMENT_RE: Final = compile_rx(
    # es: (todas) (las) [tus] instrucciones <anteriores | que te dieron>, positioned or
    # possessed (the conditional fails a bare "las instrucciones")
    r"(?:todas\s++)?+(?:las\s++)?+(?P<es_own>tus\s++)?+(?:(?:sus|las)\s++)?+(?:instrucciones"
    r"|reglas|indicaciones|directrices|ordenes|normas|pautas)(?:\s++(?:anteriores|previas"
    r"|originales|iniciales|de\s++arriba|que\s++(?:te|se\s++te|le)\s++(?:dieron|dio"
    r"|han\s++dado|fueron\s++dadas))|(?(es_own)|(?!)))"
    r"\s++(?:ya\s++)?+(?:no\s++(?:son\s++validas|valen|aplican|cuentan|rigen|tienen\s++validez"
    r"|estan\s++vigentes)|quedan\s++(?:anuladas|sin\s++efecto|invalidadas|revocadas|derogadas)"
    r"|(?:han\s++sido|fueron|estan|son)\s++(?:anuladas|nulas|invalidas|revocadas|canceladas"
    r"|obsoletas|derogadas))"
    # fr
    r"|(?:toutes\s++)?+(?:les\s++)?+(?P<fr_own>(?:tes|vos)\s++)?+(?:instructions|regles"
    r"|consignes|directives|ordres)(?:\s++(?:precedentes|anterieures|initiales|d'origine"
    r"|ci-dessus|qu'on\s++(?:t'a|vous\s++a)\s++donnees)|(?(fr_own)|(?!)))"
    r"\s++(?:(?:sont|ont\s++ete)\s++(?:desormais\s++|maintenant"
    r"\s++)?+(?:annulees|nulles|caduques|invalides|obsoletes|revoquees|levees|abrogees)"
    r"|ne\s++(?:sont|s'appliquent|comptent)\s++plus(?:\s++(?:valables|valides|applicables"
    r"|en\s++vigueur))?+|n'ont\s++plus\s++(?:cours|de\s++valeur))"
    # de
    r"|(?:(?:alle\s++)?+(?:(?:deine|ihre|eure|die)\s++)?+(?:vorherigen|bisherigen|obigen"
    r"|ursprunglichen|fruheren|vorigen|alten)\s++|(?:alle\s++)?+(?:deine|eure)\s++)"
    r"(?:anweisungen|regeln|vorgaben|instruktionen|richtlinien|befehle|anordnungen)"
    r"\s++(?:sind|gelten|wurden)\s++(?:(?:ab\s++sofort|ab\s++jetzt|jetzt|nun|hiermit"
    r"|nicht\s++mehr)\s++)*+(?:ungultig|nichtig|aufgehoben|ausser\s++kraft|hinfallig"
    r"|widerrufen|obsolet|veraltet|gultig|aufgehoben|annulliert|storniert)"
    # pt
    r"|(?:todas\s++)?+(?:as\s++)?+(?P<pt_own>(?:suas|tuas)\s++)?+(?:instrucoes|regras"
    r"|diretrizes|ordens|orientacoes)(?:\s++(?:anteriores|previas|originais|iniciais|acima"
    r"|que\s++(?:te|lhe)\s++(?:deram|foram\s++dadas))|(?(pt_own)|(?!)))"
    r"\s++(?:(?:ja\s++)?+nao\s++(?:sao\s++mais\s++validas|sao\s++validas"
    r"|valem(?:\s++mais)?+|se\s++aplicam(?:\s++mais)?+)|(?:foram|estao|sao)\s++(?:anuladas"
    r"|nulas|invalidas|revogadas|canceladas|obsoletas)|perderam\s++a\s++validade"
    r"|deixaram\s++de\s++valer)"
    # it
    r"|(?:tutte\s++)?+(?:le\s++)?+(?P<it_own>tue\s++)?+(?:istruzioni|regole|direttive"
    r"|indicazioni|disposizioni)(?:\s++(?:precedenti|originali|iniziali|di\s++sopra"
    r"|qui\s++sopra|che\s++ti\s++(?:sono\s++state\s++date|hanno\s++dato))|(?(it_own)|(?!)))"
    r"\s++(?:(?:sono|vengono)\s++(?:ora\s++)?+(?:nulle|annullate"
    r"|revocate|invalide|obsolete|superate|abrogate)|non\s++(?:sono\s++piu|valgono\s++piu"
    r"|si\s++applicano\s++piu)(?:\s++(?:valide|in\s++vigore))?+)"
    # ru
    r"|(?:(?:все\s++)?+(?:твои\s++|ваши\s++|данные\s++тебе\s++)?+(?:предыдущие|прежние"
    r"|прошлые|исходные|первоначальные|изначальные|вышеуказанные|старые)\s++|(?:все\s++)?+"
    r"(?:твои|ваши)\s++)(?:инструкции|правила|указания|директивы|команды|установки"
    r"|распоряжения)\s++(?:(?:больше|более|уже)\s++)?+(?:не\s++действуют|не\s++действительны"
    r"|недействительны|отменены|аннулированы|утратили\s++силу|устарели|не\s++имеют\s++силы"
    r"|не\s++применяются)" + NOT_BEFORE_WORD
)
_STATEMENT_CJK_RE: Final = compile_rx(
    # zh: 把先前给你的指令全部忽略掉 (the object before the verb), 忘掉你原来的那些规则 (the
    # model's own rules after the verb)
    r"(?:把|将|將)(?:你|您)?+(?:之前|先前|以前|此前|上面|上述|原来|原來|原有|最初)(?:给你|給你|收到)?+"
    r"的?+(?:所有|全部|一切|那些)?+的?+(?:指令|指示|规则|規則|提示词|提示詞|设定|設定|命令)"
    r"[^。！？\n]{0,6}?(?:忽略|忘掉|忘记|忘記|无视|無視|抛开|拋開|丢掉|丟掉|作废|作廢)"
    r"|(?:忘掉|忘记|忘記|忽略|无视|無視|抛开|拋開|丢掉|丟掉)(?:你|您)(?:原来|原來|原有|之前|以前|先前"
    r"|最初)?+的?+(?:那些|所有|全部|一切)?+(?:指令|指示|规则|規則|设定|設定|命令|提示词|提示詞|限制)|"
    r"(?:之前|以前|先前|此前|上面|上述|原来|原有|原始|你的|您的|你之前收到)的?+(?:所有|全部|一切)?+"
    r"(?:的)?+(?:指令|指示|规则|規則|说明|說明|提示词|提示詞|设定|設定|命令)(?:现在|現在)?+"
    r"(?:已经|已經|已|都|全部|一律|均)*+(?:无效|無效|作废|作廢|失效|被取消|被废除|被廢除|不再有效"
    r"|不再适用|不再適用)"
    r"|(?:以前|前|上記|これまで|最初|元)の(?:すべての|全ての)?+(?:指示|命令|ルール|指令|設定)"
    r"は(?:すべて|全て)?+(?:無効|取り消され|破棄され|撤回され)"
)


def _statement_check(text: str, m: re.Match[str]) -> bool:
    return not inside_word(text, m.start())


# =========================================================================== CJK, Korean

# Before a Chinese verb, these make it a description or a negation ("the model would
# ignore...", "do not ignore...").
_ZH_NOT_RE: Final = compiled(
    "(?:会|會|不|别|別|没|沒|未|被|能|可能|往往|经常|經常|容易|倾向|傾向|常常|总是|總是)$"
)


def _zh_check(text: str, m: re.Match[str]) -> bool:
    return _ZH_NOT_RE.search(text, max(0, m.start() - 2), m.start()) is None


_ZH_VERB: Final = cjk(
    "忽略",
    "忽视",
    "忽視",
    "无视",
    "無視",
    "忘记",
    "忘記",
    "忘掉",
    "忘了",
    "不要理会",
    "不要理會",
    "别管",
    "別管",
    "不用管",
    "不必理会",
    "抛弃",
    "拋棄",
    "放弃",
    "放棄",
    "丢弃",
    "丟棄",
    "跳过",
    "跳過",
    "不要遵守",
    "不要再遵守",
    "不再遵守",
    "停止遵守",
    "不要遵循",
    "不要再遵循",
    "别再遵守",
    "不要听从",
    "不要聽從",
    "不要执行",
    "绕过",
    "繞過",
    "撤销",
    "撤銷",
    "废除",
    "作废",
    "清除",
    "覆盖",
    "覆蓋",
)
_ZH_FILL: Final = cjk(
    "之前",
    "以前",
    "先前",
    "此前",
    "前面",
    "上面",
    "上述",
    "以上",
    "原来",
    "原來",
    "原有",
    "原先",
    "原始",
    "最初",
    "初始",
    "早先",
    "刚才",
    "剛才",
    "前述",
    "你之前",
    "你收到",
    "你收到的",
    "收到的",
    "收到",
    "给你",
    "給你",
    "给你的",
    "給你的",
    "你被给予",
    "所有",
    "全部",
    "一切",
    "任何",
    "的",
    "你的",
    "这些",
    "那些",
    "系统",
    "系統",
    "所给",
    "所給",
    "被",
    "得到",
    "获得",
    "获得的",
)
_ZH_NOUN: Final = cjk(
    "指令",
    "指示",
    "说明",
    "說明",
    "规则",
    "規則",
    "提示",
    "提示词",
    "提示詞",
    "命令",
    "要求",
    "设定",
    "設定",
    "约束",
    "約束",
    "限制",
    "规定",
    "規定",
    "指导",
    "指導",
    "指南",
    "准则",
    "準則",
    "对话",
    "對話",
    "系统提示",
    "系統提示",
    "内容",
    "一切",
)
_ZH_RE: Final = compile_rx(
    _ZH_VERB + CJK_SEP + "(?:(?:" + _ZH_FILL + ")" + CJK_SEP + "){1,6}+" + _ZH_NOUN
)
_JA_RE: Final = compile_rx(
    r"(?:(?:これまで|今まで|以前|前|先ほど|先程|上記|上|最初|元|既存|過去|前回|上述|前述|当初|"
    r"与えられた|受けた|あなたが受けた|あなたに与えられた|すべて|全て|全部|一切|あらゆる"
    r"|あなた|貴方|君|お前|これら|システム)"
    r"(?:の|に|で|から|は)?+(?:\s*+(?:すべて|全て|全部)の)?+\s*+)+"
    r"(?:指示|命令|指令|ルール|規則|プロンプト|システムプロンプト|設定|制約|制限|ガイドライン|指図"
    r"|インストラクション|決まり|内容)(?:を|は|も)?+\s*+(?:すべて|全て|全部|一切)?+\s*+"
    r"(?:無視(?:して|しろ|せよ|しなさい|し[、。,]|してください|して下さい)|忘れ(?:て|ろ|なさい|よ)"
    r"|破棄(?:して|しろ|せよ|しなさい)|従わ(?:ないで|なくていい|なくてよい|ずに)|取り消(?:して|せ)"
    r"|リセット(?:して|しろ|せよ)|捨て(?:て|ろ|なさい)|無効(?:に|化)(?:して|しろ|せよ)"
    r"|気にしないで)"
)
_KO_RE: Final = compile_rx(
    r"(?:(?:이전의?|앞의|앞서|위의|위에\s*+있는|위에서\s*+(?:말한|준)|기존의?|지금까지의?"
    r"|이전에\s*+받은|앞에서\s*+(?:받은|말한|준)|원래의?|처음의?|모든|모두|전부|전체|너의|네"
    r"|당신의|너)\s*+)+"
    r"(?:지시(?:사항)?+|지침|명령(?:어)?+|규칙|지시문|프롬프트|시스템\s*+프롬프트|설정|제한"
    r"|규정|지령|안내)(?:들)?+(?:를|을|은|는|도)?+\s*+(?:모두\s*+|전부\s*+)?+(?:무시(?:하고|해|해라"
    r"|하세요|하십시오|해요|해줘|해\s*+주세요|하라)|잊어(?:버려|버리고|버려라|버리세요|줘|주세요|라"
    r"|요)?+|잊(?:고|으세요|어라|으십시오)|따르지\s*+(?:마|마세요|말고|마라)|신경\s*+쓰지\s*+"
    r"(?:마|마세요|말고)|지워|취소(?:해|하세요|하고)|버려|폐기(?:해|하세요|하고))"
)

# =========================================================================== role hijack

_NO_LIMITS: Final = (
    r"(?:sin\s++(?:ninguna\s++|ningun\s++|restricciones|limites|filtros|reglas|censura)"
    r"|sans\s++(?:aucune\s++|aucun\s++)?+(?:restrictions?|limites?|filtres?|regles?|censure)"
    # "une IA libre de toute limite" ("libre de toute contrainte ce week-end" is a person's)
    r"|(?:ia|ai|intelligence\s++artificielle|inteligencia\s++artificial|assistant\w*+"
    r"|asistente|modele|modelo|chatbot)\s++libre\s++de\s++(?:toute\s++|tout\s++|toda\s++|todo\s++)?+(?:restrictions?|limites?"
    r"|filtres?|regles?|censure|contrainte|restricciones|limites|reglas|filtros|censura)"
    r"|ohne\s++(?:jegliche\s++|alle\s++|irgendwelche\s++|jede\s++)?+(?:einschrankungen|regeln"
    r"|grenzen|filter|zensur|beschrankungen)|uneingeschrankt\w*+|unzensiert\w*+"
    r"|sem\s++(?:nenhuma\s++|nenhum\s++)?+(?:filtros|regras|restricoes|limites|censura)"
    r"|senza\s++(?:alcun\s++|alcuna\s++|nessun\s++|nessuna\s++)?+(?:limiti?|restrizioni"
    r"|regole|filtri|censura|vincoli)"
    r"|без\s++(?:каких-либо\s++|всяких\s++|любых\s++)?+(?:ограничений|правил|фильтров|цензуры)"
    r"|zonder\s++(?:enige\s++)?+(?:beperkingen|regels|filters)|bez\s++(?:zadnych\s++)?+"
    r"(?:ograniczen|zasad|filtrow)|dan\b|jailbreak\w*+)"
)
_ROLE_HIJACK_RE: Final = compile_rx(
    r"(?:(?:a\s++partir\s++de\s++ahora|desde\s++ahora|de\s++ahora\s++en\s++adelante)[\s,]*+)?+"
    r"(?:(?:ahora\s++)?+eres|seras|actua\s++como|actue\s++como|finge\s++ser|comportate\s++como)"
    r"(?:\s++ahora)?+\s++[^.\n]{0,60}?"
    + _NO_LIMITS
    + r"|(?:(?:a\s++partir\s++de\s++maintenant|desormais|dorenavant)[\s,]*+)?+(?:tu\s++es"
    r"|vous\s++etes|agis\s++comme|agissez\s++comme|fais\s++comme\s++si\s++tu\s++etais"
    r"|comporte-toi\s++comme)(?:\s++maintenant|\s++desormais)?+\s++[^.\n]{0,60}?"
    + _NO_LIMITS
    + r"|(?:(?:ab\s++jetzt|von\s++nun\s++an|ab\s++sofort|ab\s++heute)[\s,]*+)?+(?:bist\s++du"
    r"|du\s++bist|sie\s++sind|verhalte\s++dich\s++wie|tu\s++so\s++als\s++ob|spiele\s++die\s++rolle)"
    r"(?:\s++jetzt|\s++nun|\s++ab\s++sofort)?+\s++[^.\n]{0,60}?"
    + _NO_LIMITS
    + r"|(?:(?:de\s++agora\s++em\s++diante|a\s++partir\s++de\s++agora"
    r"|daqui\s++em\s++diante)[\s,]*+)?+(?:voce\s++e|tu\s++es|es|aja\s++como|finja\s++ser"
    r"|atue\s++como)(?:\s++agora)?+\s++[^.\n]{0,60}?"
    + _NO_LIMITS
    + r"|(?:(?:d'ora\s++in\s++poi|da\s++ora\s++in\s++poi|da\s++adesso"
    r"|d'ora\s++in\s++avanti)[\s,]*+)?+(?:sei|tu\s++sei|agisci\s++come|fingi\s++di\s++essere"
    r"|comportati\s++come)(?:\s++ora|\s++adesso)?+"
    r"\s++[^.\n]{0,60}?"
    + _NO_LIMITS
    + r"|(?:(?:теперь|отныне|с\s++этого\s++момента|с\s++сегодняшнего\s++дня)[\s,]*+)?+(?:ты"
    r"(?:\s++теперь)?+|вы(?:\s++теперь)?+|веди\s++себя\s++как|притворись|действуй\s++как)"
    r"\s*+[\u2014\-]?+\s*+[^.\n]{0,60}?" + _NO_LIMITS
)
_ZH_JA_KO_HIJACK_RE: Final = compile_rx(
    r"你(?:现在|現在)?+"
    r"(?:是|扮演|作为|作為|将是|將是|就是)[^。\n]{0,20}?(?:没有|沒有|无|無|不受)(?:任何)?+"
    r"(?:限制|约束|約束|规则|規則|过滤|過濾|审查|審查|道德)"
    r"|(?:扮演|假装|假裝)[^。\n]{0,12}?(?:DAN|越狱|越獄|没有限制|沒有限制)"
    r"|あなたは[^。\n]{0,24}?(?:制限|ルール|フィルター|検閲|倫理)"
    r"(?:の|が)?+(?:ない|なし|無し|無い)"
    r"|(?:너는|넌|당신은)\s*+[^.\n]{0,24}?(?:제한|규칙|필터|검열|윤리)"
    r"(?:이|가)?+\s*+(?:없는|없이|없어)"
)

# =========================================================================== prompt extraction

_EXTRACT_RE: Final = compile_rx(
    # es
    r"(?:muestra(?:me)?+|muestrame|revela(?:me)?+|dime|imprime|repite|ensename|escribe|dame"
    r"|comparte|ensena(?:me)?+)\s++(?:tu|tus|vuestro|su)\s++(?:prompt|mensaje|instrucciones"
    r"|indicaciones)\s++(?:del|de)\s++sistema"
    r"|(?:muestra(?:me)?+|muestrame|revela(?:me)?+|dime|imprime|repite|ensename|escribe|dame"
    r"|ensena(?:me)?+)\s++(?:el|la)\s++prompt\s++(?:del|de)\s++sistema"
    r"|(?:muestra(?:me)?+|revela(?:me)?+|dime|repite|dame)\s++(?:tus|sus)\s++instrucciones"
    r"\s++(?:iniciales|originales|ocultas|secretas)"
    # fr
    r"|(?:affiche|montre|revele|donne|repete|ecris|imprime|dis)(?:-moi)?+\s++(?:ton|votre|tes|vos)"
    r"\s++(?:prompt|message|instructions|consignes)\s++(?:systeme|du\s++systeme|initial\w*+"
    r"|d'origine|cache\w*+|secret\w*+)"
    # de
    r"|(?:zeig|zeige|gib|nenne|verrate|wiederhole|schreib|schreibe|drucke)(?:\s++mir)?+\s++"
    r"(?:deinen|deine|ihren|ihre|dein)\s++(?:system\s*+-?\s*+prompt|systemnachricht"
    r"|systemanweisungen|anfanglichen\s++anweisungen|ursprunglichen\s++anweisungen"
    r"|versteckten\s++anweisungen|anweisungen|instruktionen)"
    # pt
    r"|(?:mostre|mostra|revele|revela|diga|imprima|repita|me\s++mostre|me\s++diga|me\s++de)"
    r"(?:-me)?+\s++(?:o\s++seu|seu|o\s++teu|teu|as\s++suas|suas|tuas)\s++(?:prompt|mensagem"
    r"|instrucoes)\s++(?:do|de)\s++sistema"
    # it
    r"|(?:mostra(?:mi)?+|rivela(?:mi)?+|dimmi|stampa|ripeti|scrivi)\s++(?:il\s++tuo|tuo|le\s++tue"
    r"|tue|i\s++tuoi)\s++(?:prompt|messaggio|istruzioni)\s++(?:di|del)\s++sistema"
    # ru
    r"|(?:покажи|выведи|раскрой|повтори|напиши|расскажи|назови|дай|покажите|выведите|раскройте"
    r"|повторите|напишите)(?:\s++мне)?+\s++(?:свой|свои|твой|твои|ваш|ваши)\s++(?:системн\w*+"
    r"\s++(?:промпт\w*+|инструкци\w*+|сообщени\w*+)|инструкци\w*+|промпт\w*+)"
)
_EXTRACT_CJK_RE: Final = compile_rx(
    # zh: 把你的系统提示词 ... 告诉我 (the object before the verb)
    r"(?:把|将|將)(?:你的|您的)(?:系统|系統|初始|原始|隐藏|隱藏)?+(?:提示词|提示詞|指令|设定|設定"
    r"|系统消息|系統消息)[^。！？\n]{0,12}?(?:告诉我|告訴我|输出|輸出|显示|顯示|打印|发给我|發給我"
    r"|说出来|說出來|写出来|寫出來|复述|複述)|"
    # zh
    r"(?:输出|告诉我|告訴我|显示|顯示|展示|打印|重复|重複|透露|泄露|洩露|给我看|給我看|说出|說出)"
    r"(?:一下)?+(?:你的|您的)(?:系统|系統|初始|原始|隐藏|隱藏)?+(?:提示词|提示詞|提示|指令|设定|設定"
    r"|系统消息|系統消息)"
    # ja
    r"|(?:システムプロンプト|初期プロンプト|最初の指示|システム指示)(?:を|は)\s*+"
    r"(?:教えて|表示|見せて|出力|繰り返|書いて|開示)"
    # ko
    r"|시스템\s*+프롬프트(?:를|을)?+\s*+(?:보여|알려|출력|말해|공개)"
)

# =========================================================================== model directive

_DIRECTIVE_RE: Final = compile_rx(
    r"si\s++eres\s++(?:una\s++)?+(?:ia|inteligencia\s++artificial|modelo\s++de\s++lenguaje"
    r"|asistente\s++de\s++ia|chatbot)"
    + NOT_BEFORE_WORD
    + r"|si\s++(?:tu\s++es|vous\s++etes)\s++(?:une\s++)?+(?:ia|intelligence\s++artificielle"
    r"|modele\s++de\s++langage|assistant\s++ia|chatbot)"
    + NOT_BEFORE_WORD
    + r"|(?:wenn|falls)\s++(?:du|sie)\s++(?:eine\s++)?+(?:ki|kunstliche\s++intelligenz"
    r"|sprachmodell|ki-assistent|chatbot)\s++(?:bist|sind)"
    + NOT_BEFORE_WORD
    + r"|(?:если|коли)\s++ты\s++(?:—\s*+)?+(?:ии|искусственный\s++интеллект|языковая\s++модель"
    r"|чат-бот|нейросеть)"
)

_DIRECTIVE_CJK_RE: Final = compile_rx(
    r"(?:如果|若)你是(?:一个|一個)?+(?:ai|人工智能|语言模型|語言模型|大模型|助手)"
    r"|(?:あなたが|もしあなたが)(?:ai|人工知能|言語モデル)(?:なら|であれば|の場合)"
)

OTHER_LANGUAGE_FORMS: Final[tuple[Form, ...]] = (
    Form(RULE_INSTRUCTION_OVERRIDE, "es", _ES_RE, _imperative_scoped),
    Form(RULE_INSTRUCTION_OVERRIDE, "fr", _FR_RE, _imperative_scoped),
    Form(RULE_INSTRUCTION_OVERRIDE, "de", _DE_RE, _imperative_scoped),
    Form(RULE_INSTRUCTION_OVERRIDE, "de_verb_last", _DE_VERB_LAST_RE, _clause_start),
    Form(RULE_INSTRUCTION_OVERRIDE, "pt", _PT_RE, _imperative_scoped),
    Form(RULE_INSTRUCTION_OVERRIDE, "it", _IT_RE, _imperative_scoped),
    Form(RULE_INSTRUCTION_OVERRIDE, "nl", _NL_RE, _imperative_scoped),
    Form(RULE_INSTRUCTION_OVERRIDE, "sv_da_no", _SV_DA_NO_RE, _imperative_scoped),
    Form(RULE_INSTRUCTION_OVERRIDE, "ru", _RU_RE, _slavic_scoped, script="cyrillic"),
    Form(RULE_INSTRUCTION_OVERRIDE, "uk", _UK_RE, _slavic_scoped, script="cyrillic"),
    Form(RULE_INSTRUCTION_OVERRIDE, "pl", _PL_RE, _slavic_scoped),
    Form(RULE_INSTRUCTION_OVERRIDE, "cs", _CS_RE, _slavic_scoped),
    Form(RULE_INSTRUCTION_OVERRIDE, "tr", _TR_RE, _scoped),
    Form(RULE_INSTRUCTION_OVERRIDE, "id", _ID_RE, _scoped),
    Form(RULE_INSTRUCTION_OVERRIDE, "vi", _VI_RE, _imperative_scoped),
    Form(RULE_INSTRUCTION_OVERRIDE, "ro", _RO_RE, _imperative_scoped),
    Form(RULE_INSTRUCTION_OVERRIDE, "el", _EL_RE, _scoped, script="greek"),
    Form(RULE_INSTRUCTION_OVERRIDE, "ar_he_fa", _HE_FA_AR_RE, _scoped, script="arabic_hebrew"),
    Form(RULE_INSTRUCTION_OVERRIDE, "hi", _HI_RE, _scoped, script="devanagari"),
    Form(RULE_INSTRUCTION_OVERRIDE, "zh", _ZH_RE, _zh_check, script="cjk"),
    Form(RULE_INSTRUCTION_OVERRIDE, "ja", _JA_RE, always, script="cjk"),
    Form(RULE_INSTRUCTION_OVERRIDE, "ko", _KO_RE, always, script="hangul"),
    Form(RULE_INSTRUCTION_OVERRIDE, "void_other", _STATEMENT_RE, _statement_check),
    Form(RULE_INSTRUCTION_OVERRIDE, "void_cjk", _STATEMENT_CJK_RE, always, script="cjk"),
    Form(RULE_ROLE_HIJACK, "role_other", _ROLE_HIJACK_RE, word_start),
    Form(RULE_ROLE_HIJACK, "role_cjk", _ZH_JA_KO_HIJACK_RE, always, script="cjk_hangul"),
    Form(RULE_PROMPT_EXTRACTION, "extract_other", _EXTRACT_RE, word_start),
    Form(RULE_PROMPT_EXTRACTION, "extract_cjk", _EXTRACT_CJK_RE, always, script="cjk_hangul"),
    Form(RULE_MODEL_DIRECTIVE, "addressed_other", _DIRECTIVE_RE, word_start),
    Form(RULE_MODEL_DIRECTIVE, "addressed_cjk", _DIRECTIVE_CJK_RE, always, script="cjk"),
    *MORE_LANGUAGE_FORMS,
    *REPLY_LANGUAGE_FORMS,
    *REPLY_LANGUAGE_MORE_FORMS,
)
