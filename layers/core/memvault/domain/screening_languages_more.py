"""Instruction overrides in the languages ``screening_languages`` does not cover.

Attackers translate "ignore all previous instructions" into languages a screen is least
likely to read: Zulu, Xhosa, Swahili, Albanian, Irish, Scottish Gaelic, Welsh... (ADR
0083). These forms cover the override family only, as override verb x prior-context
object x instruction noun in each language's own word order, written from the languages'
grammar (not from any attack corpus) and folded like the text (accents dropped, lower
case). Each form needs both an instruction noun and a position ("previous", "above",
"original", "given to you"), so "forget the old recipe" or a note about last year's
rules passes, as in English. The verb must open a clause (``imperative``), except in
verb-last orders, which need the clause start at the object instead. Pure: no I/O.
"""

from __future__ import annotations

from typing import Final

from memvault.domain.screening_grammar import (
    NOT_BEFORE_WORD,
    RULE_INSTRUCTION_OVERRIDE,
    SEP,
    compile_rx,
    opt,
    words,
)
from memvault.domain.screening_rules import Form, always, imperative, word_start

__all__ = ["MORE_LANGUAGE_FORMS"]


def _override(verbs: str, before_noun: str, nouns: str, after_noun: str) -> str:
    """verb [quantifier/determiner...] noun [quantifier] position, with the position
    either before the noun (``before_noun``, adjective-first languages) or after it."""
    return verbs + SEP + before_noun + nouns + NOT_BEFORE_WORD + after_noun + NOT_BEFORE_WORD


# =========================================================================== Swahili
_SW_POS: Final = words(
    "ya awali",
    "za awali",
    "ya hapo awali",
    "za hapo awali",
    "ya hapo juu",
    "za hapo juu",
    "yaliyotangulia",
    "zilizotangulia",
    "yaliyopita",
    "zilizopita",
    "ya mwanzo",
    "za mwanzo",
    "uliyopewa",
    "ulizopewa",
    "yaliyotolewa",
    "zilizotolewa",
    "ya zamani",
    "za zamani",
)
_SW_RE: Final = compile_rx(
    _override(
        words(
            "puuza",
            "puuzeni",
            "puuzia",
            "sahau",
            "sahauni",
            "acha kufuata",
            "achana na",
            "usifuate",
            "msifuate",
            "usizingatie",
            "msizingatie",
            "tupilia mbali",
            "dharau",
        ),
        opt(words("yote", "zote", "kila")),
        words("maagizo", "maelekezo", "amri", "sheria", "kanuni", "miongozo", "maelezo"),
        SEP + opt(words("yote", "zote", "ya mfumo", "za mfumo")) + _SW_POS,
    )
    + r"|"
    + words("puuza", "sahau", "puuzeni", "sahauni")
    + SEP
    + words("kila kitu", "yote")
    + SEP
    + words(
        "kilichotangulia",
        "cha awali",
        "kilichosemwa hapo awali",
        "ulichoambiwa",
        "uliyoambiwa",
        "yaliyotangulia",
        "hapo juu",
    )
    + NOT_BEFORE_WORD
)

# =========================================================================== Zulu, Xhosa
_NGUNI_POS: Final = words(
    "yangaphambilini",
    "yangaphambili",
    "zangaphambilini",
    "zangaphambili",
    "edlule",
    "ezedlule",
    "edlulileyo",
    "ezidlulileyo",
    "engenhla",
    "ezingenhla",
    "engentla",
    "ezingentla",
    "yokuqala",
    "zokuqala",
    "esekuqaleni",
    "oyinikiwe",
    "owayinikwa",
    "oyinikwe",
)
_NGUNI_RE: Final = compile_rx(
    _override(
        words(
            # Zulu
            "ziba",
            "zibani",
            "yiziba",
            "ungazinaki",
            "ungayinaki",
            "ningayinaki",
            "ungayilaleli",
            "ungayilandeli",
            "khohlwa",
            "khohlwani",
            "kohlwa",
            "lahla",
            "yeka",
            # Xhosa
            "ungayihoyi",
            "ungazihoyi",
            "sukuyihoya",
            "sukuzihoya",
            "libala",
            "libalani",
            "yityeshele",
            "zityeshele",
            "ityeshele",
            "tyeshela",
        ),
        opt(words("yonke", "zonke", "konke")),
        words(
            "imiyalelo", "imiyalo", "iziyalezo", "imiyalezo", "imithetho", "imigaqo", "izikhokelo"
        ),
        SEP + opt(words("yonke", "zonke")) + _NGUNI_POS,
    )
    + r"|"
    + words("khohlwa", "ziba", "libala", "khohlwani", "libalani")
    + SEP
    + words("konke", "yonke into")
    + SEP
    + opt(words("okushiwo", "okwashiwo", "okutshelwe", "othe watshelwa", "oxelelwe"))
    + words("ngaphambilini", "ngaphambili", "ngenhla", "ngentla")
    + NOT_BEFORE_WORD
)

