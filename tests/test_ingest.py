"""Conversation ingest (LoCoMo and JSONL), MemCells, redaction, idempotence, and the CLI."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from tests.conftest import run_s3

from shared_data import looked_in, shared_path
from sophia import paths
from sophia.index import db
from sophia.index.conversations import conversation_path, read_conversation
from sophia.index.search import search
from sophia.ingest.core import ingest_file
from sophia.ingest.formats import parse_locomo_time
from sophia.ingest.memcell import Boundaries, segment


@pytest.fixture(autouse=True)
def no_semantic(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keyword tier only: no test here starts an embedding service (fusion is tested with given hits)."""
    monkeypatch.setenv("SOPHIA_RECALL_SEMANTIC", "0")


# The LoCoMo dev split lives in the shared folder beside the repository (not vendored: it is benchmark data).
DEV = shared_path("data/locomo/locomo_dev.json")


def _locomo_sample() -> dict:  # type: ignore[type-arg]
    return {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ann", "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a puppy named Rex!"},
                {"speaker": "Bo", "dia_id": "D1:2", "text": "Wow, show me", "blip_caption": "a photo of a beagle"},
                {"speaker": "Ann", "dia_id": "D1:3", "text": "my key is AKIAABCDEFGHIJKLMNOP do not share"},
            ],
            "session_2_date_time": "10:02 am on 2 June, 2023",
            "session_2": [{"speaker": "Bo", "dia_id": "D2:1", "text": "How is the beagle doing?"}],
            "session_3_date_time": "9:00 am on 3 June, 2023",
        },
        "qa": [],
    }


def test_locomo_time() -> None:
    assert parse_locomo_time("1:56 pm on 8 May, 2023") == "2023-05-08T13:56:00Z"
    assert parse_locomo_time("12:09 am on 13 September, 2023") == "2023-09-13T00:09:00Z"
    assert parse_locomo_time("nonsense") is None


def test_ingest_locomo_keeps_redacted_turns_and_indexes_them(tmp_path: Path, sophia_home: Path) -> None:
    f = tmp_path / "one.json"
    f.write_text(json.dumps(_locomo_sample()))
    res = ingest_file(f, "locomo", home=sophia_home, nudge=False)
    assert res["turns"] == 4 and res["indexed"] == 4
    kept = conversation_path("conv-x", sophia_home)
    assert stat.S_IMODE(os.stat(kept).st_mode) == 0o600
    assert "AKIAABCDEFGHIJKLMNOP" not in kept.read_text()
    turns = read_conversation(kept)
    assert [t["source_ids"] for t in turns] == [["D1:1"], ["D1:2"], ["D1:3"], ["D2:1"]]
    assert turns[1]["text"] == "Bo: Wow, show me [shares a photo of a beagle]"
    assert turns[0]["event_time"] == "2023-05-08T13:56:00Z" and turns[3]["event_time"] == "2023-06-02T10:02:00Z"
    assert turns[0]["memcell_id"] == turns[2]["memcell_id"] != turns[3]["memcell_id"]  # session break
    conn = db.connect(sophia_home)
    assert "AKIAABCDEFGHIJKLMNOP" not in json.dumps(conn.execute("SELECT text FROM items").fetchall())
    assert [r["id"] for r in search(conn, "beagle photo")][:1] == ["turn:conv-x:D1:2"]
    # idempotent: nothing changes on a second ingest
    assert ingest_file(f, "locomo", home=sophia_home, nudge=False)["indexed"] == 0
    assert len(read_conversation(kept)) == 4


def test_ingest_jsonl_merges_by_id(tmp_path: Path, sophia_home: Path) -> None:
    f = tmp_path / "chat.jsonl"
    lines = [{"id": f"m{i}", "session": "s1", "speaker": "U", "text": f"note {i} about the garden",
              "timestamp": f"2024-01-01T10:{i:02d}:00Z"} for i in range(3)]
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    ingest_file(f, "jsonl", home=sophia_home, nudge=False)
    f.write_text(json.dumps({"id": "m1", "session": "s1", "speaker": "U", "text": "note 1 about roses",
                             "timestamp": "2024-01-01T10:01:00Z"}) + "\n" +
                 json.dumps({"id": "m9", "text": "a later note", "timestamp": "2024-01-02T10:00:00Z"}) + "\n")
    res = ingest_file(f, "jsonl", home=sophia_home, nudge=False)
    assert res["turns"] == 4
    conn = db.connect(sophia_home)
    assert search(conn, "roses")[0]["id"] == "turn:chat:m1"
    assert "garden" not in search(conn, "roses")[0]["text"]
    assert conn.execute("SELECT count(*) FROM items").fetchone()[0] == 4
    seqs = conn.execute("SELECT id, seq FROM items ORDER BY seq").fetchall()
    assert [s for _, s in seqs] == [0, 1, 2, 3]


