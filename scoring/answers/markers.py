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
    r"|\binsufficient\s+(?:to|for)\s+(?:determine|answer|tell|say|know|calculate|compute|establish)"
    r"|\b(?:don'?t|do\s+not|doesn'?t|does\s+not|lacks?|lacking)\s+(?:have\s+|contain\s+|provide\s+|give\s+)?"
    r"(?:enough|sufficient|the\s+(?:necessary|required|needed))\s+(?:information|data|details?|context)\b"
    r"|\b(?:can\s*not|can'?t|could\s+not)\s+be\s+(?:done|performed|accomplished|completed|made|provided"
    r"|given|found|obtained|solved|derived|read)\b"
    r"|\bnot\s+(?:enough|sufficient)\s+(?:info|information|data|details?)\b"
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
    r"(?:\b(?:the|a|an|to|of|and|or|but|that|which|with|for|in|on|at|from|by|into|is|are|was|were|be"
    r"|if|because|whether|than|then|its|their|this|these|those|my|our|i|we|let|need|check|verify"
    r"|compute|calculate|determine|measure|compare)"
    r"|[,:;\-–—(])\s*$"
    r"|\b(?:still\s+need\s+to|let\s+me|i\s+(?:need|have)\s+to|next,?\s+i\s+will|now\s+i\s+(?:need|will))"
    r"\b[^.!?\n]*$",
    re.I,
)

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
