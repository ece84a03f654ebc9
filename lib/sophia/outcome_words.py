"""The words a language uses to say work is done, failed, partly done or waiting on the user, and the
words a user uses to praise or complain. Data, standard library only; ``Words`` makes a table ready to
search. ``sophia.hooks.outcome`` reads an agent's last message and the user's last prompts with them.

Each table maps a language to short, general entries: the words that language uses for the thing, never a
phrase taken from one session. An entry is lower case, matched against lower-cased text, and written in
a small part of regular-expression syntax that spells out to a few literal strings: classes of letters
and ``?`` (``complete[ds]?``), groups of alternatives (``(?:no|zero) errors``). A trailing ``*`` stands
for any word ending (``success*``: successful, successfully); `` ~N `` for a gap of at most N words, or N
characters in scripts written without spaces, within one sentence (``(?:no|zero) ~2 errors``: "no type
errors"). Entries of scripts written with spaces match whole words only; Chinese, Japanese and Korean
entries match anywhere (their words carry no spaces, or carry particles). Languages: English, Chinese
(simplified and traditional), Japanese, Korean, Spanish, French, German, Portuguese, Russian.
"""

from __future__ import annotations

import re

Table = dict[str, tuple[str, ...]]

# the work is done (a claim about the work, not a mention of a done thing)
DONE: Table = {
    "marks": ("✅", "✔️?"),
    "en": ("done", "complete[ds]?", "completed", "success*", "succeeded", "fixed", "resolved",
           "(?:it|everything|all|this|that|now) works", "works (?:now|correctly|as expected|fine|again)",
           "working (?:correctly|as expected|again|now)", "(?:it|everything|all)(?: is|'s) working",
           "(?:tests?|specs?|checks?|builds?|lint|ci|all|everything) ~2 (?:pass(?:es|ed|ing)?|green)",
           "pass(?:es|ed|ing)? (?:now|successfully|cleanly)", "created", "changed", "modified", "wrote", "written", "implemented", "updated", "added", "finished",
           "ready", "all set", "good to go", "removed", "deleted", "installed", "configured", "deployed", "merged",
           "committed", "pushed", "cleaned up", "migrated", "verified"),
    "zh": ("完成", "完毕", "完畢", "搞定", "成功", "已修复", "已修復", "修复了", "修復了", "已解决", "已解決",
           "已更新", "更新了", "已添加", "已新增", "已创建", "已創建", "已建立", "已删除", "已刪除", "已统一",
           "已統一", "已实现", "已實現", "已配置", "已安装", "已安裝", "已部署", "已提交", "已同步", "已写入",
           "已寫入", "已改为", "已改為", "已修改", "已调整", "已調整", "已替换", "已替換", "已移除",
           "(?:改|修|弄|做|配|装|裝|写|寫|建|设|設)好了", "已通过", "已通過", "测试通过", "測試通過", "正常工作", "没问题了", "沒問題了"),
    "ja": ("完了", "完成", "成功", "修正しました", "更新しました", "追加しました", "作成しました", "削除しました",
           "解決しました", "実装しました", "できました", "終わりました", "終了しました", "対応しました",
           "設定しました", "変更しました", "適用しました", "通りました", "通過", "パスしました", "正常に動作", "動きました", "行いました"),
    "ko": ("완료", "완성", "성공", "수정했", "수정되었", "업데이트했", "업데이트되었", "추가했", "추가되었",
           "생성했", "생성되었", "만들었", "삭제했", "해결했", "해결되었", "구현했", "끝났", "통과", "정상 작동",
           "설정했", "변경했", "변경되었", "적용했", "적용되었", "마쳤"),
    "es": ("listo", "complet[ao]d[ao]", "terminad[ao]", "finalizad[ao]", "éxito", "exitos[ao]",
           "exitosamente", "(?:ya|todo|ahora) funciona", "funciona correctamente", "actualizad[ao]", "cread[ao]", "añadid[ao]", "agregad[ao]",
           "implementad[ao]", "corregid[ao]", "arreglad[ao]", "resuelt[ao]", "eliminad[ao]", "instalad[ao]",
           "configurad[ao]", "modificad[ao]", "cambiad[ao]", "pasan", "terminé", "completé", "corregí",
           "arreglé", "actualicé", "implementé", "añadí", "agregué", "creé", "eliminé"),
    "fr": ("terminée?s?", "fini", "finie", "réussi", "réussie", "succès", "corrigée?s?", "résolue?s?",
           "tout fonctionne", "fonctionne (?:maintenant|correctement|bien)", "mise? à jour", "créée?s?", "ajoutée?s?", "implémentée?s?", "supprimée?s?",
           "installée?s?", "configurée?s?", "modifiée?s?", "c'est fait", "prête?", "passent"),
    "de": ("erledigt", "fertig", "abgeschlossen", "erfolgreich", "behoben", "gelöst", "alles funktioniert",
           "funktioniert (?:jetzt|wieder|einwandfrei|korrekt)",
           "aktualisiert", "erstellt", "hinzugefügt", "implementiert", "entfernt", "gelöscht", "installiert",
           "eingerichtet", "geändert", "angepasst", "bestanden", "durchgelaufen", "grün"),
    "pt": ("pronto", "pronta", "feito", "concluíd[ao]", "finalizad[ao]", "sucesso", "corrigid[ao]",
           "resolvid[ao]", "(?:já|tudo|agora) funciona", "funciona corretamente", "atualizad[ao]", "criad[ao]", "adicionad[ao]", "implementad[ao]",
           "removid[ao]", "instalad[ao]", "configurad[ao]", "alterad[ao]", "passam", "atualizei", "corrigi",
           "adicionei", "criei", "implementei", "removi", "terminei", "concluí"),
    "ru": ("готово", "выполнено", "сделано", "заверш[её]н[оа]?", "успешно", "исправлено", "исправил",
           "обновлено", "обновил", "добавлено", "добавил", "создано", "создал", "реализовано", "вс[её] работает",
           "теперь работает", "работает корректно",
           "удалено", "установлено", "настроено", "изменено", "изменил", "проходят", "пройдены"),
}

