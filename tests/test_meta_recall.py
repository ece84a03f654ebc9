"""What `s3 apply` writes is visible in `s3 recall` (the SQLite index over the applied memories)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from conftest import run_s3
from metahelp import items


def _day(d: datetime) -> str:
    return d.strftime("%Y-%m-%d")


def test_foresight_validity_window_in_recall(s3_env: dict[str, str], sophia_home: Path) -> None:
    now = datetime.now(UTC)
    recorded = now - timedelta(days=60)
    expired_from, expired_to = now - timedelta(days=50), now - timedelta(days=40)
    ext = {"observed_at": recorded.strftime("%Y-%m-%dT%H:%M:%SZ"), "foresight": [
        {"description": "User is training for the marathon", "evidence": "said so",
         "start_time": _day(recorded), "end_time": _day(now + timedelta(days=30)), "confidence": 0.8},
        {"description": "User is recovering from the flu marathon", "evidence": "sneezing",
         "start_time": _day(expired_from), "end_time": _day(expired_to), "confidence": 0.6}]}
    run_s3(["init"], s3_env)
    r = run_s3(["apply", "extraction", "-"], s3_env, input=json.dumps(ext))
    assert r.returncode == 0, r.stderr
    ids = {i["text"]: i["id"] for i in items(sophia_home, "foresight")}
    valid, expired = ids["User is training for the marathon"], ids["User is recovering from the flu marathon"]

    def recall(*extra: str) -> list[str]:
        out = run_s3(["recall", "marathon", "--json", *extra], s3_env)
        assert out.returncode == 0, out.stderr
        return [x["id"] for x in json.loads(out.stdout)["results"]]

    now_ids = recall()
    assert valid in now_ids and expired not in now_ids
    past_ids = recall("--as-of", _day(expired_from + timedelta(days=3)))
    assert expired in past_ids


def test_learn_reflect_and_forget_show_in_recall(s3_env: dict[str, str]) -> None:
    run_s3(["init"], s3_env)
    rid = json.loads(run_s3(["learn", "Always pin Docker base images to a digest", "--json"], s3_env).stdout)["rule"]["id"]
    run_s3(["apply", "extraction", "-"], s3_env, input=json.dumps(
        {"procedures": [{"name": "Release", "steps": ["Run zebrafish tests", "Tag", "Push"]}]}))
    hits = json.loads(run_s3(["recall", "docker digest", "--json"], s3_env).stdout)["results"]
    assert rid in [h["id"] for h in hits]
    hits = json.loads(run_s3(["recall", "zebrafish", "--json"], s3_env).stdout)["results"]
    assert hits and hits[0]["type"] == "procedure"
    assert run_s3(["forget", rid], s3_env).returncode == 0
    hits = json.loads(run_s3(["recall", "docker digest", "--json"], s3_env).stdout)["results"]
    assert rid not in [h["id"] for h in hits]
