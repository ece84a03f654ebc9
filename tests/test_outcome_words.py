"""What a message says of the work, in every language the word tables know (issue 27).

``read_message`` reads an agent's last message: done, failed, partly done (work left, or a failure
beside a success), or waiting on the user; ``user_reaction`` reads the user's last prompts. The cases are
ordinary sentences a session could end with, per language, and the negated forms ("no errors")."""

from __future__ import annotations

import pytest

from sophia import outcome_words as words
from sophia.hooks import outcome as oc

D, F, P, M, W = oc.DONE, oc.FAILED, oc.PARTLY, oc.MIXED, oc.WAITING

CASES = [
    # English
    ("en", "All done: the parser is implemented and the tests pass.", D),
    ("en", "I couldn't get the build to work; the linker keeps failing.", F),
    ("en", "Implemented the API; the UI part is still to do.", P),
    ("en", "Ready to pick back up on the deploy whenever you have the client ID.", W),
    ("en", "I've set up the repo. Once you have the token, I'll finish the release.", W),
    ("en", "Let me know when the database is up and I'll run the migration.", W),
    ("en", "Build finished with no errors.", D),
    ("en", "No errors.", D),
    ("en", "The fix is not done yet.", F),
    # Chinese, simplified and traditional
    ("zh", "完成。", D),
    ("zh", "已统一配置，更新了两个 skill。", D),
    ("zh", "构建失败，无法链接。", F),
    ("zh", "部分完成，还剩两个文件没改。", P),
    ("zh", "等你拿到 client ID 之后我再继续。", W),
    ("zh", "没有错误。", D),
    ("zh", "问题还未解决。", F),
    ("zh-tw", "已統一設定，更新了兩個 skill。", D),
    ("zh-tw", "建置失敗，無法連結。", F),
    ("zh-tw", "還沒完成，剩餘兩個檔案。", P),
    ("zh-tw", "請先執行安裝，完成後告訴我。", W),
    # Japanese
    ("ja", "実装が完了しました。", D),
    ("ja", "ビルドに失敗しました。", F),
    ("ja", "一部のテストは完了しましたが、残りはまだです。", P),
    ("ja", "準備ができたら教えてください。", W),
    ("ja", "エラーなし。", D),
    # Korean
    ("ko", "완료되었습니다!", D),
    ("ko", "빌드에 실패했습니다.", F),
    ("ko", "일부만 완료했습니다. 남은 작업이 있습니다.", P),
    ("ko", "설치가 끝나면 알려주세요.", W),
    ("ko", "오류 없이 빌드되었습니다.", D),
    # Spanish
    ("es", "Listo, el README está actualizado.", D),
    ("es", "La compilación falló y no pude arreglarla.", F),
    ("es", "Completado parcialmente; quedan dos pruebas pendientes.", P),
    ("es", "Avísame cuando tengas la clave y continúo.", W),
    ("es", "Compila sin errores.", D),
    # French
    ("fr", "C'est fait : la configuration est mise à jour.", D),
    ("fr", "La compilation a échoué.", F),
    ("fr", "Partiellement terminé, il reste à migrer la base.", P),
    ("fr", "Dites-moi quand vous aurez la clé.", W),
    ("fr", "Aucune erreur.", D),
    # German
    ("de", "Erledigt: alle Tests sind bestanden.", D),
    ("de", "Der Build ist fehlgeschlagen.", F),
    ("de", "Teilweise erledigt, die Migration ist noch offen.", P),
    ("de", "Gib mir Bescheid, wenn du den Schlüssel hast.", W),
    ("de", "Keine Fehler gefunden.", D),
    # Portuguese
    ("pt", "Pronto, o README foi atualizado.", D),
    ("pt", "A compilação falhou.", F),
    ("pt", "Concluído parcialmente; faltam dois testes.", P),
    ("pt", "Me avise quando tiver a chave.", W),
    ("pt", "Sem erros.", D),
    # Russian
    ("ru", "Готово, тесты проходят.", D),
    ("ru", "Сборку собрать не удалось.", F),
    ("ru", "Частично выполнено, осталось обновить документацию.", P),
    ("ru", "Дайте знать, когда получите ключ.", W),
    ("ru", "Без ошибок.", D),
]


