"""ADR 0081's reply families in the languages ADR 0086 left (ADR 0086, amendment).

Greek, Arabic, Hebrew, Persian, Urdu, Hindi, Bengali, Tamil, Vietnamese, Thai, Tagalog,
Estonian, Latvian, Lithuanian, Slovene, Bulgarian and Macedonian, and Turkish ids. Many
of them put the verb last (Persian, Urdu, Hindi, Bengali, Tamil, Turkish) or mark "your"
with a suffix (Arabic ``معرفك``), so the forms read the sentence around a verb, not a
fixed order: one lexicon per language, and in each sentence

* ``reply_flood_<lang>`` (``model_directive``): a verb of repeating, a count of two or
  more digits with the word for "times", and the reader's reply in the paragraph. An
  exercise repeated 10 times names no reply and passes;
* ``reply_extract_<lang>`` (``prompt_extraction``): the reader's system message ("your"
  beside it) with a verb of repeating, pasting, copying, sharing, showing or writing, or
  in a question; or a verb of showing or printing, the reader's id, key or password
  ("your" beside it) and a disguise (base64, hex, the language's "reversed"), or a
  "unique / internal" id in a sentence of at most seven words with nothing else in it.
  A device's system message has no "your" and passes; an id shown at a door has no
  disguise and no "unique".

The patterns are folded like the text (accents and combining marks dropped, lower case).
Thai writes no spaces between words: its forms cannot be gated on a word start, and are
listed in ``test_most_forms_are_gated``. Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from memvault.domain.screening_grammar import (
    NOT_AFTER_WORD,
    NOT_BEFORE_WORD,
    RULE_MODEL_DIRECTIVE,
    RULE_PROMPT_EXTRACTION,
    compile_rx,
    inside_word,
    paragraph_span,
    words,
)
from memvault.domain.screening_reply_languages import ordered
from memvault.domain.screening_rules import Check, Form

__all__ = ["REPLY_LANGUAGE_MORE_FORMS"]

# A suffix of a word in any of these scripts (the Indic vowel signs are not \w).
_SUF: Final = r"[\w\u0900-\u0dff]{0,8}+"
_DISGUISE_ANY: Final = (
    r"base-?64|(?<![^\W_])(?:hex\w*+|rot-?13|binar\w*+|morse)(?![^\W_])|<[a-z_]{1,20}+>"
)
_STOP_RE: Final = compile_rx(r"[.!?\n।۔؟]")
_QUESTION: Final = ("?", "؟")
_SENTENCE_WIDTH: Final = 200
_REPLY_WINDOW: Final = 320
# "your" may stand this far before the noun it owns, or after it.
_YOUR_BEFORE: Final = 26
_YOUR_AFTER: Final = 20
_BARE_WORDS: Final = 7


@dataclass(frozen=True, slots=True)
class _Lexicon:
    name: str
    repeat: str
    times: str
    reply: str
    show: str
    ident: str
    your: str
    unique: str
    sysnp: str
    sysverb: str
    reversed: str
    spaced: bool = True
    script: str = ""
    # a word right before the id that makes it someone else's (Turkish genitive)
    not_yours: str = ""


def _rx(pattern: str, spaced: bool) -> re.Pattern[str]:
    if not spaced:
        return compile_rx("(?:" + pattern + ")")
    return compile_rx(NOT_AFTER_WORD + "(?:" + pattern + ")" + NOT_BEFORE_WORD)


@dataclass(frozen=True, slots=True)
class _Compiled:
    lex: _Lexicon
    repeat: re.Pattern[str] | None
    count: re.Pattern[str] | None
    reply: re.Pattern[str] | None
    show: re.Pattern[str]
    ident: re.Pattern[str]
    your: re.Pattern[str]
    unique: re.Pattern[str]
    sysnp: re.Pattern[str] | None
    verb: re.Pattern[str]
    disguise: re.Pattern[str]
    not_yours: re.Pattern[str] | None


def _compile(lex: _Lexicon) -> _Compiled:
    s = lex.spaced
    count = None
    if lex.times:
        count = compile_rx(
            r"(?<![\d.,])\d{2,}+[ \t]*+(?:[-–][ \t]*+)?+(?:"
            + lex.times
            + r")"
            + (NOT_BEFORE_WORD if s else "")
            + r"|(?:"
            + lex.times
            + r")[ \t]++\d{2,}+"
        )
    verbs = "|".join(p for p in (lex.repeat, lex.show, lex.sysverb) if p)
    return _Compiled(
        lex=lex,
        repeat=_rx(lex.repeat, s) if lex.repeat else None,
        count=count,
        reply=_rx(lex.reply, s) if lex.reply else None,
        show=_rx(lex.show, s),
        ident=_rx(lex.ident, s),
        your=_rx(lex.your, s),
        unique=_rx(lex.unique, s),
        sysnp=_rx(lex.sysnp, s) if lex.sysnp else None,
        verb=_rx(verbs, s),
        disguise=compile_rx(_DISGUISE_ANY + "|" + _rx(lex.reversed, s).pattern),
        not_yours=compile_rx(lex.not_yours) if lex.not_yours else None,
    )


def _sentence(text: str, start: int, end: int) -> tuple[int, int]:
    """The sentence around ``text[start:end]`` (at most ``_SENTENCE_WIDTH`` either side)."""
    low, high = paragraph_span(text, start, end, _SENTENCE_WIDTH, _SENTENCE_WIDTH)
    for stop in _STOP_RE.finditer(text, low, start):
        low = stop.end()
    after = _STOP_RE.search(text, end, high)
    return low, (after.end() if after is not None else high)


def _owned(c: _Compiled, text: str, start: int, end: int, low: int, high: int) -> bool:
    """ "Your" stands beside ``text[start:end]`` (or is part of it), in its sentence."""
    if c.not_yours is not None and c.not_yours.search(text[max(low, start - 30) : start]):
        return False
    return (
        c.your.search(text, max(low, start - _YOUR_BEFORE), min(high, end + _YOUR_AFTER))
        is not None
    )


def _flood(c: _Compiled, text: str, low: int, high: int) -> bool:
    if c.count is None or c.reply is None or c.count.search(text, low, high) is None:
        return False
    plow, phigh = paragraph_span(text, low, high, _REPLY_WINDOW, _REPLY_WINDOW)
    return c.reply.search(text, plow, phigh) is not None


def _system_message(c: _Compiled, text: str, low: int, high: int) -> bool:
    if c.sysnp is None:
        return False
    asked = text[low:high].rstrip().endswith(_QUESTION)
    for np in c.sysnp.finditer(text, low, high):
        if not _owned(c, text, np.start(), np.end(), low, high):
            continue
        if asked:
            return True
        for verb in c.verb.finditer(text, low, high):
            if verb.end() <= np.start() or verb.start() >= np.end():
                return True
    return False


def _own_id(c: _Compiled, text: str, low: int, high: int) -> bool:
    if c.show.search(text, low, high) is None:
        return False
    if not any(
        _owned(c, text, noun.start(), noun.end(), low, high)
        for noun in c.ident.finditer(text, low, high)
    ):
        return False
    # What follows is about the sentence, not the noun: decided once.
    if c.disguise.search(text, low, high) is not None:
        return True
    sentence = text[low:high]
    return (
        c.lex.spaced
        and c.unique.search(text, low, high) is not None
        and len(sentence.split()) <= _BARE_WORDS
        and not any(ch.isdigit() for ch in sentence)
    )


def _starts_word(c: _Compiled, text: str, m: re.Match[str]) -> bool:
    return not c.lex.spaced or not inside_word(text, m.start())


def _flood_check(c: _Compiled) -> Check:
    def check(text: str, m: re.Match[str]) -> bool:
        if not _starts_word(c, text, m):
            return False
        low, high = _sentence(text, m.start(), m.end())
        return _flood(c, text, low, high)

    return check


def _extract_check(c: _Compiled) -> Check:
    def check(text: str, m: re.Match[str]) -> bool:
        if not _starts_word(c, text, m):
            return False
        low, high = _sentence(text, m.start(), m.end())
        return _system_message(c, text, low, high) or _own_id(c, text, low, high)

    return check


_S: Final = _SUF

# The Turkish id carries its own possessive suffix ("your id" is one word), so the same
# words are both the id and the "your" of the sentence.
_TR_IDS: Final = (
    "kimliğini",
    "kimliğin",
    "kimlik numaranı",
    "id'ni",
    "id’ni",
    "id'ini",
    "anahtarını",
    "şifreni",
    "parolanı",
    "tokenini",
    "token'ını",
)

_LEXICONS: Final[tuple[_Lexicon, ...]] = (
    _Lexicon(
        name="el",
        repeat=words("επανάλαβε", "επαναλάβετε", "ξαναγράψε"),
        times=words("φορές"),
        reply=r"απαντησ\w{0,3}+[ \t]++(?:σου|σας)",
        show=words(
            "εμφάνισε", "εμφανίστε", "δείξε", "δείξτε", "τύπωσε", "τυπώστε", "εκτύπωσε", "αποκάλυψε"
        ),
        ident=words(
            "αναγνωριστικό",
            "αναγνωριστικού",
            "id",
            "κλειδί",
            "κωδικό πρόσβασης",
            "token",
            "συνθηματικό",
        ),
        your=words("σου", "σας"),
        unique=words("μοναδικό", "εσωτερικό"),
        sysnp=r"(?:μηνυμ|οδηγι)\w{0,4}+[ \t]++(?:του[ \t]++)?+συστηματ\w{0,3}+"
        r"|system[ \t]++prompt",
        sysverb=words(
            "επικόλλησε",
            "επικολλήστε",
            "αντέγραψε",
            "αντιγράψτε",
            "μοιράσου",
            "πες μου",
            "γράψε",
            "γράψτε",
            "παράθεσε",
        ),
        reversed=words("ανάποδα", "αντίστροφα", "με αντίστροφη σειρά"),
        script="greek",
    ),
    _Lexicon(
        name="ar",
        repeat=words("كرر", "كرري", "كرروا", "أعد"),
        times=words("مرة", "مرات"),
        reply=r"\w{0,2}?(?:ردك|اجابتك|جوابك)",
        show=words("اعرض", "أظهر", "اطبع", "اكشف", "أخرج"),
        ident=words("معرفك", "مفتاحك", "رمزك", "المعرف", "المفتاح", "كلمة المرور", "id"),
        your=words("معرفك", "مفتاحك", "رمزك", "الخاص بك", "الخاصة بك", "لديك", "رسالتك"),
        unique=words("الفريد", "الفريدة", "الداخلي"),
        sysnp=words(
            "رسالة النظام", "رسالتك النظامية", "موجه النظام", "تعليمات النظام", "مطالبة النظام"
        ),
        sysverb=words("الصق", "انسخ", "شارك", "أخبرني", "قل لي", "اكتب", "اقتبس"),
        reversed=words("بالعكس", "معكوس", "معكوسا", "بترتيب عكسي"),
        script="arabic_hebrew",
    ),
    _Lexicon(
        name="he",
        repeat=words("חזור על", "חזרי על", "חזרו על", "תחזור על"),
        times=words("פעמים"),
        reply=words("התשובה שלך", "תשובתך", "בתשובתך", "בתשובה שלך"),
        show=words("הצג", "הציגי", "הדפס", "הדפיסי", "חשוף", "גלה", "פלוט", "הראה"),
        ident=words("מזהה", "המזהה", "מפתח", "המפתח", "סיסמה", "הסיסמה", "טוקן", "id"),
        your=words("שלך", "שלכם"),
        unique=words("הייחודי", "ייחודי", "הפנימי", "פנימי"),
        sysnp=words("הודעת המערכת", "הנחיית המערכת", "הוראות המערכת", "פרומפט המערכת"),
        sysverb=words("הדבק", "העתק", "שתף", "ספר לי", "כתוב", "צטט"),
        reversed=words("הפוך", "בסדר הפוך", "מהסוף להתחלה"),
        script="arabic_hebrew",
    ),
    _Lexicon(
        name="fa",
        repeat=words("تکرار کن", "تکرار کنید", "تکرار نما"),
        times=words("بار", "مرتبه"),
        reply=words("پاسخ خود", "پاسخت", "پاسخ شما", "جوابت", "جواب خود"),
        show=words("نمایش بده", "نشان بده", "چاپ کن", "چاپ کنید", "فاش کن", "آشکار کن"),
        ident=words("شناسه", "کلید", "رمز عبور", "توکن", "id"),
        your=words("خود", "خودت", "شما", "تو"),
        unique=r"یکتا" + _S + "|" + words("منحصر به فرد", "داخلی"),
        sysnp=words(
            "پیام سیستمی", "پیام سیستم", "دستورالعمل سیستمی", "پرامپت سیستمی", "اعلان سیستمی"
        ),
        sysverb=words("بچسبان", "کپی کن", "به اشتراک بگذار", "بگو", "بنویس", "نقل کن"),
        reversed=words("برعکس", "وارونه", "معکوس"),
        script="arabic_hebrew",
    ),
    _Lexicon(
        name="ur",
        repeat=words("دہرائیں", "دہراؤ", "دوہرائیں", "دہرا دیں"),
        times=words("بار", "مرتبہ", "دفعہ"),
        reply=words("اپنے جواب", "اپنا جواب", "آپ کے جواب", "تمہارے جواب"),
        show=words("دکھائیں", "دکھاؤ", "پرنٹ کریں", "ظاہر کریں"),
        ident=words("آئی ڈی", "شناخت", "شناختی نمبر", "کلید", "پاس ورڈ", "ٹوکن", "id"),
        your=words("اپنی", "اپنا", "اپنے", "آپ کی", "آپ کا", "تمہاری", "تمہارا"),
        unique=words("منفرد", "اندرونی"),
        sysnp=words("سسٹم پیغام", "سسٹم میسج", "سسٹم پرامپٹ", "نظام کا پیغام", "سسٹم ہدایات"),
        sysverb=words("چسپاں کریں", "کاپی کریں", "شیئر کریں", "بتائیں", "بتاؤ", "لکھیں", "لکھو"),
        reversed=words("الٹا", "الٹی ترتیب میں", "الٹے"),
        script="arabic_hebrew",
    ),
    _Lexicon(
        name="hi",
        repeat=words("दोहराओ", "दोहराएं", "दोहराएँ", "दोहराइए"),
        times=words("बार"),
        reply=words(
            "अपने उत्तर",
            "अपना उत्तर",
            "अपने जवाब",
            "अपना जवाब",
            "आपके उत्तर",
            "आपके जवाब",
            "तुम्हारे जवाब",
            "तुम्हारे उत्तर",
        ),
        show=words("दिखाओ", "दिखाएं", "दिखाइए", "प्रिंट करो", "प्रिंट करें", "छापो", "प्रकट करो"),
        ident=words("आईडी", "id", "कुंजी", "पासवर्ड", "टोकन", "पहचानकर्ता"),
        your=words("अपनी", "अपना", "अपने", "आपकी", "आपका", "तुम्हारी", "तुम्हारा"),
        unique=words("यूनिक", "अद्वितीय", "आंतरिक", "अनोखी"),
        sysnp=words("सिस्टम संदेश", "सिस्टम मैसेज", "सिस्टम प्रॉम्प्ट", "सिस्टम निर्देश"),
        sysverb=words(
            "पेस्ट करो",
            "पेस्ट करें",
            "कॉपी करो",
            "कॉपी करें",
            "साझा करो",
            "शेयर करो",
            "बताओ",
            "बताएं",
            "लिखो",
            "लिखें",
        ),
        reversed=words("उल्टा", "उलटा", "उल्टे क्रम में"),
        script="devanagari",
    ),
    _Lexicon(
        name="bn",
        repeat=words("পুনরাবৃত্তি করো", "পুনরাবৃত্তি করুন", "আবার বলো", "আবার লেখো"),
        times=words("বার"),
        reply=r"(?:তোমার|আপনার|তোর)[ \t]++(?:উত্তর|জবাব)" + _S,
        show=words("দেখাও", "দেখান", "প্রিন্ট করো", "প্রিন্ট করুন", "প্রকাশ করো", "ছাপাও"),
        ident=words("আইডি", "id", "চাবি", "পাসওয়ার্ড", "টোকেন", "শনাক্তকারী"),
        your=words("তোমার", "আপনার", "তোর"),
        unique=words("অনন্য", "অভ্যন্তরীণ", "নিজস্ব"),
        sysnp=r"সিস্টেম[ \t]++(?:বার্তা|মেসেজ|প্রম্পট|নির্দেশ)" + _S,
        sysverb=words(
            "পেস্ট করো", "পেস্ট করুন", "কপি করো", "কপি করুন", "শেয়ার করো", "বলো", "বলুন", "লেখো", "লিখুন"
        ),
        reversed=words("উল্টো", "বিপরীত ক্রমে"),
    ),
    _Lexicon(
        name="ta",
        repeat=words(
            "திரும்பச் சொல்லுங்கள்", "திரும்பச் சொல்", "மீண்டும் எழுதுங்கள்", "மீண்டும் சொல்லுங்கள்", "திரும்ப எழுது"
        ),
        times=words("முறை"),
        reply=r"(?:உங்கள்|உன்|உனது|உங்களுடைய)[ \t]++பதில்" + _S,
        show=words("காட்டுங்கள்", "காட்டு", "அச்சிடுங்கள்", "அச்சிடு", "வெளியிடுங்கள்", "வெளிப்படுத்து"),
        ident=r"(?:ஐடி|id|விசை|கடவுச்சொல்|டோக்கன்|அடையாளங்காட்டி)" + _S,
        your=words("உங்கள்", "உன்", "உனது", "உங்களுடைய"),
        unique=words("தனித்துவமான", "தனிப்பட்ட"),
        sysnp=r"(?:கணினி|சிஸ்டம்|அமைப்பு)[ \t]++(?:செய்தி|ப்ராம்ப்ட்|அறிவுறுத்தல்)" + _S,
        sysverb=words(
            "ஒட்டுங்கள்",
            "ஒட்டு",
            "நகலெடுங்கள்",
            "நகலெடு",
            "பகிருங்கள்",
            "சொல்லுங்கள்",
            "சொல்",
            "எழுதுங்கள்",
            "எழுது",
        ),
        reversed=words("தலைகீழாக", "தலைகீழ் வரிசையில்"),
    ),
    _Lexicon(
        name="vi",
        repeat=words("lặp lại", "nhắc lại"),
        times=words("lần"),
        reply=r"(?:cau[ \t]++tra[ \t]++loi|phan[ \t]++hoi)[ \t]++cua[ \t]++(?:ban|em|anh)",
        show=words("in ra", "hiển thị", "hiện ra", "tiết lộ", "xuất ra"),
        ident=words("id", "mã định danh", "khóa", "mật khẩu", "token"),
        your=words("của bạn", "của em", "của anh"),
        unique=words("duy nhất", "nội bộ"),
        sysnp=words(
            "tin nhắn hệ thống",
            "thông điệp hệ thống",
            "lời nhắc hệ thống",
            "prompt hệ thống",
            "chỉ dẫn hệ thống",
        ),
        sysverb=words(
            "dán", "sao chép", "chia sẻ", "cho tôi biết", "viết ra", "viết lại", "trích dẫn"
        ),
        reversed=words("ngược", "theo thứ tự ngược", "đảo ngược"),
    ),
    _Lexicon(
        name="th",
        repeat=r"ทำซ้ำ|พูดซ้ำ|พิมพ์ซ้ำ|ซ้ำ",
        times=r"ครั้ง",
        reply=r"คำตอบของ(?:คุณ|เธอ|นาย)",
        show=r"แสดง|พิมพ์|เปิดเผย|บอก",
        ident=r"id|ไอดี|รหัสประจำตัว|คีย์|รหัสผ่าน|โทเค็น",
        your=r"ของ(?:คุณ|เธอ|นาย)",
        unique=r"เฉพาะ|ภายใน|ไม่ซ้ำ",
        sysnp=r"ข้อความ(?:ของ)?ระบบ|พรอมต์ระบบ|คำสั่งระบบ",
        sysverb=r"วาง|คัดลอก|แชร์|บอก|เขียน",
        reversed=r"กลับด้าน|ย้อนกลับ|กลับหลัง",
        spaced=False,
    ),
    _Lexicon(
        name="tl",
        repeat=words("ulitin", "ulitin mo", "paulit-ulitin", "ulit-ulitin"),
        times=words("beses"),
        reply=words("iyong sagot", "sagot mo", "iyong tugon", "tugon mo", "inyong sagot"),
        show=words("ipakita", "i-print", "ilabas", "ibunyag"),
        ident=words("id", "susi", "password", "token", "pagkakakilanlan"),
        your=words("iyong", "mo", "ninyo", "inyong"),
        unique=r"natatangi\w{0,2}+|panloob|sariling",
        sysnp=words(
            "system message", "system prompt", "mensahe ng sistema", "tagubilin ng sistema"
        ),
        sysverb=words("idikit", "kopyahin", "ibahagi", "sabihin mo", "isulat", "banggitin"),
        reversed=words("baligtad", "pabaligtad", "baliktad", "pabaliktad"),
    ),
    _Lexicon(
        name="et",
        repeat=words("korda", "kordage"),
        times=words("korda"),
        reply=r"(?:oma|sinu|teie)[ \t]++vastus\w{0,4}+|(?:oma|sinu|teie)[ \t]++vastuse\w{0,4}+",
        show=words("näita", "näidake", "prindi", "kuva", "kuvage", "avalda", "väljasta"),
        ident=r"id(?:-d)?+|identifikaator\w{0,3}+|võt(?:i|it|me)|parool\w{0,3}+|token\w{0,3}+",
        your=words("oma", "sinu", "teie"),
        unique=r"unikaaln\w{0,4}+|sisemi\w{0,4}+|ainulaadse\w{0,3}+",
        sysnp=r"süsteemi(?:sõnum|viip|juhis)\w{0,4}+|süsteemi[ \t]++sõnum\w{0,4}+",
        sysverb=words("kleebi", "kopeeri", "jaga", "ütle mulle", "kirjuta", "tsiteeri"),
        reversed=words("tagurpidi", "vastupidises järjekorras"),
    ),
    _Lexicon(
        name="lv",
        repeat=words("atkārto", "atkārtojiet"),
        times=words("reizes"),
        reply=r"(?:savas|savu|sava|tavas|tavu|tava|jūsu)[ \t]++atbild\w{0,3}+",
        show=words("parādi", "parādiet", "izdrukā", "izvadi", "atklāj"),
        ident=r"id|identifikator\w{0,3}+|atslēg\w{0,3}+|parol\w{0,3}+|token\w{0,3}+",
        your=words("savu", "savs", "sava", "tavu", "tavs", "tava", "jūsu"),
        unique=r"unikāl\w{0,3}+|iekšēj\w{0,3}+",
        sysnp=r"sistēmas[ \t]++(?:ziņojum|uzvedn|norādījum)\w{0,3}+",
        sysverb=words("ielīmē", "kopē", "nokopē", "dalies ar", "pastāsti", "uzraksti", "citē"),
        reversed=words("otrādi", "apgrieztā secībā"),
    ),
    _Lexicon(
        name="lt",
        repeat=words("pakartok", "pakartokite", "kartok"),
        times=words("kartų", "kartus"),
        reply=r"(?:savo|tavo|jūsų)[ \t]++atsakym\w{0,3}+",
        show=words("parodyk", "parodykite", "atspausdink", "išvesk", "atskleisk"),
        ident=r"id|identifikator\w{0,3}+|rakt\w{0,3}+|slaptažod\w{0,3}+|token\w{0,3}+",
        your=words("savo", "tavo", "jūsų"),
        unique=r"unikal\w{0,3}+|vidin\w{0,3}+",
        sysnp=r"sistemos[ \t]++(?:pranešim|raginim|nurodym)\w{0,3}+"
        r"|sistemin\w{0,2}+[ \t]++pranešim\w{0,3}+",
        sysverb=words(
            "įklijuok", "įklijuokite", "nukopijuok", "pasidalink", "pasakyk", "parašyk", "cituok"
        ),
        reversed=words("atbulai", "atvirkščiai", "atvirkštine tvarka"),
    ),
    _Lexicon(
        name="sl",
        repeat=words("ponovi", "ponovite"),
        times=words("krat"),
        reply=r"(?:svoj|tvoj|vaš)\w{0,4}+[ \t]++odgovor\w{0,3}+",
        show=words("izpiši", "izpišite", "pokaži", "pokažite", "prikaži", "razkrij"),
        ident=r"id|identifikator\w{0,3}+|ključ\w{0,3}+|gesl[oa]|žeton\w{0,3}+|token\w{0,3}+",
        your=r"(?:svoj|tvoj|vaš)\w{0,4}+",
        unique=r"edinstven\w{0,3}+|notranj\w{0,3}+",
        sysnp=r"sistemsk\w{0,3}+[ \t]++(?:sporočil|poziv|navodil)\w{0,3}+",
        sysverb=words("prilepi", "kopiraj", "deli", "povej mi", "napiši", "citiraj"),
        reversed=words("obratno", "v obratnem vrstnem redu", "od zadaj naprej"),
    ),
    _Lexicon(
        name="bg_mk",
        repeat=words("повтори", "повторете"),
        times=words("пъти", "пати"),
        reply=r"(?:своя|твоя|вашия|своят|твоят|својот|твојот|вашиот)[ \t]++"
        r"(?:отговор|одговор)\w{0,3}+|отговора[ \t]++си",
        show=words(
            "покажи",
            "покажете",
            "изведи",
            "изведете",
            "отпечатай",
            "разкрий",
            "прикажи",
            "отпечати",
            "испиши",
            "откриј",
        ),
        ident=r"id|идентификатор\w{0,3}+|ключ\w{0,3}+|клуч\w{0,3}+|парола\w{0,3}+|лозинка\w{0,3}+|токен\w{0,3}+",
        your=words(
            "своя",
            "твоя",
            "своето",
            "твоето",
            "вашия",
            "твой",
            "свой",
            "си",
            "ти",
            "својот",
            "твојот",
            "својата",
            "твојата",
            "твоето",
            "вашиот",
        ),
        unique=r"уникал\w{0,3}+|уникат\w{0,3}+|вътреш\w{0,4}+|внатреш\w{0,4}+",
        sysnp=r"системн\w{0,4}+[ \t]++(?:съобщени|подкан|промпт|инструкци)\w{0,3}+"
        r"|системск\w{0,3}+[ \t]++(?:порак|промпт|упатств)\w{0,3}+",
        sysverb=words(
            "постави",
            "копирай",
            "сподели",
            "кажи ми",
            "напиши",
            "цитирай",
            "залепи",
            "копирај",
            "цитирај",
        ),
        reversed=words(
            "наобратно", "отзад напред", "в обратен ред", "наопаку", "во обратен редослед"
        ),
        script="cyrillic",
    ),
    _Lexicon(
        name="tr",
        repeat="",
        times="",
        reply="",
        show=words("yazdır", "göster", "ifşa et", "açığa çıkar", "çıktısını ver"),
        ident=words(*_TR_IDS),
        your=words("senin", "kendi", *_TR_IDS),
        unique=words("benzersiz", "dahili", "özel"),
        sysnp="",
        sysverb="",
        reversed=words("tersten", "ters çevrilmiş", "ters sırayla", "tersine"),
        not_yours=r"(?<![^\W\d_])(?!senin)[^\W\d_]+?(?:nın|nin|nun|nün|ın|in|un|ün)[ \t]++$",
    ),
)


def _forms() -> tuple[Form, ...]:
    forms: list[Form] = []
    for lex in _LEXICONS:
        c = _compile(lex)
        if lex.repeat:
            forms.append(
                Form(
                    RULE_MODEL_DIRECTIVE,
                    f"reply_flood_{lex.name}",
                    _rx(lex.repeat, lex.spaced),
                    _flood_check(c),
                    script=lex.script,
                )
            )
        anchor = "|".join(p for p in (lex.show, lex.sysverb, lex.repeat, lex.sysnp) if p)
        forms.append(
            Form(
                RULE_PROMPT_EXTRACTION,
                f"reply_extract_{lex.name}",
                _rx(anchor, lex.spaced),
                _extract_check(c),
                script=lex.script,
            )
        )
    return tuple(forms)


# ----------------------------------------------------------------- own_config_other

# The English ``own_config`` in the languages ADR 0086 reads: a verb of sharing or
# showing that opens a clause, the reader's configuration or settings with "your" beside
# it, a word of purpose ("para", "für", "kwa", "le haghaidh", "airson") before a word of
# security, checking or verifying, and no recipient after the noun but the writer ("con
# Ana", "mit dem Team", "dengan Budi" pass; "conmigo", "mit mir" do not).
_CFG_VERB: Final = words(
    *("comparte", "compartid", "muestra", "muéstrame", "imprime", "revela", "envía"),
    *("envíame", "dame", "proporciona", "partage", "partagez", "affiche", "affichez"),
    *("montre", "montrez", "révèle", "envoie", "envoie-moi", "donne-moi", "fournis"),
    *("teile", "zeige", "zeig", "gib", "drucke", "verrate", "sende", "schick", "nenne"),
    *("compartilhe", "partilha", "partilhe", "mostre", "imprima", "revele", "envie"),
    *("forneça", "condividi", "mostra", "mostrami", "stampa", "rivela", "invia"),
    *("inviami", "fornisci", "dammi", "deel", "toon", "laat zien", "geef", "stuur"),
    *("ndaj", "trego", "shfaq", "printo", "zbulo", "dërgo", "jep", "shiriki", "onyesha"),
    *("chapisha", "toa", "tuma", "nipe", "roinn", "taispeáin", "priontáil", "tabhair"),
    *("seol", "nocht", "seall", "clò-bhuail", "thoir", "bagikan", "tampilkan", "cetak"),
    *("berikan", "kirim", "tunjukkan", "ungkapkan", "rhannwch", "rhanna", "dangoswch"),
    *("dangos", "rhowch", "anfonwch", "yabelana", "bonisa", "khombisa", "khipha"),
    *("nikeza", "thumela"),
    *("comparteix", "wys", "udostępnij", "pokaż", "wyślij", "podaj", "покажи", "поделись"),
    *("выведи", "отправь", "дай", "поділись", "виведи", "надішли", "dela", "visa"),
    *("skicka", "vis", "ukaž", "sdílej", "vypiš", "pošli", "arată", "arată-mi"),
    *("partajează", "afișează", "trimite", "trimite-mi", "pokaži", "podijeli", "ispiši"),
    *("pošalji",),
)
_CFG_NOUN_RE: Final = compile_rx(
    NOT_AFTER_WORD
    + r"(?:"
    + words(
        *("configuración", "configuraciones", "ajustes", "configuration", "paramètres"),
        *("réglages", "konfiguration", "einstellungen", "configuração", "configurações"),
        *("definições", "configurazione", "impostazioni", "configuratie", "instellingen"),
        *("konfigurimin", "konfigurimi", "cilësimet", "cilësimin", "parametrat"),
        *("mipangilio", "usanidi", "cumraíocht", "chumraíocht", "socruithe", "shocruithe"),
        *("rèiteachadh", "roghainnean", "suidheachadh", "konfigurasi", "konfigurasimu"),
        *("pengaturan", "pengaturanmu", "setelan", "gosodiadau", "ffurfweddiad"),
        *("izilungiselelo", "ngezilungiselelo", "ukulungiselelwa"),
        *("configuració", "configuracions", "paràmetres", "instellings", "konfigurasie"),
        *("konfigurację", "konfiguracja", "konfiguracji", "ustawienia", "настройки"),
        *("настроек", "конфигурацию", "конфигурация", "налаштування", "конфігурацію"),
        *("inställningar", "konfigurationen", "innstillingene", "innstillinger"),
        *("konfigurasjonen", "indstillinger", "indstillingerne", "nastavení", "konfiguraci"),
        *("configurația", "setările", "configurarea", "postavke", "konfiguraciju"),
    )
    + r"|(?:nge|ngama|i|ama)?+sethingi"
    + r")"
    + NOT_BEFORE_WORD
)
_CFG_YOUR_RE: Final = compile_rx(
    NOT_AFTER_WORD
    + words(
        *("tu", "tus", "ta", "ton", "tes", "votre", "vos", "deine", "deinen", "ihre"),
        *("sua", "suas", "seu", "seus", "tua", "tuo", "tue", "je", "jouw", "uw", "e tua"),
        *("e tuaj", "tënd", "tënde", "tuaj", "yako", "zako", "wako", "lako", "do", "agad"),
        *("bhur", "kamu", "anda", "konfigurasimu", "pengaturanmu", "eich", "dy", "zakho"),
        *("yakho", "kwakho", "wakho", "la teva", "teva", "les teves", "teves", "jou"),
        *("swoją", "swoje", "twoją", "twoje", "свои", "твои", "свою", "твою", "ваши"),
        *("свої", "твої", "dina", "ditt", "dine", "své", "svou", "tvé", "tvou", "tale"),
        *("tău", "svoje", "tvoje", "svoju", "tvoju"),
    )
    + NOT_BEFORE_WORD
)
_CFG_PURPOSE_RE: Final = compile_rx(
    # Polish "do" (Gaelic "to"): only with a word of checking right after it
    NOT_AFTER_WORD
    + r"do[ \t]++(?:weryfikacji|kontroli|audytu|sprawdzenia)"
    + NOT_BEFORE_WORD
    + r"|"
    + NOT_AFTER_WORD
    + words(
        *("para", "pour", "für", "zur", "zum", "per", "voor", "për", "kwa", "le haghaidh"),
        *("airson", "untuk", "ar gyfer", "ukuze", "como parte de", "dans le cadre de"),
        *("per a", "vir", "w celu", "dla", "для", "в целях", "ради", "з метою"),
        *("för", "for", "til", "kvůli", "pro", "pentru", "radi", "za"),
    )
    + NOT_BEFORE_WORD
    + r"[^.!?\n]{0,40}?"
    + NOT_AFTER_WORD
    + r"(?:"
    + words(
        *("seguridad", "verificación", "auditoría", "comprobación", "sécurité"),
        *("vérification", "audit", "contrôle", "sicherheitsprüfung", "überprüfung"),
        *("sicherheitsüberprüfung", "prüfung", "verifizierung", "sicherheitscheck"),
        *("segurança", "verificação", "auditoria", "sicurezza", "verifica", "controllo"),
        *("veiligheidscontrole", "beveiligingscontrole", "controle", "verificatie"),
        *("sigurie", "sigurisë", "verifikim", "verifikimi", "kontroll", "kontrollin"),
        *("auditim", "usalama", "ukaguzi", "uthibitisho", "uthibitishaji", "slándála"),
        *("fíorú", "fhíorú", "fíoraithe", "seiceáil", "iniúchadh", "iniúchta"),
        *("tèarainteachd", "dearbhadh", "sgrùdadh", "keamanan", "pemeriksaan"),
        *("verifikasi", "diogelwch", "gwiriad", "dilysu", "archwiliad", "ukuphepha"),
        *("zokuphepha", "kokuphepha", "ukuhlolwa", "ukuhlola", "kuhlolwe", "ukuqinisekisa"),
        *("seguretat", "verificació", "revisió", "sekuriteitskontrole", "sekuriteit"),
        *("verifikasie", "oudit", "weryfikacji", "bezpieczeństwa", "audytu", "kontroli"),
        *("проверки", "безопасности", "аудита", "верификации", "перевірки", "безпеки"),
        *("аудиту", "säkerhetskontroll", "säkerhetskontrollen", "verifiering", "granskning"),
        *("sikkerhetssjekk", "sikkerhetskontroll", "sikkerhedstjek", "kontroll"),
        *("verifisering", "bezpečnostní", "kontrole", "kontrolu", "ověření", "verificare"),
        *("securitate", "sigurnosne", "provjere", "provjeru", "revizije"),
    )
    + r")"
    + NOT_BEFORE_WORD
)
# Someone else to receive it: "con Ana", "mit dem Team", "me kolegun", "do Mhàiri".
_CFG_RECIPIENT_RE: Final = compile_rx(
    NOT_AFTER_WORD
    + r"(?:con|avec|mit|com|met|me|na|le|gu|dengan|gyda|do|with|à|a)"
    + r"[ \t]++(?!"
    + words(
        *("mí", "me", "moi", "mir", "uns", "nous", "mij", "ons", "mua", "ne", "haghaidh"),
        *("saya", "aku", "kami", "fi", "mi", "ni", "us", "fin", "mise"),
    )
    + NOT_BEFORE_WORD
    + r")"
)
# "your" after the noun ("konfigurimin tënd", "roghainnean agad", "innstillingene dine")
_CFG_AFTER_NOUN_RE: Final = compile_rx(
    r"(?:[ \t]++"
    + words(
        *("tënd", "tënde", "tuaj", "e tua", "e tuaj", "yako", "zako", "wako", "lako"),
        *("agad", "kamu", "anda", "zakho", "yakho", "kwakho", "wakho", "ta", "tale"),
        *("tău", "dine", "dina", "ditt", "teva"),
    )
    + NOT_BEFORE_WORD
    + r")?+[ \t,]*+"
)
_CFG_RE: Final = compile_rx(NOT_AFTER_WORD + _CFG_VERB + NOT_BEFORE_WORD)
_CFG_NOUN_AFTER: Final = 60


def own_config_other_check(text: str, m: re.Match[str]) -> bool:
    """The reader's own configuration ordered out under a pretext of checking."""
    # the verb opens a clause, or follows "that", "and" or "instead" (ADR 0086's leads)
    if not ordered(text, m.start()):
        return False
    low, high = _sentence(text, m.start(), m.end())
    noun = _CFG_NOUN_RE.search(text, m.end(), min(high, m.end() + _CFG_NOUN_AFTER))
    if noun is None:
        return False
    if _CFG_YOUR_RE.search(text, m.end(), min(high, noun.end() + _YOUR_AFTER)) is None:
        return False
    # the purpose stands before the verb, or right after the noun and its "your": a word
    # between them is a recipient in a case ("мастеру", "Kasi", "colegului")
    after = _CFG_AFTER_NOUN_RE.match(text, noun.end())
    at = after.end() if after is not None else noun.end()
    purpose = _CFG_PURPOSE_RE.match(text, at, high)
    if purpose is None and _CFG_PURPOSE_RE.search(text, low, m.start()) is None:
        return False
    # a recipient after it all ("... para la auditoría con Ana")
    rest = purpose.end() if purpose is not None else noun.end()
    return _CFG_RECIPIENT_RE.search(text, rest, high) is None


REPLY_LANGUAGE_MORE_FORMS: Final[tuple[Form, ...]] = (
    *_forms(),
    Form(RULE_PROMPT_EXTRACTION, "own_config_other", _CFG_RE, own_config_other_check),
)