# the work failed, or could not be done (verbs and states; a bare mention of "error" is no verdict)
FAILED: Table = {
    "en": ("fail(?:ed|s|ing)?", "unable", "couldn'?t", "could not", "can(?:no|')?t", "not able",
           "wasn'?t able", "did(?:n'?t| not) work", "does(?:n'?t| not) work", "not work(?:ing)?", "broken",
           "gave up", "give up", "unsuccessful", "crash(?:ed|es)?", "still (?:errors?|broken|red)",
           "errors? (?:persists?|remains?)", "(?:not|n't|never) (?:been |yet )?(?:fixed|resolved|done|finished|completed)"),
    "zh": ("失败", "失敗", "无法", "無法", "未能", "没能", "沒能", "不成功", "出错", "出錯", "报错", "報錯",
           "不起作用", "不能用", "不工作", "没有生效", "沒有生效", "未生效",
           "(?:未|没|沒|没有|沒有)(?:修复|修復|解决|解決|成功)"),
    "ja": ("失敗", "できませんでした", "できません", "エラーが発生", "エラーが出", "動きません", "動作しません",
           "うまくいきません", "うまくいかな", "(?:完了|解決|修正)(?:して|でき)(?:いません|ていない|ませんでした)"),
    "ko": ("실패", "할 수 없", "하지 못했", "못했습니다", "오류가 발생", "에러가 발생", "작동하지 않", "동작하지 않",
           "안 됩니다", "안됩니다", "(?:완료|해결|수정)되지 않"),
    "es": ("falló", "fallan?", "fallid[ao]", "fallando", "no se pudo", "no pude", "no puedo", "no funciona",
           "sigue sin funcionar", "imposible", "sin resolver"),
    "fr": ("échoué", "échec", "échoue(?:nt)?", "impossible", "n'a pas fonctionné", "ne fonctionne pas",
           "ne marche pas", "je n'ai pas pu", "n'ai pas réussi", "pas (?:été )?(?:résolue?|corrigée?)"),
    "de": ("fehlgeschlagen", "schlägt fehl", "schlug fehl", "gescheitert", "scheitert", "konnte nicht",
           "kann nicht", "funktioniert nicht", "funktioniert noch nicht", "nicht möglich", "nicht (?:behoben|gelöst)"),
    "pt": ("falhou", "falham?", "não foi possível", "não consegui", "não funciona", "não funcionou", "não (?:foi )?(?:resolvid[ao]|corrigid[ao])"),
    "ru": ("не удалось", "не получилось", "не работает", "сбой", "провал", "не могу", "невозможно", "упал", "не (?:исправлено|решено)"),
}

