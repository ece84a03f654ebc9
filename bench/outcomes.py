"""How often the episode's outcome is right: every labelled real session replayed the way the hooks see it.

    python bench/outcomes.py [--labels tests/fixtures/transcripts/labels] [--dir ../shared/data/transcripts]
                             [--baseline REF] [--lib DIR] [--json]

Each transcript that has a label (``tests/fixtures/transcripts/labels/*.json``: the true ``outcome``, read
by hand) is replayed into a fresh state home as Claude Code writes it: a growing copy of the file, a Stop
before every prompt the user typed (with the turn's last assistant message, as the Stop payload carries
it), then SessionEnd, all through ``sophia.hooks.session_end.process`` (SessionEnd with ``past=True``:
nothing detached is launched). There is no PostToolUse buffer, so the episode's calls come from the
transcript, judged by ``sophia.evidence``. Prints, per session, the label, the judged outcome and its
reason, then the share judged right. ``--baseline REF`` also measures the library of git ref REF (say
``main``) in the same run and prints both; ``--lib DIR`` measures the library in DIR.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT / "tests/fixtures/transcripts/labels"
TRANSCRIPTS = "data/transcripts"


def _use_lib(lib: Path) -> None:
    """Import ``sophia`` from ``lib`` (before anything imports it)."""
    sys.path.insert(0, str(lib))
    sys.path.insert(1, str(ROOT / "tests"))


def transcripts_dir() -> Path:
    sys.path.insert(0, str(ROOT / "tests"))
    from shared_data import shared_path

    return shared_path(TRANSCRIPTS)


def _prompt(obj: dict[str, Any]) -> bool:
    """A line where the user typed a prompt (not a tool result, a meta line, a sidechain or a summary)."""
    from sophia.transcript_entries import block_text, blocks, clean_prompt

    if obj.get("type") != "user" or obj.get("isMeta") or obj.get("isSidechain") or obj.get("isCompactSummary"):
        return False
    if any(b.get("type") == "tool_result" for b in blocks(obj)):
        return False
    return clean_prompt(block_text((obj.get("message") or {}).get("content"))) is not None


def _assistant_text(obj: dict[str, Any]) -> str | None:
    from sophia.transcript_entries import block_text

    if obj.get("type") != "assistant" or obj.get("isSidechain"):
        return None
    text = block_text((obj.get("message") or {}).get("content")).strip()
    return text or None


def replay(path: Path, home: Path, work: Path) -> dict[str, Any]:
    """The episode the Stop and SessionEnd hooks make of one transcript."""
    from sophia.hooks import session_end
    from sophia.transcript_entries import parse_line

    lines = path.read_bytes().splitlines(keepends=True)
    objs = [parse_line(raw) or {} for raw in lines]
    sid = next((o["sessionId"] for o in objs if isinstance(o.get("sessionId"), str)), path.stem)
    cwd = next((o["cwd"] for o in objs if isinstance(o.get("cwd"), str)), "/")
    live = work / f"{session_end.safe_session(sid)}.jsonl"
    base = {"session_id": sid, "transcript_path": str(live), "cwd": cwd}
    last_text: str | None = None
    with live.open("wb") as fh:
        for raw, obj in zip(lines, objs, strict=True):
            if _prompt(obj) and last_text is not None:
                fh.flush()
                session_end.process({**base, "hook_event_name": "Stop", "stop_hook_active": False,
                                     "last_assistant_message": last_text}, home)
            fh.write(raw)
            last_text = _assistant_text(obj) or last_text
    report = session_end.process({**base, "hook_event_name": "SessionEnd", "reason": "other"}, home, past=True)
    episode = json.loads((home / "episodes" / f"{report['episode']}.json").read_text(encoding="utf-8"))
    return {"outcome": episode.get("outcome"), "reason": episode.get("outcome_reason") or ""}


def measure(labels: Path, transcripts: Path) -> list[dict[str, Any]]:
    """One row per labelled session whose transcript is there: file, language, label, judged, reason."""
    import os

    rows = []
    with tempfile.TemporaryDirectory(prefix="s3-outcomes-") as t:
        for label_file in sorted(labels.glob("*.json")):
            label = json.loads(label_file.read_text(encoding="utf-8"))
            path = transcripts / label["file"]
            if not path.is_file():
                continue
            home = Path(t) / label_file.stem[:40] / ".sophia"
            os.environ["SOPHIA_HOME"] = str(home)
            got = replay(path, home, Path(t))
            rows.append({"file": label["file"], "language": label.get("language", "?"), "label": label["outcome"],
                         "judged": got["outcome"], "reason": got["reason"]})
    return rows


def accuracy(rows: list[dict[str, Any]]) -> float:
    return sum(r["label"] == r["judged"] for r in rows) / len(rows) if rows else 0.0


def _baseline_rows(ref: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    """The same measure with the library of git ref ``ref``, in a child process."""
    data = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "lib"], capture_output=True, check=True).stdout
    with tempfile.TemporaryDirectory(prefix="s3-outcomes-base-") as t:
        with tarfile.open(fileobj=BytesIO(data)) as tar:
            tar.extractall(t, filter="data")
        out = subprocess.run([sys.executable, __file__, "--lib", str(Path(t) / "lib"), "--json", "--labels",
                              str(args.labels), "--dir", str(args.dir)], capture_output=True, check=True, text=True)
    return list(json.loads(out.stdout))


def _print(rows: list[dict[str, Any]], base: list[dict[str, Any]] | None, ref: str | None) -> None:
    before = {r["file"]: r["judged"] for r in base or []}
    print("| session | language | label | judged | " + (f"{ref} | " if base else "") + "reason |")
    print("|---|---|---|---|" + ("---|" if base else "") + "---|")
    for r in rows:
        mark = "" if r["judged"] == r["label"] else " ✗"
        old = f"{before.get(r['file'], '-')} | " if base else ""
        print(f"| {r['file'][:44]} | {r['language']} | {r['label']} | {r['judged']}{mark} | {old}{r['reason']} |")
    right = sum(r["label"] == r["judged"] for r in rows)
    print(f"\n{right} of {len(rows)} outcomes right ({100 * accuracy(rows):.0f}%)")
    if base:
        right0 = sum(r["label"] == r["judged"] for r in base)
        print(f"{ref}: {right0} of {len(base)} right ({100 * accuracy(base):.0f}%)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--labels", type=Path, default=LABELS)
    ap.add_argument("--dir", type=Path, default=None, help="the transcripts (default ../shared/data/transcripts)")
    ap.add_argument("--baseline", metavar="REF", help="also measure the library of this git ref (say main)")
    ap.add_argument("--lib", type=Path, help="measure the library in this folder instead of this checkout's")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args()
    _use_lib(args.lib or ROOT / "lib")
    args.dir = args.dir or transcripts_dir()
    rows = measure(args.labels, args.dir)
    if args.json:
        print(json.dumps(rows, ensure_ascii=False))
        return 0
    if not rows:
        print(f"no labelled transcripts in {args.dir}: nothing measured")
        return 0
    base = _baseline_rows(args.baseline, args) if args.baseline else None
    _print(rows, base, args.baseline)
    return 0


if __name__ == "__main__":
    sys.exit(main())
