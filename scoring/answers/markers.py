"""The words that carry evidence about where a reply's answer is, in the languages models answer in.

Answer markers ("Answer:", "答案：", "la bonne réponse est") say "what follows is the answer";
refusal phrases say "there is none"; set-aside cues (negation, a hypothetical, a justification,
a back bearing) say "this mention is not the answer". One table per kind of evidence, read by
`scoring.answers.text` (where the answer is) and `scoring.answers.evidence` (which candidate).

>>> normalise_script("答案是174.5米")
'答案是 174.5 米'
>>> normalise_script("ＡＢＣ，１２")
'ABC,12'
"""

from __future__ import annotations

import re

# Answer markers beyond English: each is followed by the answer on the same line. CJK words are
# `\w` to Python's `re`, so these carry no word boundaries; the letter or number after them is
# split from them by normalise_script first.
FOREIGN_MARKERS = (
    # Chinese: 答案是 C, 最终答案：C, 所以选B, 故选 B, 应选C, 正确选项是 C
    r"|(?:最终|最後|最后的?|正确的?|正確的?)?答案(?:应该|应|應該|應)?(?:是|为|為|选|選)?"
    r"|(?:所以|因此|故|应|應|我)(?:选择|選擇|选|選)(?:项|項)?(?:是|为|為)?"
    r"|正确(?:选项|選項)(?:是|为|為)?|答(?=[ \t]*[:：])"
    # Japanese: 正解は C, 答えは C, 解答：C
    r"|(?:正解|答え|解答)(?:は|：|:)?"
    # Korean: 정답: C, 정답은 C, 답은 C
    r"|(?:최종\s*)?정답(?:은|는)?|(?:최종\s*)?답(?:변)?(?:은|는)|답(?=[ \t]*[:：])"
    # French, German, Spanish, Portuguese, Italian, Russian: "the (right) answer is", "answer:"
    r"|\b(?:la\s+)?(?:bonne\s+|vraie\s+)?r[ée]ponse(?:\s+(?:correcte|finale|exacte))?\s+(?:est|serait)\b"
    r"|\b(?:die\s+)?(?:richtige\s+|korrekte\s+|endgültige\s+)?antwort\s+(?:ist|lautet|wäre)\b"
    r"|\b(?:la\s+)?respuesta(?:\s+(?:correcta|final))?\s+(?:es|ser[íi]a)\b"
    r"|\b(?:a\s+)?resposta(?:\s+(?:correta|certa|final))?\s+(?:é|seria)(?!\w)"
    r"|\b(?:la\s+)?risposta(?:\s+(?:corretta|giusta|finale))?\s+(?:è|sarebbe)(?!\w)"
    r"|\b(?:r[ée]ponse|antwort|respuesta|resposta|risposta)(?=[ \t]*[:：])"
    r"|(?<!\w)(?:правильный\s+|верный\s+|окончательный\s+|итоговый\s+)?ответ(?![а-яё])(?:\s*(?:—|–|-|это|будет))?"
)