# a failure word said of nothing ("no errors", "没有错误", "エラーなし"): a clean result
NO_FAILURE: Table = {
    "en": ("(?:no|zero|0|without|never|none of the|not any) ~2 "
           "(?:errors?|failures?|fail(?:ed|s|ing)?|issues?|problems?|warnings?)",
           "nothing (?:failed|broke)", "(?:errors?|failures?|failed) ?[:=] ?0"),
    "zh": ("(?:没有|沒有|无|無|零|不会再|不會再|不再) ~4 (?:错误|錯誤|报错|報錯|失败|失敗|问题|問題|警告)",),
    "ja": ("(?:エラー|失敗|問題|警告) ~1 (?:なし|無し|ありません|ない|出ていません|出ません)",),
    "ko": ("(?:오류|에러|실패|문제|경고) ~2 없",),
    "es": ("(?:sin|ningún|ninguna|no hay|0|cero) ~1 (?:errores|error|fallos?|problemas?)",),
    "fr": ("(?:aucune?|sans|pas d'|0|zéro) ~1 (?:erreurs?|échecs?|problèmes?)",),
    "de": ("(?:keine?|ohne|0|null) ~1 (?:fehler|probleme?|warnungen)",),
    "pt": ("(?:sem|nenhum|nenhuma|não há|0|zero) ~1 (?:erros?|falhas?|problemas?)",),
    "ru": ("(?:без|нет|ни одной|0) ~1 (?:ошибок|ошибки|сбоев|проблем)", "ошибок нет"),
}

# a failure word said of what the work cured ("fixed the failing test"): no failure (nor, alone, a success)
RESOLVED: Table = {
    "en": ("(?:fix(?:ed|es|ing)?|resolv(?:e|es|ed|ing)|handl(?:e|es|ed|ing)|solv(?:e|es|ed|ing)|"
           "address(?:es|ed|ing)?|clean(?:s|ed|ing)? up) ~3 (?:errors?|failures?|failing|bugs?|issues?|problems?|"
           "crash(?:es|ed|ing)?)",),
    "zh": ("(?:修复|修復|解决|解決) ~8 (?:失败|失敗|报错|報錯|问题|問題|错误|錯誤)",),
}

# a failure told and then cured: these words after the failure make the story one of success
FIXED: Table = {
    "en": ("fixed", "resolved", "works now", "now works", "(?:now )?working now", "now working", "pass(?:es)? now",
           "now pass(?:es)?", "succeeded"),
    "zh": ("已修复", "已修復", "修复了", "修復了", "修好了", "已解决", "已解決", "解决了", "解決了", "正常工作",
           "没问题了", "沒問題了"),
    "ja": ("修正しました", "解決しました", "直りました", "動くようになりました", "動作するようになりました"),
    "ko": ("수정했", "수정되었", "해결했", "해결되었", "고쳤"),
    "es": ("corregid[ao]", "arreglad[ao]", "resuelt[ao]", "ya funciona", "ahora funciona"),
    "fr": ("corrigée?s?", "résolue?s?", "fonctionne maintenant", "marche maintenant"),
    "de": ("behoben", "gelöst", "funktioniert jetzt", "klappt jetzt"),
    "pt": ("corrigid[ao]", "resolvid[ao]", "agora funciona", "já funciona"),
    "ru": ("исправлено", "исправил", "исправлена", "решено", "теперь работает"),
}