# =========================================================================== Afrikaans
_AF_RE: Final = compile_rx(
    _override(
        words("ignoreer", "vergeet", "verontagsaam", "negeer", "verwerp"),
        opt(words("al jou", "al die", "alle", "die", "jou", "enige"))
        + words(
            "vorige",
            "voorafgaande",
            "bogenoemde",
            "bostaande",
            "vroeëre",
            "eerdere",
            "oorspronklike",
            "aanvanklike",
            "gegewe",
        )
        + SEP,
        words(
            "instruksies",
            "opdragte",
            "reëls",
            "aanwysings",
            "bevele",
            "riglyne",
            "stelselopdragte",
            "prompts",
        ),
        "",
    )
)

# =========================================================================== Albanian
_SQ_RE: Final = compile_rx(
    _override(
        words(
            "injoro",
            "injoroni",
            "shpërfill",
            "shpërfillni",
            "harro",
            "harroni",
            "mos ndiq",
            "mos ndiqni",
            "mos merr parasysh",
            "mos merrni parasysh",
            "anashkalo",
            "anashkaloni",
            "hidh poshtë",
        ),
        opt(words("të gjitha", "gjithë", "çdo")),
        words(
            "udhëzimet",
            "udhëzimeve",
            "udhëzim",
            "instruksionet",
            "instruksioneve",
            "rregullat",
            "urdhrat",
            "urdhërat",
            "komandat",
            "direktivat",
            "porositë",
        ),
        SEP
        + opt(words("e tua", "tuaja", "e sistemit"))
        + words(
            "e mëparshme",
            "të mëparshme",
            "e mësipërme",
            "të mësipërme",
            "e mëhershme",
            "të mëhershme",
            "fillestare",
            "origjinale",
            "që të janë dhënë",
            "që ke marrë",
            "që more",
        ),
    )
    + r"|"
    + words("harro", "harroni", "injoro", "injoroni")
    + SEP
    + words("gjithçka", "çdo gjë")
    + SEP
    + opt(words("që u tha", "që të është thënë", "që të thashë"))
    + words("më parë", "mësipër", "deri tani")
    + NOT_BEFORE_WORD
)

# =========================================================================== Irish, Gaelic
_GOIDELIC_NOUN: Final = words(
    # Irish
    "treoracha",
    "dtreoracha",
    "treoir",
    "rialacha",
    "orduithe",
    "n-orduithe",
    "teagaisc",
    # Scottish Gaelic
    "stiùiridhean",
    "stiùireadh",
    "riaghailtean",
    "òrduighean",
    "àitheantan",
    "teagasg",
)
_GOIDELIC_RE: Final = compile_rx(
    _override(
        words(
            # Irish
            "déan neamhaird de",
            "déan neamhaird ar",
            "déanaigí neamhaird de",
            "déanaigí neamhaird ar",
            "déan dearmad ar",
            "déanaigí dearmad ar",
            "ná tabhair aird ar",
            "ná tabhair aon aird ar",
            "ná tugaigí aird ar",
            "ná lean",
            "ná leanaigí",
            "cuir i leataobh",
            # Scottish Gaelic
            "leig seachad",
            "leigibh seachad",
            "dìochuimhnich",
            "dìochuimhnichibh",
            "na toir an aire do",
            "na toiribh an aire do",
            "na lean",
            "na leanaibh",
            "cuir an dàrna taobh",
        ),
        opt(words("gach", "na huile", "a h-uile", "na", "an", "do", "ur")),
        _GOIDELIC_NOUN,
        SEP
        + opt(words("go léir", "uile", "an t-siostaim", "an córais"))
        + words(
            "roimhe seo",
            "roimhe",
            "thuas",
            "gu h-àrd",
            "gu h àrd",
            "a tugadh duit",
            "a fuair tú",
            "a fhuair thu",
            "a chaidh a thoirt dhut",
            "bunaidh",
            "tosaigh",
            "tùsail",
        ),
    )
    + r"|"
    + words("déan dearmad ar", "dìochuimhnich", "leig seachad")
    + SEP
    + words("gach rud", "gach nì", "a h-uile rud", "na h-uile rud")
    + SEP
    + words("roimhe seo", "roimhe", "thuas", "gu h-àrd")
    + NOT_BEFORE_WORD
)

