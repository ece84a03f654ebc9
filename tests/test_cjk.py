"""Issue 15, every language: scripts without spaces are indexed and queried as character bigrams in the
keyword tier, so a prompt written entirely in Chinese, Japanese or Korean finds the memory written in it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, run_s3
from sophia.index import db, store
from sophia.index.search import search
from sophia.index.text import analyze

MEMORIES = {
    "fact_zh": "数据库迁移失败了，因为账单表的外键约束，最后回滚了。",
    "fact_ja": "データベースの移行が失敗したので、ロールバックしました。",
    "fact_ko": "데이터베이스 마이그레이션이 실패해서 롤백했습니다.",
    "fact_en": "The postgres migration failed on the billing tables and was rolled back.",
    "fact_zh2": "今天下午去公园散步，天气很好。",
}


@pytest.fixture(autouse=True)
def no_semantic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOPHIA_RECALL_SEMANTIC", "0")


def test_unspaced_scripts_become_bigrams_on_both_sides() -> None:
    assert analyze("数据库迁移") == ["数据", "据库", "库迁", "迁移"]
    assert analyze("猫") == ["猫"]  # a lone character stays a unigram
    assert analyze("移行が失敗") == ["移行", "行が", "が失", "失敗"]  # kana marks kept (が is not か)
    assert analyze("한국어") == ["한국", "국어"]  # Hangul syllables stay whole (not decomposed to jamo)
    assert analyze("postgres数据库 Café ＡＢＣ") == ["postgr", "数据", "据库", "cafe", "abc"]
    assert analyze("What did Caroline paint in the Café?") == ["carolin", "paint", "cafe"]  # unchanged


def test_a_prompt_entirely_in_chinese_or_japanese_finds_its_memory(sophia_home: Path) -> None:
    conn = db.connect(sophia_home)
    store.upsert_items(conn, [{"id": i, "type": "fact", "text": t} for i, t in MEMORIES.items()])
    zh = search(conn, "上次数据库迁移为什么失败？", limit=3)
    ja = search(conn, "データベース移行の失敗はどうなった？", limit=3)
    ko = search(conn, "마이그레이션 실패 원인", limit=3)
    conn.close()
    assert zh[0]["id"] == "fact_zh" and zh[0]["relevance"] >= 0.42
    assert ja[0]["id"] == "fact_ja" and ja[0]["relevance"] >= 0.42
    assert ko[0]["id"] == "fact_ko"
    assert "fact_zh2" not in [r["id"] for r in zh]


def test_old_index_is_reanalysed_by_the_migration(sophia_home: Path) -> None:
    conn = db.connect(sophia_home)
    store.upsert_items(conn, [{"id": i, "type": "fact", "text": t} for i, t in MEMORIES.items()])
    # as main indexed it: a whole unspaced run was one token
    conn.execute("UPDATE items SET terms = ?, dl = 1 WHERE id = 'fact_zh'", ("数据库迁移失败了 因为账单表的外键约束",))
    conn.execute("DELETE FROM _migrations WHERE name = 'm004_cjk_bigrams'")
    assert search(conn, "数据库迁移", limit=3) == [] or search(conn, "数据库迁移", limit=3)[0]["id"] != "fact_zh"
    conn.close()
    conn = db.connect(sophia_home)  # migrates
    assert search(conn, "数据库迁移", limit=3)[0]["id"] == "fact_zh"
    terms = conn.execute("SELECT terms FROM items WHERE id = 'fact_zh'").fetchone()[0]
    conn.close()
    assert terms == " ".join(analyze(MEMORIES["fact_zh"]))


def test_real_hook_injects_for_a_chinese_prompt(s3_env: dict[str, str], sophia_home: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    assert run_s3(["init"], s3_env).returncode == 0
    cfg_path = sophia_home / "config.json"
    cfg = json.loads(cfg_path.read_text())
    cfg["context"]["include_ingested"] = True
    cfg_path.write_text(json.dumps(cfg))
    conv = tmp_path / "chat.jsonl"
    conv.write_text("".join(json.dumps({"id": f"D1:{n}", "session": 1, "text": t, "timestamp": "2024-03-01T10:00:00Z"},
                                       ensure_ascii=False) + "\n" for n, t in enumerate(MEMORIES.values())))
    assert run_s3(["ingest", str(conv), "--source", "chat", "--project", str(project)], s3_env).returncode == 0

    def hook(prompt: str) -> str:
        payload = {"hook_event_name": "UserPromptSubmit", "session_id": "s-cjk", "cwd": str(project), "prompt": prompt}
        r = subprocess.run(["bash", str(ROOT / "hooks" / "prompt_context.sh")], input=json.dumps(payload),
                           env=s3_env, capture_output=True, text=True, timeout=60, check=False)
        assert r.returncode == 0 and not r.stderr, r.stderr
        return r.stdout

    out = hook("数据库迁移为什么失败")  # ten characters: main saw no search terms in it at all
    assert "账单表的外键约束" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert hook("明天的会议几点开始") == ""  # nothing stored is about it