# some of the work is left
PARTIAL: Table = {
    "en": ("partial(?:ly)?", "some of", "most of", "remaining", "still (?:fail(?:s|ed|ing)?|needs?|needed|to do|missing)",
           "left to do", "not yet", "incomplete", "unfinished"),
    "zh": ("部分完成", "一部分", "仅完成", "僅完成", "只完成", "剩余", "剩餘", "剩下", "尚未", "还没", "還沒", "未完成", "待办", "待辦", "仍需", "还需", "還需"),
    "ja": ("一部", "残り", "未完了", "途中", "まだ"),
    "ko": ("일부", "남은", "아직", "미완료"),
    "es": ("parcial(?:mente)?", "pendientes?", "faltan?", "todavía no", "aún no", "quedan"),
    "fr": ("partiel(?:le)?(?:ment)?", "reste à", "restante?s?", "pas encore"),
    "de": ("teilweise", "noch nicht", "verbleibende?n?", "noch offen"),
    "pt": ("parcial(?:mente)?", "pendentes?", "ainda não", "faltam?", "restantes?"),
    "ru": ("частично", "осталось", "ещё не", "еще не", "пока не", "не до конца"),
}

# the work waits on the user: something only they can do or give, then the agent goes on
WAITING: Table = {
    "en": ("(?:once|when|after) you ~12 (?:i|we)(?:'ll| will| can)", "(?:once|when|after) you ~12 (?:let me know|tell me)",
           "whenever you", "(?:let me know|tell me|ping me) (?:when|once)", "come back and",
           "waiting (?:for|on) (?:you|your)", "i need you to", "needs? your", "requires? your",
           "ready to (?:continue|resume|proceed|pick)", "pick (?:this|it|things) back up",
           "(?:and|then) i(?:'ll| will| can) (?:finish|continue|proceed|resume|go on|pick)", "blocked on (?:you|your)",
           "i'm blocked", "blocked until", "awaiting your", "pending your", "(?:once|when) you approve",
           "(?:run|do|type|enter) (?:this|it|that|these) ~1 yourself"),
    "zh": ("等你", "等您", "待你", "待您", "你需要先", "您需要先", "请先", "請先", "之后我再", "之後我再",
           "然后我再", "然後我再", "完成后告诉我", "完成後告訴我", "好了告诉我", "好了告訴我", "告诉我一声",
           "告訴我一聲", "需要你", "需要您", "我再继续", "我再繼續", "再帮你", "再幫你"),
    "ja": ("お待ちしています", "お待ちしております", "準備ができたら", "終わったら", "完了したら", "ご自身で",
           "いただければ"),
    "ko": ("기다리겠습니다", "기다릴게요", "완료되면", "끝나면", "준비되면", "직접 실행", "주시면 계속", "주시면 진행"),
    "es": ("cuando tengas", "cuando hayas", "cuando estés", "avísame cuando", "dime cuando", "quedo a la espera",
           "necesito que", "continuaré cuando", "seguiré cuando"),
    "fr": ("quand vous aurez", "quand tu auras", "dites-moi quand", "dis-moi quand", "j'attends",
           "j'ai besoin que"),
    "de": ("wenn du fertig", "wenn sie fertig", "bescheid, (?:wenn|sobald)", "warte auf", "ich brauche (?:deine|ihre)"),
    "pt": ("quando você tiver", "me avise quando", "aguardo", "preciso que você"),
    "ru": ("дайте знать, когда", "сообщите, когда", "жду ваш*", "нужно, чтобы вы"),
}