# Refusals beyond the English core of `text._REFUSAL`: other phrasings and other languages.
MORE_REFUSALS = (
    r"|\bundetermined\b|^\W*(?:impossible|cannot\s+say|can'?t\s+say|not\s+determinable)\W*$"
    r"|^\W*n/?a\b[ \t]*[—–:,.(\-]"
    r"|\b(?:is|are|est|sont|es|è|ist|é)\s+(?:\w+\s+)?impossible\b"
    r"|\binsufficient\s+(?:to|for)\s+(?:determine|answer|tell|say|know|calculate|compute|establish)"
    r"|\b(?:don'?t|do\s+not|doesn'?t|does\s+not|lacks?|lacking)\s+(?:have\s+|contain\s+|provide\s+|give\s+)?"
    r"(?:enough|sufficient|the\s+(?:necessary|required|needed))\s+(?:information|data|details?|context)\b"
    r"|\b(?:can\s*not|can'?t|could\s+not)\s+be\s+(?:done|performed|accomplished|completed|made|provided"
    r"|given|found|obtained|solved|derived|read)\b"
    r"|\bnot\s+(?:enough|sufficient)\s+(?:info|information|data|details?)\b"
    r"|\b(?:need|needs|require|requires)\s+more\s+(?:information|data|details?|context)\b"
    r"|\b(?:haven'?t|have\s+not|hasn'?t|has\s+not)\s+(?:been\s+)?(?:provided|given|shared|uploaded)\b"
    r"|\bplease\s+(?:provide|upload|share)\s+(?:the|more|additional)\s+(?:data|information|details?|figure|image)"
    r"|\bnot\s+possible\s+to\s+(?:provide|give|calculate|compute|count|know|answer)\b"
    r"|\b(?:can\s*not|can'?t|unable\s+to)\s+provide\s+you\s+with\b"
    r"|\b(?:does|do|did)\s*(?:not|n't)\s+(?:provide|give|contain|include|show|offer)\s+(?:any\s+)?"
    r"(?:information|data|details?)\s+(?:on|about|regarding|for|to)\b"
    r"|\b(?:can\s*not|can'?t|unable\s+to|could\s+not|couldn'?t)\s+(?:provide|give|offer|find|reach)\s+"
    r"(?:an?\s+|the\s+|any\s+)?(?:definitive\s+|final\s+|numerical\s+|exact\s+|precise\s+|specific\s+)?"
    r"(?:answer|value|number|solution|result)\b"
    r"|无法(?:确定|判断|回答|计算|得知|完成|满足)|不能(?:确定|判断|完成)|信息不足|無法(?:確定|判斷|完成)|資訊不足"
    r"|(?:判断|判定|特定|決定|確定)(?:でき|出来)ません|わかりません|分かりません"
    r"|알\s*수\s*없|판단할\s*수\s*없|결정할\s*수\s*없"
    r"|\bimpossible\s+(?:de|à|a)\s+(?:déterminer|dire|savoir|répondre|réaliser|satisfaire)"
    r"|\bne\s+peut\s+pas\s+être\s+(?:déterminée?|réalisée?)|\bpas\s+possible"
    r"|\bnicht\s+(?:bestimmbar|feststellbar|zu\s+bestimmen|bestimmen|möglich|feststellen|erfüllbar)"
    r"|\bkann\s+nicht\s+bestimmt\s+werden"
    r"|\bno\s+(?:se\s+)?(?:puede|es\s+posible)\s+determinar|\bnão\s+(?:é\s+possível|se\s+pode)\s+determinar"
    r"|\bnon\s+(?:è\s+possibile|si\s+può)\s+(?:determinare|stabilire)|невозможно\s+(?:определить|сказать)"
    r"|\bno\s+(?:es\s+posible|se\s+puede)\s+(?:saber|decir|realizar|cumplir)"
    r"|нельзя\s+определить|недостаточно\s+(?:информации|данных)"
)

# A reply cut off mid-thought: it ends on a word no sentence ends with, or announces more work.
UNFINISHED_END = re.compile(
    r"(?:\b(?i:the|an|to|of|and|or|but|that|which|with|for|in|on|at|from|by|into|is|are|was|were|be"
    r"|if|because|whether|than|then|its|their|this|these|those|my|our|we|let|need|check|verify"
    r"|compute|calculate|determine|measure|compare)"
    r"|\b(?:a|i)"  # lower case only: a closing "A" or "I" may be an option letter
    r"|[,:;\-–—(=+*/\\^_{$])\s*$"
    r"|(?i:\b(?:still\s+need\s+to|let\s+me|i\s+(?:need|have)\s+to|next,?\s+i\s+will|now\s+i\s+(?:need|will))"
    r"\b[^.!?\n]*$)",
)

