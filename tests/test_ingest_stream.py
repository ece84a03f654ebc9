"""``s3 ingest`` streams: memory does not grow with the file, progress reaches a non-terminal stderr,
the kept file and the index match what the whole-file merge made, a bad line writes nothing."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import LIB, stop_embedding_services
from sophia.index import db
from sophia.index.conversations import conversation_path, read_conversation
from sophia.ingest.core import ingest_file, turn_items
from sophia.ingest.formats import IngestError
from sophia.ingest.memcell import Boundaries, segment, segment_stream


@pytest.fixture(autouse=True)
def no_semantic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOPHIA_RECALL_SEMANTIC", "0")


def _write_jsonl(path: Path, n: int, seed: int = 7) -> None:
    rnd = random.Random(seed)
    vocab = [f"w{i}x{rnd.randrange(10**6)}" for i in range(3000)] + ["garden", "camping", "paint", "kids"]
    with path.open("w") as fh:
        for i in range(n):
            words = " ".join(rnd.choice(vocab) for _ in range(rnd.randint(6, 30)))
            conv, pos = divmod(i, 500)
            fh.write(json.dumps({"id": f"c{conv}-m{pos}", "session": f"s{conv}-{pos // 25}",
                                 "speaker": rnd.choice(("Ann", "Bob")), "text": words,
                                 "timestamp": f"2024-01-{1 + conv % 28:02d}T10:{pos % 60:02d}:00Z"}) + "\n")


SIZES = {"small": 2_000, "big": 40_000}


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """``s3 ingest`` of 2,000 and of 40,000 turns, each into its own home and in a fresh interpreter, whose
    peak is taken (so one's peak is not the other's): made once for this file, read by the tests below
    (the forgetting test forgets from copies of these homes)."""
    root = tmp_path_factory.mktemp("ingested")
    env = {k: v for k, v in os.environ.items() if k != "SOPHIA_HOOK_GUARD"}
    env.update(HOME=str(root), PYTHONPATH=str(LIB), SOPHIA_RECALL_SEMANTIC="0")
    code = ("import os, resource, subprocess, sys; p = subprocess.run([sys.executable, '-m', 'sophia.cli.entry', "
            "'ingest', sys.argv[1], '--json'], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True); "
            "sys.stderr.write(p.stderr); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
            "sys.exit(p.returncode)")
    out: dict[str, Any] = {"peaks": {}, "errs": {}, "homes": {}}
    for name, n in SIZES.items():
        f = root / f"{name}.jsonl"
        _write_jsonl(f, n)
        home = root / f"home-{name}"
        p = subprocess.run([sys.executable, "-c", code, str(f)], env=dict(env, SOPHIA_HOME=str(home)),
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        out["peaks"][name] = int(p.stdout.strip()) / 1024
        out["errs"][name] = p.stderr
        out["homes"][name] = home
    yield out
    stop_embedding_services(root)


def test_ingest_memory_does_not_grow_with_the_file(ingested: dict[str, Any]) -> None:
    """40,000 turns peak within 25 MiB of 2,000 turns (the whole-file ingest grew ~2.9 KB a turn: +110 MiB
    here, 2.9 GB at a million)."""
    peaks, errs = ingested["peaks"], ingested["errs"]
    assert peaks["big"] - peaks["small"] < 25, peaks
    # progress on a non-terminal stderr: a line at each tenth of a big ingest, none for a small one
    lines = [ln for ln in errs["big"].splitlines() if ln.startswith("s3 ingest: ")]
    assert len(lines) == 10 and lines[0] == "s3 ingest: 10% (big: reading)", errs["big"]
    assert lines[-1] == "s3 ingest: 100% (big: indexing)", errs["big"]
    assert "s3 ingest: " not in errs["small"]
    conn = db.connect(ingested["homes"]["big"])
    try:
        assert conn.execute("SELECT count(*) FROM items WHERE type = 'turn'").fetchone()[0] == 40_000
    finally:
        conn.close()


def test_streamed_merge_matches_the_whole_conversation(tmp_path: Path, sophia_home: Path) -> None:
    """Re-ingesting with changed, repeated and new turns: the kept file is what merging the whole
    conversation in memory (``turn_items`` over the merged turns) gives, and the index holds it."""
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    _write_jsonl(first, 300)
    rows = [json.loads(x) for x in first.read_text().splitlines()]
    again = [dict(r, text=r["text"] + " edited") for r in rows[200:260]]
    new = [dict(r, id=f"n{i}") for i, r in enumerate(rows[:40])]
    second.write_text("".join(json.dumps(r) + "\n" for r in [*again, *new, dict(again[0], text="last wins")]))
    ingest_file(first, home=sophia_home, source="talk", nudge=False)
    out = ingest_file(second, home=sophia_home, source="talk", nudge=False)
    kept = read_conversation(conversation_path("talk", sophia_home))
    assert [it["meta"]["sid"] for it in kept] == [r["id"] for r in rows] + [f"n{i}" for i in range(40)]
    by_sid = {it["meta"]["sid"]: it for it in kept}
    assert by_sid["c0-m200"]["text"].endswith(": last wins")
    assert by_sid["c0-m201"]["text"].endswith(" edited")
    turns = [{"sid": it["meta"]["sid"], "session": it["meta"]["session"], "speaker": it["meta"]["speaker"],
              "text": it["text"], "time": it["event_time"], "recorded": it["timestamp"]} for it in kept]
    assert [it["memcell_id"] for it in turn_items("talk", turns)] == [it["memcell_id"] for it in kept]
    assert out["turns"] == 340 and out["memcells"] == len({it["memcell_id"] for it in kept})
    conn = db.connect(sophia_home)
    try:
        texts = dict(conn.execute("SELECT id, text FROM items WHERE type = 'turn'").fetchall())
    finally:
        conn.close()
    assert texts == {it["id"]: it["text"] for it in kept}


def test_a_bad_line_late_in_the_file_writes_nothing(tmp_path: Path, sophia_home: Path) -> None:
    f = tmp_path / "bad.jsonl"
    _write_jsonl(f, 5_000)
    with f.open("a") as fh:
        fh.write("{not json\n")
    with pytest.raises(IngestError, match=r"bad.jsonl:5001: not valid JSON"):
        ingest_file(f, home=sophia_home, nudge=False)
    assert not conversation_path("bad", sophia_home).exists()
    assert not list(conversation_path("bad", sophia_home).parent.glob(".*"))  # no staging or temp file left
    conn = db.connect(sophia_home)
    try:
        assert conn.execute("SELECT count(*) FROM items").fetchone()[0] == 0
    finally:
        conn.close()


def test_segment_stream_reads_only_a_few_turns_ahead() -> None:
    """The segmenter never pulls more than ``window`` turns past the one it decides (constant memory),
    and gives the same cells as over whole lists."""
    rnd = random.Random(3)
    cues = [("s", None, [rnd.choice("abcdefgh") for _ in range(3)]) for _ in range(500)]
    pulled = 0

    def gen():  # type: ignore[no-untyped-def]
        nonlocal pulled
        for c in cues:
            pulled += 1
            yield c

    cfg = Boundaries(window=3, min_size=4, threshold=0.2)
    cells = []
    for i, cell in enumerate(segment_stream(gen(), cfg)):
        assert pulled <= i + 3
        cells.append(cell)
    assert cells == segment([c[0] for c in cues], [None] * 500, [c[2] for c in cues], cfg)
    assert len(set(cells)) > 5


def test_rebuild_streams_a_conversation_back_into_the_index(tmp_path: Path, sophia_home: Path) -> None:
    """``s3 index --rebuild`` reads a kept conversation line by line, 1,000 items a transaction (here
    2,500 turns: three of them), and indexes exactly what the ingest had."""
    from sophia.index.rebuild import rebuild

    f = tmp_path / "talk.jsonl"
    _write_jsonl(f, 2_500)
    ingest_file(f, home=sophia_home, nudge=False)
    cols = "id, text, terms, memcell_id, seq, source, timestamp"

    def rows() -> list[tuple[object, ...]]:
        conn = db.connect(sophia_home)
        try:
            return conn.execute(f"SELECT {cols} FROM items WHERE type = 'turn' ORDER BY id").fetchall()
        finally:
            conn.close()

    before = rows()
    assert len(before) == 2_500
    rebuild(sophia_home)
    assert rows() == before


def test_the_staging_file_of_a_killed_ingest_is_swept_by_the_next(tmp_path: Path, s3_env: dict[str, str]) -> None:
    """SIGKILL an ingest while it stages (its temp file left behind), then ingest again: the orphan goes,
    and nothing of the kept conversations is touched."""
    import signal
    import time

    big, small = tmp_path / "big.jsonl", tmp_path / "small.jsonl"
    _write_jsonl(big, 60_000)
    _write_jsonl(small, 50, seed=3)
    env = dict(s3_env, SOPHIA_HOME=str(tmp_path / "home"))
    folder = conversation_path("big", tmp_path / "home").parent
    p = subprocess.Popen([sys.executable, "-m", "sophia.cli.entry", "ingest", str(big), "--json"], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not list(folder.glob(".staging.*.db")) and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.01)
    p.send_signal(signal.SIGKILL)
    p.wait()
    orphans = list(folder.glob(".staging.*.db"))
    assert orphans, "the ingest ended before it staged anything"
    q = subprocess.run([sys.executable, "-m", "sophia.cli.entry", "ingest", str(small), "--json"], env=env,
                       capture_output=True, text=True, timeout=120)
    assert q.returncode == 0, q.stderr
    assert not list(folder.glob(".staging.*.db"))
    assert len(read_conversation(conversation_path("small", tmp_path / "home"))) == 50


def test_forgetting_a_whole_source_does_not_load_it(tmp_path: Path, s3_env: dict[str, str],
                                                   ingested: dict[str, Any]) -> None:
    """`s3 forget --source` of 40,000 turns peaks within 25 MiB of 2,000 (it held every removed turn:
    ~2 KB each, 2 GB at a million), and leaves neither file nor index row."""
    code = ("import resource, subprocess, sys; p = subprocess.run([sys.executable, '-m', 'sophia.cli.entry', "
            "'forget', '--source', sys.argv[1], '--json'], capture_output=True, text=True); "
            "sys.stderr.write(p.stderr + p.stdout); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
            "sys.exit(p.returncode)")
    peaks = {}
    for name, n in SIZES.items():
        home = tmp_path / f"home-{name}"
        shutil.copytree(ingested["homes"][name], home, symlinks=True)  # what `s3 ingest` of n turns left
        conn = db.connect(home)
        try:
            assert conn.execute("SELECT count(*) FROM items WHERE type = 'turn'").fetchone()[0] == n
        finally:
            conn.close()
        env = dict(s3_env, SOPHIA_HOME=str(home))
        p = subprocess.run([sys.executable, "-c", code, name], env=env, capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        assert f'"turns_removed": {n}' in p.stderr.replace("\n", " ") or f'"turns_removed":{n}' in p.stderr, p.stderr
        peaks[name] = int(p.stdout.strip()) / 1024
        assert not conversation_path(name, home).exists()
        conn = db.connect(home)
        try:
            assert conn.execute("SELECT count(*) FROM items WHERE type = 'turn'").fetchone()[0] == 0
        finally:
            conn.close()
    assert peaks["big"] - peaks["small"] < 25, peaks