# the agent asks the user to decide before it goes on (counted when the message ends asking)
ASK: Table = {
    "en": ("(?:shall|should) i", "(?:proceed|go ahead|continue) ?\\?", "confirm", "which (?:one|option|approach)",
           "(?:do|would) you prefer", "your (?:choice|call|decision)", "approve"),
    "zh": ("确认", "確認", "是否同意", "是否继续", "是否繼續", "要不要", "哪个方案", "哪個方案", "选择哪", "選擇哪",
           "可以吗", "可以嗎"),
    "ja": ("よろしいですか", "よろしいでしょうか", "進めてもよ", "どちらに", "どれに"),
    "ko": ("진행할까요", "진행해도 될까요", "괜찮을까요", "어떤 방식", "선택해 주세요", "확인해 주시"),
    "es": ("procedo", "continúo", "confirmas?", "prefieres", "prefiere"),
    "fr": ("je continue", "je procède", "confirmez", "préférez", "préfères"),
    "de": ("soll ich", "bevorzugst", "bevorzugen sie", "bestätig*"),
    "pt": ("posso prosseguir", "posso continuar", "devo continuar", "prefere", "confirma"),
    "ru": ("продолжить", "подтвердите", "какой вариант", "предпочитаете"),
}

# a claim that asks the user to check it ("should work now", "please try"): not a checked result
HEDGE: Table = {
    "en": ("should (?:now|work|be)", "to verify", "please (?:test|try|check|verify|confirm|restart|reload|run)",
           "try (?:it|again)", "if (?:you(?:'re| are)? )?still", "if (?:it|this|that|the) ~1 (?:still|doesn'?t|does not|fails)",
           "you(?:'ll| will)? need to", "you must"),
    "zh": ("应该", "應該", "请测试", "請測試", "请验证", "請驗證", "请确认", "請確認", "试试", "試試", "请重试", "請重試"),
    "ja": ("はずです", "確認してください", "試してください", "お試しください"),
    "ko": ("것입니다", "확인해 보세요", "해보세요", "테스트해 보세요"),
    "es": ("debería", "prueba", "pruébalo", "verifica", "comprueba"),
    "fr": ("devrait", "essayez", "vérifiez", "testez"),
    "de": ("sollte", "teste", "prüfe", "versuche", "probier*"),
    "pt": ("deveria", "deve funcionar", "teste", "verifique", "tente"),
    "ru": ("должно", "должен", "проверьте", "попробуйте"),
}

# opens a clause that is advice, not a verdict ("if it fails, try ..."): the clause runs to its punctuation
CONDITIONAL: Table = {
    "en": ("if", "in case", "should"),
    "zh": ("如果", "如若", "若", "如有", "万一", "萬一"),
    "ja": ("もし",),
    "ko": ("만약",),
    "es": ("si", "en caso de"),
    "fr": ("si", "au cas où"),
    "de": ("falls", "wenn"),
    "pt": ("caso", "se você", "se precisar", "se houver"),
    "ru": ("если",),
}

# the user is pleased with what was done
PRAISE: Table = {
    "en": ("great", "perfect", "thanks?", "thank you", "good (?:job|work)", "awesome", "nice", "works now",
           "it works", "lgtm", "excellent", "well done", "looks good", "successfully worked"),
    "zh": ("谢谢", "謝謝", "感谢", "感謝", "很好", "太好了", "完美", "可以了", "好用", "没问题了", "沒問題了",
           "成功了"),
    "ja": ("ありがとう", "完璧", "いいね", "素晴らしい", "動きました", "うまくいきました", "助かりました"),
    "ko": ("감사", "고마워", "고맙", "완벽", "좋아요", "좋네요", "잘 됩니다", "잘됩니다", "됐어요"),
    "es": ("gracias", "perfecto", "genial", "excelente", "ya funciona", "buen trabajo"),
    "fr": ("merci", "parfait", "génial", "excellent", "ça marche", "bon travail"),
    "de": ("danke", "perfekt", "super", "klasse", "funktioniert jetzt", "gute arbeit"),
    "pt": ("obrigad[oa]", "perfeito", "ótimo", "excelente", "funcionou", "bom trabalho"),
    "ru": ("спасибо", "отлично", "идеально", "супер", "получилось", "заработало"),
}