@pytest.mark.parametrize(("lang", "message", "expected"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_what_a_last_message_says(lang: str, message: str, expected: str) -> None:
    said, cue = oc.read_message(message)
    assert said == expected, f"{lang}: {message!r} read as {said} ({cue!r})"
    assert cue, "the words that decided are given"


@pytest.mark.parametrize("message", [
    "Here is how the resolver picks a version: it walks the lock file first.",  # an explanation
    "これは設定ファイルの説明です。",
    "这是配置文件的说明。",
    "",
])
def test_a_message_that_says_nothing_of_the_work(message: str) -> None:
    assert oc.read_message(message)[0] is None


@pytest.mark.parametrize(("message", "expected"), [
    # a courtesy after the work is no wait: "let me know if", "있으면 말씀해주세요", "如有需要"
    ("Done. Let me know if you want any changes.", D),
    ("완료되었습니다! 편집하고 싶은 부분이 있으면 말씀해주세요!", D),
    ("已完成。如有需要请告诉我。", D),
    ("Fixed the import. Want me to also update the docs?", D),
    # a plan that asks the user to decide before the work goes on waits on them
    ("Here is the plan: split the folder into three parts. Shall I proceed?", W),
    ("拆分方案如下：按类型分到三个目录。确认？", W),
    ("Which option do you prefer?\n\n1. Keep it\n2. Drop it", W),
    # a failure told and cured is a success; one after the success, or still there, is not
    ("The build failed because of a missing import; fixed it and it works now.", D),
    ("原因：格式缺少一层嵌套，解析时报错。已修复。", D),
    ("Fixed the parser, but the integration tests still fail.", M),
    ("Fixed the failing test.", D),
    # advice in a condition is no verdict; code is not read
    ("Implemented the parser. If it fails on Windows, try the slash fix.", D),
    ("Done.\n```\nError: this is sample output, it failed\n```", D),
    # a negated success is a failure
    ("The flaky test is still not fixed.", F),
    ("The build does not work: the linker fails.", F),
    ("No funciona todavía.", F),
])
def test_courtesy_questions_stories_and_negations(message: str, expected: str) -> None:
    said, cue = oc.read_message(message)
    assert said == expected, f"{message!r} read as {said} ({cue!r})"


@pytest.mark.parametrize(("prompts", "expected"), [
    (["thanks, great work"], "praise"),
    (["太好了，谢谢"], "praise"),
    (["ありがとう、完璧です"], "praise"),
    (["gracias, perfecto"], "praise"),
    (["it still fails, same error"], "complaint"),
    (["还是不行，没看到变化"], "complaint"),
    (["動かないです"], "complaint"),
    (["no funciona"], "complaint"),
    (["ça ne marche pas"], "complaint"),
    (["Traceback (most recent call last):\n  File \"a.py\", line 1\nValueError: bad"], "complaint"),  # pasted output
    (["great, thanks", "now it is broken again, it failed"], "complaint"),  # the later one wins
    (["it failed", "works now, thanks!"], "praise"),
    (["add a --json flag to the list command"], None),
])
def test_the_users_reaction(prompts: list[str], expected: str | None) -> None:
    assert oc.user_reaction(prompts) == expected


def test_every_entry_is_lower_case_and_spells_out() -> None:
    """Entries are matched against lower-cased text and spell out to literal strings (the tables are data:
    a typo must fail here, not in a hook)."""
    import re

    for name in ("DONE", "FAILED", "NO_FAILURE", "RESOLVED", "FIXED", "PARTIAL", "WAITING", "ASK", "HEDGE",
                 "CONDITIONAL", "PRAISE", "COMPLAINT"):
        table = getattr(words, name)
        for lang, entries in table.items():
            for e in entries:
                plain = re.sub(r"\\.", "", e)
                assert plain == plain.lower(), f"{name}/{lang}: {e!r} is not lower case"
        ready = words.Words(table)  # raises on an entry that does not spell out
        assert ready.literals or ready.gaps, name


def test_every_language_has_words_for_done_failed_partial_and_waiting() -> None:
    langs = {"en", "zh", "ja", "ko", "es", "fr", "de", "pt", "ru"}
    for name in ("DONE", "FAILED", "PARTIAL", "WAITING", "NO_FAILURE", "PRAISE", "COMPLAINT"):
        assert langs <= set(getattr(words, name)), name


@pytest.mark.parametrize(("entry", "spelled"), [
    ("complete[ds]?", ["completed", "completes", "complete"]),
    ("did(?:n'?t| not) work", ["didn't work", "didnt work", "did not work"]),
    ("(?:now )?working now", ["now working now", "working now"]),
    ("✔️?", ["✔️", "✔"]),
    ("proceed ?\\?", ["proceed ?", "proceed?"]),
])
def test_entries_spell_out_to_literals(entry: str, spelled: list[str]) -> None:
    assert words.spell_out(entry) == spelled


@pytest.mark.parametrize("entry", ["no\\s+errors", "error.*", "[^a]x", "(?=x)", "(unclosed"])
def test_an_entry_that_does_not_spell_out_is_an_error(entry: str) -> None:
    with pytest.raises(ValueError):
        words.spell_out(entry)


def test_a_gap_entry_allows_a_few_words_within_one_sentence() -> None:
    clean = words.Words(words.NO_FAILURE)
    assert [h[2] for h in clean.find("no type errors found")] == ["no type errors"]
    assert [h[2] for h in clean.find("没有发现任何错误")] == ["没有发现任何错误"]
    assert not clean.find("no. errors here"), "a sentence ends between"
    assert not clean.find("no one expected these seven errors"), "too many words between"


def test_words_match_whole_words_in_spaced_scripts_and_anywhere_in_cjk() -> None:
    done = words.Words(words.DONE)
    assert not done.find("the task was abandoned")  # "done" inside a word
    assert [h[2] for h in done.find("all done.")] == ["done"]
    assert [h[2] for h in done.find("两份文档已更新完成")] == ["已更新", "完成"]
    assert [h[2] for h in done.find("successfully built")] == ["success"]  # a stem runs on
