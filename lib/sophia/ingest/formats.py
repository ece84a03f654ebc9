"""Readers for the ingest formats. Each yields conversations ``(source, turns)`` where a turn is
``{"sid", "session", "speaker", "text", "time"}`` (``sid`` = the source id, e.g. a LoCoMo dia_id).
Standard library only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..timeutil import iso, parse

Turn = dict[str, Any]


class IngestError(ValueError):
    """Input that cannot be ingested; the message names the file and the place."""


class IngestInterrupted(KeyboardInterrupt):
    """Ctrl-C during an ingest: how far it got (each finished conversation is kept and indexed;
    the one under way is finished by running the same ingest again, which is idempotent)."""

    def __init__(self, done: int, total: int, turns: int):
        super().__init__(f"{done} of {total} conversations imported ({turns} turns)")
        self.done, self.total, self.turns = done, total, turns


FORMATS = ("locomo", "jsonl")


def detect_format(path: Path) -> str:
    """``jsonl`` when the first non-empty line is a JSON object of its own that is not a LoCoMo
    sample; otherwise ``locomo`` (a pretty-printed or one-line LoCoMo sample, or a list of them;
    its reader then names what is wrong). An empty file is ``jsonl`` (no turns)."""
    try:
        with path.open(encoding="utf-8") as fh:
            first = next((line for line in fh if line.strip()), "")
    except (OSError, UnicodeDecodeError) as exc:
        raise IngestError(f"{path}: cannot read: {exc}") from exc
    if not first:
        return "jsonl"
    try:
        obj = json.loads(first)
    except ValueError:
        return "locomo"
    return "locomo" if not isinstance(obj, dict) or "conversation" in obj else "jsonl"


_LOCOMO_TIME = re.compile(
    r"^\s*(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$", re.I)
_MONTHS = {m: i for i, m in enumerate(
    ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"), 1)}


def parse_locomo_time(value: str) -> str | None:
    """'1:56 pm on 8 May, 2023' -> '2023-05-08T13:56:00Z' (None when unreadable)."""
    m = _LOCOMO_TIME.match(str(value or ""))
    if not m:
        d = parse(value)
        return iso(d) if d else None
    hh, mm, ampm, day, month, year = m.groups()
    mon = _MONTHS.get(month.lower()) or next((v for k, v in _MONTHS.items() if k.startswith(month.lower()[:3])),
                                             None)
    if mon is None:
        return None
    h = int(hh) % 12 + (12 if ampm.lower() == "pm" else 0)
    try:
        return iso(datetime(int(year), mon, int(day), h, int(mm), tzinfo=UTC))
    except ValueError:
        return None


def locomo_text(turn: dict[str, Any]) -> str:
    """'Speaker: text [shares caption]', the text LoCoMo baselines index."""
    text = f"{turn.get('speaker', '')}: {turn.get('text', '')}".strip()
    cap = turn.get("blip_caption")
    if cap:
        text += f" [shares {cap}]"
    return text


def _session_keys(conv: dict[str, Any]) -> list[tuple[int, str]]:
    out = []
    for k, v in conv.items():
        m = re.fullmatch(r"session_(\d+)", k)
        if m and isinstance(v, list):
            out.append((int(m.group(1)), k))
    return sorted(out)


def read_locomo(path: Path) -> Iterator[tuple[str, list[Turn]]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise IngestError(f"{path}: cannot read: {exc}") from exc
    except ValueError as exc:
        raise IngestError(f"{path}: not valid JSON: {exc}") from exc
    samples = data if isinstance(data, list) else [data]
    for n, sample in enumerate(samples):
        if not isinstance(sample, dict) or not isinstance(sample.get("conversation"), dict):
            raise IngestError(f"{path}: sample {n} has no 'conversation' object (is this a LoCoMo file?)")
        conv = sample["conversation"]
        source = str(sample.get("sample_id") or f"{path.stem}-{n}")
        turns: list[Turn] = []
        for num, key in _session_keys(conv):
            when = parse_locomo_time(conv.get(f"{key}_date_time", ""))
            for t in conv[key]:
                if not isinstance(t, dict) or not t.get("dia_id"):
                    continue
                turns.append({
                    "sid": str(t["dia_id"]), "session": str(num), "speaker": t.get("speaker"),
                    "text": locomo_text(t), "time": when,
                    "extra": {k: t[k] for k in ("blip_caption", "img_url", "query") if t.get(k)},
                })
        yield source, turns


def read_jsonl(path: Path, source: str | None = None) -> Iterator[tuple[str, JsonlTurns]]:
    """Lines ``{"id", "session", "speaker", "text", "timestamp"}`` (speaker/session/timestamp optional):
    one conversation, its turns read lazily (a file of any size streams)."""
    yield (source or path.stem), JsonlTurns(path)


class JsonlTurns:
    """The turns of a JSONL file, parsed as they are iterated (a bad line raises IngestError there);
    ``len()`` counts its non-empty lines without parsing them."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._n: int | None = None

    def __len__(self) -> int:
        if self._n is None:
            try:
                with self.path.open("rb") as fh:
                    self._n = sum(1 for line in fh if line.strip())
            except OSError as exc:
                raise IngestError(f"{self.path}: cannot read: {exc}") from exc
        return self._n

    def __iter__(self) -> Iterator[Turn]:
        try:
            fh = self.path.open(encoding="utf-8")
        except OSError as exc:
            raise IngestError(f"{self.path}: cannot read: {exc}") from exc
        with fh:
            for ln, line in enumerate(fh, 1):
                if line.strip():
                    yield _jsonl_turn(self.path, ln, line)


def _jsonl_turn(path: Path, ln: int, line: str) -> Turn:
    try:
        obj = json.loads(line)
    except ValueError as exc:
        raise IngestError(f"{path}:{ln}: not valid JSON: {exc}") from exc
    if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
        raise IngestError(f"{path}:{ln}: expected an object with a 'text' string")
    sid = obj.get("id")
    sid = str(sid) if sid not in (None, "") else f"L{ln}"
    speaker = obj.get("speaker")
    text = f"{speaker}: {obj['text']}" if speaker else obj["text"]
    ts = parse(obj.get("timestamp")) if obj.get("timestamp") else None
    return {"sid": sid, "session": None if obj.get("session") is None else str(obj["session"]),
            "speaker": speaker, "text": text, "time": iso(ts) if ts else None, "extra": {}}