def test_memcell_boundaries() -> None:
    t = [f"2024-01-01T10:{i:02d}:00Z" for i in range(60)]
    from sophia.timeutil import parse

    times = [parse(x) for x in t]
    words = [["garden", "rose"]] * 60
    cells = segment(["a"] * 60, times, words, Boundaries(cap=50))
    assert cells.count(0) == 50 and cells[50] == 1  # the cap
    gap = times[:10] + [parse("2024-01-01T20:00:00Z")] * 5
    assert segment(["a"] * 15, gap, words[:15])[10] == 1  # a long time gap
    topic = [["garden", "rose", "soil"]] * 10 + [["tax", "return", "deadline"]] * 10
    cells = segment(["a"] * 20, [None] * 20, topic, Boundaries(min_size=4))
    assert cells[9] == 0 and cells[10] == 1  # a topic shift


def test_cli_ingest_and_recall(tmp_path: Path, s3_env: dict[str, str]) -> None:
    f = tmp_path / "one.json"
    f.write_text(json.dumps([_locomo_sample()]))
    r = run_s3(["ingest", str(f), "--json"], s3_env)  # the format is detected (issue 13.7)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["turns"] == 4
    r = run_s3(["recall", "puppy Rex", "--json"], s3_env)
    doc = json.loads(r.stdout)
    assert doc["query"] == "puppy Rex" and doc["results"][0]["source_ids"] == ["D1:1"]
    bad = tmp_path / "bad.json"
    bad.write_text("{broken")
    r = run_s3(["ingest", str(bad), "--format", "locomo"], s3_env)
    assert r.returncode == 2 and "not valid JSON" in r.stderr and "Traceback" not in r.stderr
    r = run_s3(["ingest", str(bad)], s3_env)
    assert r.returncode == 2 and "not valid JSON" in r.stderr and "Traceback" not in r.stderr
    r = run_s3(["ingest", str(tmp_path / "missing.jsonl")], s3_env)
    assert r.returncode == 2 and "no such file" in r.stderr and "Traceback" not in r.stderr
    r = run_s3(["ingest", str(tmp_path)], s3_env)  # issue 32: a folder said "no such file"
    assert r.returncode == 2 and f"{tmp_path} is a folder, not a conversation file" in r.stderr, r.stderr
    assert len(r.stderr.splitlines()) == 1


def test_bench_locomo_on_one_dev_conversation(tmp_path: Path, s3_env: dict[str, str]) -> None:
    if not DEV.exists():
        pytest.skip(looked_in("data/locomo/locomo_dev.json"))
    data = json.loads(DEV.read_text())
    one = tmp_path / "conv26.json"
    one.write_text(json.dumps(data[0]))
    r = run_s3(["bench", "locomo", str(one), "--json", "--k", "5,10,50"], s3_env)
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    qs = [q for q in data[0]["qa"] if q.get("evidence")]
    assert res["questions"] == len(qs) and res["turns"] == 419
    allr = res["recall"]["all"]
    assert allr["R@5"] <= allr["R@10"] <= allr["R@50"]
    assert allr["R@10"] > 55  # a quality floor on this conversation (BM25 baseline level)
    assert set(res["recall"]) >= {"all", "1-4", "1 multi-hop", "2 temporal", "3 open-domain", "4 single-hop",
                                  "5 adversarial"}
    assert not (paths.sophia_home() / "index.db").exists()  # the bench used its own temp homes


def test_ingested_turns_sit_on_both_timelines(tmp_path: Path, sophia_home: Path) -> None:
    """Event time = when it was said; record time = when it was first ingested (kept on re-ingest)."""
    f = tmp_path / "one.json"
    f.write_text(json.dumps(_locomo_sample()))
    ingest_file(f, "locomo", home=sophia_home, nudge=False)
    conn = db.connect(sophia_home)
    first = {r["id"]: r["timestamp"] for r in search(conn, "beagle", use_semantic=False)}
    assert first and all(ts > "2024" for ts in first.values())  # recorded now, not in 2023
    ids = [r["id"] for r in search(conn, "beagle", as_of="2023-05-20", use_semantic=False)]
    assert "turn:conv-x:D1:2" in ids and "turn:conv-x:D2:1" not in ids  # D2 was said in June
    assert search(conn, "beagle", as_of="2023-06-05", known_at="2023-12-31", use_semantic=False) == []
    assert ingest_file(f, "locomo", home=sophia_home, nudge=False)["indexed"] == 0
    assert {r["id"]: r["timestamp"] for r in search(conn, "beagle", use_semantic=False)} == first
    conn.close()