# =========================================================================== Welsh
_CY_RE: Final = compile_rx(
    _override(
        words(
            "anwybyddwch",
            "anwybydda",
            "anghofiwch",
            "anghofia",
            "diystyrwch",
            "diystyra",
            "peidiwch â dilyn",
            "paid â dilyn",
        ),
        opt(words("yr holl", "pob", "yr", "y", "eich", "dy", "unrhyw")),
        words(
            "cyfarwyddiadau",
            "gyfarwyddiadau",
            "chyfarwyddiadau",
            "cyfarwyddyd",
            "gyfarwyddyd",
            "rheolau",
            "reolau",
            "gorchmynion",
            "orchmynion",
            "canllawiau",
            "ganllawiau",
        ),
        SEP
        + words(
            "blaenorol",
            "uchod",
            "gwreiddiol",
            "wreiddiol",
            "cynharach",
            "cynt",
            "a roddwyd i chi",
            "a roddwyd i ti",
        ),
    )
)

# =========================================================================== Catalan
_CA_RE: Final = compile_rx(
    _override(
        words(
            "ignora",
            "ignoreu",
            "oblida",
            "oblideu",
            "no segueixis",
            "no seguiu",
            "no facis cas de",
            "no feu cas de",
            "passa per alt",
            "passeu per alt",
            "descarta",
            "descarteu",
        ),
        opt(words("totes", "tots"))
        + opt(words("les", "els", "qualsevol", "les teves", "les vostres")),
        words(
            "instruccions", "regles", "ordres", "directrius", "indicacions", "normes", "consignes"
        ),
        SEP
        + words(
            "anteriors",
            "prèvies",
            "de dalt",
            "originals",
            "inicials",
            "que has rebut",
            "que t'han donat",
            "que et van donar",
        ),
    )
)

# =========================================================================== Hungarian
_HU_VERB: Final = words(
    "hagyd figyelmen kívül",
    "hagyja figyelmen kívül",
    "hagyjátok figyelmen kívül",
    "hagyják figyelmen kívül",
    "felejtsd el",
    "felejtse el",
    "felejtsétek el",
    "ne vedd figyelembe",
    "ne vegye figyelembe",
    "ne kövesd",
    "ne kövesse",
    "dobd el",
)
_HU_OBJECT: Final = (
    opt(words("az", "a"))
    + opt(words("összes", "minden", "valamennyi", "eddigi összes"))
    + words(
        "korábbi",
        "előző",
        "fenti",
        "fentebbi",
        "eredeti",
        "kezdeti",
        "eddigi",
        "kapott",
        "megadott",
    )
    + SEP
    + r"(?:rendszer)?+(?:utasítás|szabály|parancs|irányelv|útmutatás|prompt)\w*+"
)
_HU_RE: Final = compile_rx(
    _HU_VERB + SEP + _HU_OBJECT + r"|" + _HU_OBJECT + SEP + _HU_VERB + NOT_BEFORE_WORD
)