# Directions in the languages of the answer markers, as English words. Words that are also
# common words ("est" is French for "is", "este" Spanish for "this", "sur" French for "on")
# count only where a direction's grammar frames them ("à l'est", "al este", "nord-est").
_COMPASS_WORDS = (
    (
        r"东北|東北|北东|북동|северо[\-\s]?восток\w*|nord[\-\s]?(?:est|ost\w*)|nor[\-\s]?d?este",
        "north-east",
    ),
    (
        r"西北|北西|북서|северо[\-\s]?запад\w*|nord[\-\s]?(?:ouest|ovest|west\w*)|nor[\-\s]?oeste",
        "north-west",
    ),
    (
        r"东南|東南|南东|남동|юго[\-\s]?восток\w*|s[uü]d[\-\s]?(?:est|ost\w*)|su[rd][\-\s]?d?este",
        "south-east",
    ),
    (
        r"西南|南西|남서|юго[\-\s]?запад\w*|s[uü]d[\-\s]?(?:ouest|ovest|west\w*)|su[rd][\-\s]?oeste",
        "south-west",
    ),
    (r"北|북|север\w*|\bnord(?:en)?\b|\bnorte\b", "north"),
    (r"南|남|(?<![а-яё])юг\w*|\bs[uü]d(?:en)?\b|\bsul\b|\b(?:al|el|del|hacia\s+el)\s+sur\b", "south"),
    (r"东|東|동|восток\w*|\bost(?:en)?\b|\bleste\b|\b(?:l'|a\s+|al\s+|el\s+|del\s+)est[e]?\b", "east"),
    (r"西|서|запад\w*|\bwesten\b|\bouest\b|\boeste\b|\bovest\b", "west"),
)
_SIDE_WORDS = (
    (r"左|왼쪽|слева|налево|\b(?:à\s+)?gauche\b|\blinks\b|\bizquierda\b|\besquerda\b|\bsinistra\b", "left"),
    (r"右|오른쪽|справа|направо|\b(?:à\s+)?droite\b|\brechts\b|\bderecha\b|\bdireita\b|\bdestra\b", "right"),
    (r"前方|前面|앞|впереди|\bdevant\b|\bvorne?\b|\bdelante\b|\b(?:em\s+)?frente\b|\bdavanti\b", "ahead"),
    (
        r"后方|後方|后面|後ろ|뒤|сзади|позади|\bderrière\b|\bhinten\b|\bdetrás\b|\batrás\b|\bdietro\b",
        "behind",
    ),
)
_COMPASS_RX = tuple((re.compile(rx, re.I), en) for rx, en in _COMPASS_WORDS)
_SIDE_RX = tuple((re.compile(rx, re.I), en) for rx, en in _SIDE_WORDS)
# a cheap test first: most replies are English, with no word these tables translate
_FOREIGN = re.compile(
    r"[^\x00-\x7f]|\b(?:nord|sud|s[uü]d|ost|west|ouest|oeste|ovest|norte|sul|leste|est|este|sur|gauche|droite"
    r"|links|rechts|devant|derri|vorne?|hinten|izquierda|derecha|delante|detr|esquerda|direita|frente|atr"
    r"|sinistra|destra|davanti|dietro)\w*",
    re.I,
)


def english_directions(text: str, *, sides: bool = False) -> str:
    """``text`` with compass directions (``sides``: left, right, ahead, behind) of the answer
    markers' languages written as English words.

    >>> english_directions("F1 liegt im Südwesten von F0.")
    'F1 liegt im  south-west  von F0.'
    >>> english_directions("F1 se trouve au nord-est de F0.")
    'F1 se trouve au  north-east  de F0.'
    """
    if not _FOREIGN.search(text):
        return text
    for rx, en in _SIDE_RX if sides else _COMPASS_RX:
        text = rx.sub(f" {en} ", text)
    return text


_WORD = re.compile(r"[^\W\d_]{3,}")
# words that say nothing of what a question asks about: grammar, comparison, the prompt's own
_NOT_CONTENT = frozenset(
    "the and are there than that this what which does with from have has its their is was were any all "
    "for not more less fewer how many much answer question please integer value provide end hint".split()
)


def content_words(text: str) -> set[str]:
    """The words of ``text`` that name what it is about (lower case; grammar words left out), by
    which a sentence is matched to the question it restates.

    >>> sorted(content_words("Is the function injective?"))
    ['function', 'injective']
    """
    return {w.lower() for w in _WORD.findall(text or "")} - _NOT_CONTENT


# Script: fullwidth forms become ASCII; a letter or digit glued to CJK text is split from it.
_FULLWIDTH = {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)}
_CJK = r"\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff"
_GLUED = re.compile(rf"(?<=[{_CJK}])(?=[A-Za-z0-9])|(?<=[A-Za-z0-9°²])(?=[{_CJK}])")


def normalise_script(text: str) -> str:
    """``text`` with fullwidth letters, digits and punctuation as ASCII, and Latin letters or
    digits glued to Chinese, Japanese or Korean text split from it by a space."""
    text = text.translate(_FULLWIDTH).replace("\u3000", " ")
    if not any("\u3040" <= ch <= "\ufaff" for ch in text):
        return text
    return _GLUED.sub(" ", text)