@pytest.mark.parametrize("pretty", [False, True])
def test_format_is_detected_from_the_file(tmp_path: Path, s3_env: dict[str, str], pretty: bool) -> None:
    """A LoCoMo .json (one sample, a list, pretty or one line) and a JSONL chat need no --format;
    --format still forces one (issue 13.7: a LoCoMo file failed with "expected ... 'text' string")."""
    one = tmp_path / "one.json"
    one.write_text(json.dumps(_locomo_sample(), indent=2 if pretty else None))
    many = tmp_path / "many.json"
    many.write_text(json.dumps([_locomo_sample() | {"sample_id": "conv-y"}], indent=2 if pretty else None))
    chat = tmp_path / "chat.json"  # the name does not decide: the content does
    chat.write_text("".join(json.dumps({"id": f"m{i}", "text": f"walrus note {i}"}) + "\n" for i in range(3)))
    for f, fmt, turns in ((one, "locomo", 4), (many, "locomo", 4), (chat, "jsonl", 3)):
        r = run_s3(["ingest", str(f), "--json"], s3_env)
        assert r.returncode == 0, (f.name, r.stderr)
        doc = json.loads(r.stdout)
        assert (doc["format"], doc["format_detected"], doc["turns"]) == (fmt, True, turns)
    r = run_s3(["ingest", str(one)], s3_env)
    assert "(format locomo, detected)" in r.stdout
    r = run_s3(["ingest", str(one), "--format", "jsonl"], s3_env)  # forced: read as JSONL, and says why not
    assert r.returncode == 2 and ("expected an object with a 'text' string" in r.stderr or pretty), r.stderr
    r = run_s3(["ingest", str(one), "--format", "csv"], s3_env)
    assert r.returncode == 2 and "--format" in r.stderr


def test_format_detection_on_the_dev_file(tmp_path: Path, sophia_home: Path) -> None:
    if not DEV.exists():
        pytest.skip(looked_in("data/locomo/locomo_dev.json"))
    from sophia.ingest.formats import detect_format

    assert detect_format(DEV) == "locomo"
    res = ingest_file(DEV, home=sophia_home, nudge=False)
    assert res["format"] == "locomo" and res["turns"] == 2760 and len(res["conversations"]) == 5


def _big_locomo(path: Path, samples: int, turns: int) -> None:
    words = ["walrus", "garden", "cello", "beagle", "tax", "river", "piano", "kayak", "pottery", "sunrise",
             "festival", "ledger", "marathon", "violin", "harbour", "lantern", "orchard", "glacier", "canyon"]
    data = []
    for s in range(samples):
        sess = [{"speaker": "Ann" if t % 2 else "Bo", "dia_id": f"D1:{t + 1}",
                 "text": " ".join(words[(s * 7 + t * k) % len(words)] for k in range(1, 12)) + f" number {t}"}
                for t in range(turns)]
        data.append({"sample_id": f"big-{s:02d}", "qa": [],
                     "conversation": {"session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": sess}})
    path.write_text(json.dumps(data))


def test_ctrl_c_during_ingest_says_what_was_done_and_exits_130(tmp_path: Path, s3_env: dict[str, str],
                                                              sophia_home: Path) -> None:
    """SIGINT to a real `s3 ingest` mid-way (issue 13.8): one line saying how far it got, exit 130,
    and running the same command again finishes the job."""
    import signal
    import subprocess
    import sys
    import time

    assert run_s3(["init"], s3_env).returncode == 0
    cfg = sophia_home / "config.json"
    cfg.write_text(json.dumps({**json.loads(cfg.read_text()), "embedding_provider": "none"}))
    n = 30
    big = tmp_path / "big.json"
    _big_locomo(big, n, 400)
    proc = subprocess.Popen([sys.executable, "-m", "sophia.cli.entry", "ingest", str(big)], env=s3_env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    conv_dir = conversation_path("x", sophia_home).parent
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if len(list(conv_dir.glob("big-*.jsonl"))) >= 2:  # the second conversation is under way
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (proc.returncode, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("s3: interrupted: ") and f" of {n} conversations imported" in lines[0]
    assert "run the same command again to finish" in lines[0]
    done = int(lines[0].split("interrupted: ")[1].split()[0])
    assert 1 <= done < n, lines[0]
    r = run_s3(["ingest", str(big), "--json"], s3_env)
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)["conversations"]) == n
    conn = db.connect(sophia_home)
    assert conn.execute("SELECT count(*) FROM items WHERE type = 'turn'").fetchone()[0] == n * 400
    conn.close()


def test_bench_summary_names_the_embedding_time(capsys: pytest.CaptureFixture[str]) -> None:
    """With --semantic the text summary includes the embedding time (issue 13.11: it was left out)."""
    from sophia.cli.cmd_bench import _render
    from sophia.evaluation.locomo import summarize

    per_q = [{"sample": "s", "category": 1, "recall": {5: 1.0}}]
    result = summarize(per_q, [5], ingest_s=1.5, query_s=0.25, turns=10, samples=1)
    _render({**result, "semantic": False}, [5])
    assert "embedding" not in capsys.readouterr().out
    _render({**result, "semantic": True, "embed_seconds": 42.0}, [5])
    out = " ".join(capsys.readouterr().out.split())
    assert "embedding: 42.00 s" in out and "total 43.75 s" in out