# the user says it does not work, or is not what they asked
COMPLAINT: Table = {
    "en": ("still (?:not|doesn'?t|does not|fails?|failing|broken|the same|happening|there)",
           "(?:failed|fails|broke) again", "(?:does ?n[o']t|did ?n[o']t|is ?n[o']t|not) work(?:ing)?", "wrong",
           "not what i", "that'?s not", "not that", "broke(?:n)? (?:it|the)", "you (?:forgot|missed|broke|didn'?t)",
           "why (?:is|are|did|does|do) ~1 not", "same (?:error|problem|issue)", "stuck", "in a loop",
           "worked up until", "fail(?:ed|s|ure)?", "errors?"),
    "zh": ("不行", "没用", "沒用", "不对", "不對", "错了", "錯了", "失败", "失敗", "报错", "報錯", "没看到", "沒看到",
           "没有变化", "沒有變化", "未更新", "没生效", "沒生效"),
    "ja": ("動かない", "動きません", "だめ", "ダメ", "違う", "違います", "失敗", "エラー", "直っていない", "直ってない"),
    "ko": ("안 돼", "안돼", "안 됩니다", "안됨", "실패", "오류", "에러", "틀렸", "아직도"),
    "es": ("no funciona", "sigue (?:sin|fallando|igual|dando)", "todavía no", "falla", "error", "incorrecto", "mal"),
    "fr": ("ne marche pas", "ne fonctionne pas", "toujours pas", "erreur", "échoue", "faux"),
    "de": ("funktioniert nicht", "geht nicht", "immer noch", "fehler", "falsch"),
    "pt": ("não funciona", "ainda não", "erro", "falha", "errado"),
    "ru": ("не работает", "всё ещё", "все еще", "ошибка", "неправильно", "не то"),
}

# scripts written without spaces between words (kana, CJK ideographs, Hangul): code point ranges (a regular
# expression class over them costs some 4 ms to compile, in every hook process)
_NO_SPACES = ((0x3040, 0x30FF), (0x3400, 0x9FFF), (0xF900, 0xFAFF), (0xAC00, 0xD7AF))


def _unspaced(c: str) -> bool:
    o = ord(c)
    return any(lo <= o <= hi for lo, hi in _NO_SPACES)


_ESCAPED = frozenset(".?*+()[]{}|\\^$'-")
_META = frozenset("\\()[]?*+{}|.^$")
MAX_VARIANTS = 64  # an entry spelling out to more literal strings than this is an error: split it

Hit = tuple[int, int, str]  # where a word starts and ends in the text, and the word


class _Parse:
    r"""Spell a simple regular expression out as the finite set of strings it matches: literal characters,
    escaped ones, classes of literal characters, ``?`` and groups of alternatives. Anything else (``\w``,
    ``\s``, repetitions, look-arounds) raises ValueError."""

    def __init__(self, text: str) -> None:
        self.text, self.at = text, 0

    def alternatives(self) -> list[str]:
        out = self.sequence()
        while self.at < len(self.text) and self.text[self.at] == "|":
            self.at += 1
            out += self.sequence()
        return out

    def sequence(self) -> list[str]:
        out = [""]
        while self.at < len(self.text) and self.text[self.at] not in "|)":
            atom = self.atom()
            if self.at < len(self.text) and self.text[self.at] == "?":
                self.at += 1
                atom = [*atom, ""]
            out = [a + b for a in out for b in atom]
            if len(out) > MAX_VARIANTS:
                raise ValueError("too many variants")
        return out

    def atom(self) -> list[str]:
        c = self.text[self.at]
        self.at += 1
        if c == "\\":
            nxt = self.text[self.at:self.at + 1]
            self.at += 1
            if nxt not in _ESCAPED:
                raise ValueError("a character class escape")
            return [nxt]
        if c == "(":
            if not self.text.startswith("?:", self.at):
                raise ValueError("not a plain group")
            self.at += 2
            inner = self.alternatives()
            if self.text[self.at:self.at + 1] != ")":
                raise ValueError("unclosed group")
            self.at += 1
            return inner
        if c == "[":
            end = self.text.index("]", self.at)
            chars = self.text[self.at:end]
            if not chars or any(ch in "^-\\" for ch in chars):
                raise ValueError("not a class of literal characters")
            self.at = end + 1
            return list(chars)
        if c in "*+{}.^$":
            raise ValueError("a repetition")
        start, end = self.at - 1, self.at
        while end < len(self.text) and self.text[end] not in _META:
            end += 1
        if end < len(self.text) and self.text[end] == "?" and end - start > 1:
            end -= 1  # the ``?`` makes only the last letter optional
        self.at = end
        return [self.text[start:end]]