# =========================================================================== Finnish, Estonian
_FI_ET_RE: Final = compile_rx(
    # Finnish
    words(
        "unohda",
        "unohtakaa",
        "ohita",
        "ohittakaa",
        "sivuuta",
        "sivuuttakaa",
        "jätä huomiotta",
        "jättäkää huomiotta",
        "älä noudata",
        "älkää noudattako",
    )
    + SEP
    + opt(words("kaikki", "kaikkia", "kaikki sinulle"))
    + r"(?:aiemm|aikaisemm|edelli|yllä\s++olev|yllä\s++annet|alkuperäi|annet|saama)\w*+"
    + SEP
    + r"(?:järjestelmä)?+(?:ohje|sään|sääntö|komen|käsky|määräy|kehot)\w*+"
    # Estonian
    + r"|"
    + words(
        "ignoreeri",
        "ignoreerige",
        "unusta",
        "unustage",
        "eira",
        "eirake",
        "ära järgi",
        "ärge järgige",
    )
    + SEP
    + opt(words("kõiki", "kõik"))
    + words(
        "eelnevaid",
        "eelnevad",
        "varasemaid",
        "varasemad",
        "ülaltoodud",
        "algseid",
        "algsed",
        "eelmisi",
    )
    + SEP
    + words(
        "juhiseid", "juhised", "reegleid", "reeglid", "käske", "käsud", "korraldusi", "korraldused"
    )
    + NOT_BEFORE_WORD
)

# =========================================================================== Baltic, South Slavic
_BALTIC_SLAVIC_RE: Final = compile_rx(
    # Lithuanian
    words("ignoruok", "ignoruokite", "pamiršk", "pamirškite", "nepaisyk", "nepaisykite", "nevykdyk")
    + SEP
    + opt(words("visas", "visų", "visus"))
    + words(
        "ankstesnes", "ankstesnių", "ankstesnius", "aukščiau pateiktas", "pradines", "ankstesnius"
    )
    + SEP
    + words(
        "instrukcijas", "instrukcijų", "nurodymus", "nurodymų", "taisykles", "taisyklių", "komandas"
    )
    # Latvian
    + r"|"
    + words("ignorē", "ignorējiet", "aizmirsti", "aizmirstiet", "neievēro", "neievērojiet")
    + SEP
    + opt(words("visas", "visus"))
    + words("iepriekšējās", "iepriekšējos", "augstāk minētās", "sākotnējās", "iepriekš dotās")
    + SEP
    + words("instrukcijas", "norādījumus", "noteikumus", "komandas")
    # Croatian, Serbian, Bosnian (Latin), Slovene
    + r"|"
    + words(
        "zanemari",
        "zanemarite",
        "ignoriraj",
        "ignorirajte",
        "ignoriši",
        "ignorišite",
        "zaboravi",
        "zaboravite",
        "prezri",
        "prezrite",
        "pozabi",
        "pozabite",
    )
    + SEP
    + opt(words("sve", "vse", "vsa", "sva"))
    + words(
        "prethodne",
        "prethodna",
        "ranije",
        "gornje",
        "navedene",
        "početne",
        "izvorne",
        "dosadašnje",
        "prejšnja",
        "prejšnje",
        "zgornja",
        "zgornje",
        "izvirna",
    )
    + SEP
    + words(
        "upute",
        "uputstva",
        "uputa",
        "instrukcije",
        "naredbe",
        "pravila",
        "smjernice",
        "smernice",
        "navodila",
        "ukaze",
    )
    + NOT_BEFORE_WORD
)
_CYRILLIC_MORE_RE: Final = compile_rx(
    # Bulgarian, Serbian, Macedonian
    words(
        "игнорирай",
        "игнорирайте",
        "забрави",
        "забравете",
        "пренебрегни",
        "пренебрегнете",
        "занемари",
        "занемарите",
        "игнориши",
        "игноришите",
        "заборави",
        "заборавите",
    )
    + SEP
    + opt(words("всички", "све", "сите"))
    + words(
        "предишни",
        "предишните",
        "горни",
        "горните",
        "предходни",
        "претходне",
        "раније",
        "претходни",
    )
    + SEP
    + words(
        "инструкции",
        "указания",
        "правила",
        "команди",
        "упутства",
        "инструкције",
        "упатства",
        "наредбе",
    )
    + NOT_BEFORE_WORD
)