def spell_out(entry: str) -> list[str]:
    """The literal strings an entry (or one side of a gap) matches; ValueError when it is not simple."""
    if _META.isdisjoint(entry):
        return [entry]
    parse = _Parse(entry)
    try:
        out = parse.alternatives()
    except IndexError:
        raise ValueError(f"cannot spell out {entry!r}") from None
    if parse.at != len(entry):
        raise ValueError(f"cannot spell out {entry!r}")
    return out


def _word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


_GAP = re.compile(r" ~(\d+) ")
_SENTENCE_END = frozenset(".!?\n。！？")


class Words:
    """One table, ready to search lower-case text: its entries spelled out to literal strings, looked up
    with ``str.find`` (compiling one large regular expression instead costs tens of milliseconds in every
    hook process). An entry ``A ~N B`` matches A, then B within N words (N characters in scripts written
    without spaces) of the same sentence."""

    __slots__ = ("literals", "gaps")

    def __init__(self, table: Table) -> None:
        literals: dict[tuple[str, bool], None] = {}  # (string, whether it may run on into a longer word)
        self.gaps: list[tuple[list[tuple[str, bool]], int, list[tuple[str, bool]]]] = []
        for values in table.values():
            for entry in values:
                gap = _GAP.search(entry) if "~" in entry else None
                if gap:
                    left, right = _spelled(entry[:gap.start()]), _spelled(entry[gap.end():])
                    self.gaps.append((left, int(gap.group(1)), right))
                else:
                    literals.update(dict.fromkeys(_spelled(entry)))
        self.literals = list(literals)

    def find(self, text: str) -> list[Hit]:
        """Every entry found in lower-case ``text``, as whole words (anywhere, for scripts written
        without spaces), in order."""
        chars = set(text)
        hits = _all(text, self.literals, chars)
        for left, most, right in self.gaps:
            ends = _all(text, right, chars)
            for start, end, _ in _all(text, left, chars) if ends else ():
                nxt = next(((a, b) for a, b, _ in ends if a >= end and _near(text, end, a, most)), None)
                if nxt:
                    hits.append((start, nxt[1], text[start:nxt[1]]))
        return sorted(hits)


def _spelled(entry: str) -> list[tuple[str, bool]]:
    stem = entry.endswith("*")
    return [(w, stem) for w in spell_out(entry[:-1] if stem else entry) if w]


def _all(text: str, words: list[tuple[str, bool]], chars: set[str]) -> list[Hit]:
    return [hit for word, stem in words if word[0] in chars for hit in _occurrences(text, word, stem)]


def _near(text: str, end: int, start: int, most: int) -> bool:
    """At most ``most`` words (characters, between unspaced scripts) between, and no sentence end."""
    between = text[end:start]
    if not _SENTENCE_END.isdisjoint(between):
        return False
    if _unspaced(text[end - 1]) or _unspaced(text[start]):
        return len(between.strip()) <= most
    return len(between.split()) <= most


def _occurrences(text: str, word: str, stem: bool) -> list[Hit]:
    out = []
    at = text.find(word)
    while at >= 0:
        end = at + len(word)
        if _bounded(text, at, end, stem):
            out.append((at, end, word))
        at = text.find(word, at + 1)
    return out


def _bounded(text: str, start: int, end: int, stem: bool) -> bool:
    """The match starts and ends a word: no word character runs on either side (scripts written
    without spaces need none; a stem may run on)."""
    first, last = text[start], text[end - 1]
    if not _unspaced(first) and _word_char(first) and start > 0 and _word_char(text[start - 1]):
        return False
    if stem or _unspaced(last) or not _word_char(last):
        return True
    return end >= len(text) or not _word_char(text[end])