# =========================================================================== Tagalog
_TL_NOUN: Final = words(
    "tagubilin",
    "instruksyon",
    "instruksiyon",
    "utos",
    "panuto",
    "patakaran",
    "direktiba",
    "alituntunin",
)
_TL_RE: Final = compile_rx(
    words(
        "huwag pansinin",
        "wag pansinin",
        "balewalain",
        "ipagwalang-bahala",
        "ipagwalang bahala",
        "kalimutan",
        "huwag sundin",
        "wag sundin",
        "isantabi",
    )
    + SEP
    + opt(words("ang lahat ng", "lahat ng", "ang", "sa"))
    + opt(words("mga"))
    + r"(?:"
    + words("naunang", "nakaraang", "dating", "unang")
    + SEP
    + opt(words("mga"))
    + _TL_NOUN
    + r"|"
    + _TL_NOUN
    + SEP
    + words("na ibinigay sa iyo", "sa itaas", "na nauna", "kanina", "noon", "na natanggap mo")
    + r")"
    + NOT_BEFORE_WORD
)

# =========================================================================== other scripts
# Thai puts the verb first and writes no spaces between words (so no word-start test);
# Bengali, Tamil and Urdu put the object before the verb ("previous all instructions
# ignore"). The position word is required in all four.
_THAI_RE: Final = compile_rx(
    r"(?:ละเว้น|เพิกเฉย(?:ต่อ)?+|ไม่ต้องสนใจ|ลืม|อย่าทำตาม)\s*+(?:คำสั่ง|คำแนะนำ|กฎ|ข้อกำหนด)"
    r"(?:ทั้งหมด)?+\s*+(?:ก่อนหน้า(?:นี้)?+|ข้างต้น|เดิม|ที่ได้รับ)"
)
_INDIC_URDU_RE: Final = compile_rx(
    # Bengali
    r"(?:পূর্ববর্তী|আগের|উপরের|পূর্বের)\s++(?:সমস্ত\s++|সব\s++)?+(?:নির্দেশ\S*+|নিয়ম\S*+)"
    r"\s++(?:উপেক্ষা|ভুলে\s++যা|অগ্রাহ্য)"
    # Tamil
    r"|(?:முந்தைய|மேலே\s++உள்ள)\s++(?:அனைத்து\s++)?+(?:வழிமுறைகள|அறிவுறுத்தல்கள|விதிகள)\S*+"
    r"\s++(?:புறக்கணி|மறந்து|மற)"
    # Urdu
    r"|(?:پچھلی|سابقہ|اوپر\s++دی\s++گئی|گزشتہ)\s++(?:تمام\s++|سب\s++)?+(?:ہدایات|احکامات|قواعد)"
    r"\s++(?:کو\s++)?+(?:نظر\s++انداز|بھول)"
    r"|(?:تمام\s++)?+(?:پچھلی|سابقہ)\s++(?:ہدایات|احکامات)\s++(?:کو\s++)?+(?:نظر\s++انداز|بھول)"
)

MORE_LANGUAGE_FORMS: Final[tuple[Form, ...]] = (
    Form(RULE_INSTRUCTION_OVERRIDE, "sw", _SW_RE, imperative),
    Form(RULE_INSTRUCTION_OVERRIDE, "zu_xh", _NGUNI_RE, imperative),
    Form(RULE_INSTRUCTION_OVERRIDE, "af", _AF_RE, imperative),
    Form(RULE_INSTRUCTION_OVERRIDE, "sq", _SQ_RE, imperative),
    Form(RULE_INSTRUCTION_OVERRIDE, "ga_gd", _GOIDELIC_RE, imperative),
    Form(RULE_INSTRUCTION_OVERRIDE, "cy", _CY_RE, imperative),
    Form(RULE_INSTRUCTION_OVERRIDE, "ca", _CA_RE, imperative),
    Form(RULE_INSTRUCTION_OVERRIDE, "hu", _HU_RE, word_start),
    Form(RULE_INSTRUCTION_OVERRIDE, "fi_et", _FI_ET_RE, imperative),
    Form(RULE_INSTRUCTION_OVERRIDE, "lt_lv_hr_sr_sl", _BALTIC_SLAVIC_RE, imperative),
    Form(RULE_INSTRUCTION_OVERRIDE, "bg_sr_mk", _CYRILLIC_MORE_RE, word_start, script="cyrillic"),
    Form(RULE_INSTRUCTION_OVERRIDE, "tl", _TL_RE, imperative),
    Form(RULE_INSTRUCTION_OVERRIDE, "th", _THAI_RE, always),
    Form(RULE_INSTRUCTION_OVERRIDE, "bn_ta_ur", _INDIC_URDU_RE, word_start),
)
