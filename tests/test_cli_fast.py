"""``s3 version`` and ``s3 list KIND`` answered without typer (cli/fast_cmds.py): the same output, errors
and exit codes as the typer commands, and neither typer, rich nor pydantic imported to say them."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from tests.conftest import run_s3

from sophia.cli import plain

# entry.py without this fast path: what every command printed before
VIA_TYPER = "import sys; from sophia.cli import entry; entry._fast_answer = lambda argv: None; entry.main()"
IMPORTED = ("import sys; from sophia.cli.entry import main; sys.argv[0] = 's3'\n"
            "try:\n    main()\nfinally:\n"
            "    print(*[m for m in ('typer', 'click', 'rich', 'pydantic') if m in sys.modules], file=sys.stderr)")

TEXTS = ["Use docker compose for services", "Note: a:b: run :smile: now", "[bold]x[/bold] and [docker] tag",
         "Tabs\there\rand a bell\x07", "plain words, (brackets) and [Capital] ones", "ünïcode ✓ 漢字"]


def via_typer(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", VIA_TYPER, *args], env=env, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture
def filled(s3_env: dict[str, str]) -> dict[str, str]:
    assert run_s3(["init"], s3_env).returncode == 0
    for t in TEXTS:
        assert run_s3(["learn", t], s3_env).returncode == 0
    assert run_s3(["learn", "--domain", "docker", "restart the daemon"], s3_env).returncode == 0
    return s3_env


CASES = [["version"], ["version", "--json"], ["list", "rules"], ["list", "rules", "--json"],
         ["list", "--json", "rules"], ["list", "episodes"], ["list", "facts", "--json"], ["list", "gaps"],
         ["list", "bogus"], ["list"], ["list", "rules", "--help"], ["version", "--help"], ["version", "--bogus"],
         ["version", "extra"], ["list", "rules", "--json", "--json"], ["list", "rules", "extra"], ["list", "team"],
         ["list", "team", "--json"]]


def test_same_as_typer(filled: dict[str, str]) -> None:
    for args in CASES:
        fast, ref = run_s3(args, filled), via_typer(args, filled)
        assert (fast.returncode, fast.stdout, fast.stderr) == (ref.returncode, ref.stdout, ref.stderr), args


def test_rules_listed_plainly_without_typer(filled: dict[str, str]) -> None:
    """The fast path imports neither typer, click nor pydantic."""
    r = subprocess.run([sys.executable, "-c", IMPORTED, "list", "rules"], env=filled, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.startswith("## Rules: 7\n\n")
    assert "restart the daemon" in r.stdout
    # the lines rich would change went through rich (so it was imported); typer, click and pydantic were not
    assert r.stderr.split() == ["rich"]
    r = subprocess.run([sys.executable, "-c", IMPORTED, "list", "rules", "--json"], env=filled,
                       capture_output=True, text=True, timeout=120)
    assert len(json.loads(r.stdout)) == 7 and r.stderr.split() == []
    r = subprocess.run([sys.executable, "-c", IMPORTED, "version"], env=filled, capture_output=True, text=True,
                       timeout=120)
    assert r.stdout.startswith("s3 (Sophia System 3) ") and r.stderr.split() == []


def test_unreadable_store_is_said_by_typer(filled: dict[str, str]) -> None:
    from sophia import paths

    home = Path(filled["SOPHIA_HOME"])
    paths.rules_path(home).write_text("{not json")
    for args in (["list", "rules"], ["list", "rules", "--json"]):
        fast, ref = run_s3(args, filled), via_typer(args, filled)
        assert fast.returncode == ref.returncode != 0
        assert fast.stdout == ref.stdout == "" and fast.stderr == ref.stderr and "s3: error:" in fast.stderr


@pytest.mark.parametrize("markup", [True, False])
def test_print_lines_is_what_rich_prints(capsys: pytest.CaptureFixture[str], markup: bool) -> None:
    """Lines written as they are or through rich: the same text as rich's console for every line."""
    rnd = random.Random(30)
    alphabet = "aZ :[]/#@\\-\t\r\x07\x1b✓"
    times = ["- Last session: 2026-11-27T01:57:53Z", "at 1:2:3 and 12:34:56", "a :100: b", "1:1234:", ":+1:",
             ":12: :-1:", ":57:smile: x", "::", ":5-text:", ":smile-emoji:", "01:00:99:1000:", "0:100-text:"]
    times += ["".join(rnd.choice("01:: a-") for _ in range(rnd.randint(0, 12))) for _ in range(500)]
    lines = TEXTS + times + ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 12))) for _ in range(2000)]
    for line in lines:
        try:
            plain.console().print(line, markup=markup)
        except Exception as exc:  # noqa: BLE001 - rich refuses some markup ("[/]" closing nothing): so must we
            capsys.readouterr()
            with pytest.raises(type(exc)):
                plain.print_lines([line], markup=markup)
            continue
        want = capsys.readouterr().out
        plain.print_lines([line], markup=markup)
        assert capsys.readouterr().out == want, repr(line)
    plain.print_lines(["a", "[bold]b[/bold]", "c"], markup=markup)
    assert capsys.readouterr().out == ("a\nb\nc\n" if markup else "a\n[bold]b[/bold]\nc\n")


# ---- s3 status: answered here once a status checked every state file and none changed since (cli/status_stamp.py)

STATUS_CASES = [["status"], ["status", "--json"], ["status", "--help"], ["status", "--bogus"], ["status", "extra"],
                ["status", "--json", "--json"]]


def _settle(home: Path) -> None:
    """The state files as a session left them a while ago (files written within RACY_NS are not trusted)."""
    import os
    import time

    old = time.time() - 60
    for p in home.rglob("*.json"):
        os.utime(p, (old, old))


def _stamped(env: dict[str, str]) -> Path:
    home = Path(env["SOPHIA_HOME"])
    _settle(home)
    stamp = home / "run" / "status_stamp.json"
    stamp.unlink(missing_ok=True)
    assert run_s3(["status", "--json"], env).returncode == 0  # the typer path checks the files and records them
    assert stamp.is_file()
    return stamp


def _imported(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", IMPORTED, *args], env=env, capture_output=True, text=True,
                          timeout=120)


def test_status_same_as_typer(filled: dict[str, str]) -> None:
    _stamped(filled)
    for args in STATUS_CASES:
        fast, ref = run_s3(args, filled), via_typer(args, filled)
        assert (fast.returncode, fast.stdout, fast.stderr) == (ref.returncode, ref.stdout, ref.stderr), args
    for args in (["status"], ["status", "--json"]):
        r = _imported(args, filled)
        assert r.returncode == 0 and r.stderr.split() == [], args  # neither typer, rich nor pydantic
    assert "- Semantic rules: 7\n" in run_s3(["status"], filled).stdout


def test_status_with_capabilities_gaps_and_episodes_same_as_typer(filled: dict[str, str]) -> None:
    """A self-model with a capability (rich's table: the text goes to typer), a gap, markup in its goal."""
    from sophia import paths
    from sophia.models import SelfModel

    home = Path(filled["SOPHIA_HOME"])
    sm = json.loads(paths.self_model_path(home).read_text())
    sm["identity_goal"] = "Ship [bold]it[/bold] :smile: well"
    sm["capabilities"] = {"docker": {"proficiency": 0.7, "experience_count": 3, "success_rate": 0.5}}
    sm["knowledge_gaps"] = [{"id": "gap_1", "text": "how the [deploy] works", "project": "/p"}]
    dumped = SelfModel.model_validate(sm).model_dump(mode="json")
    paths.self_model_path(home).write_text(json.dumps(dumped, indent=2))
    _stamped(filled)
    for args in (["status"], ["status", "--json"]):
        fast, ref = run_s3(args, filled), via_typer(args, filled)
        assert (fast.returncode, fast.stdout, fast.stderr) == (ref.returncode, ref.stdout, ref.stderr), args
    assert _imported(["status", "--json"], filled).stderr.split() == []
    assert "typer" in _imported(["status"], filled).stderr.split()  # the table: drawn by rich through typer


def test_status_checks_a_changed_state_file_again(filled: dict[str, str]) -> None:
    from sophia import paths

    home = Path(filled["SOPHIA_HOME"])
    _stamped(filled)
    rules = json.loads(paths.rules_path(home).read_text())
    rules[2]["confidence"] = 5  # parses, but not as a rule
    paths.rules_path(home).write_text(json.dumps(rules))
    for args in (["status"], ["status", "--json"]):
        fast, ref = run_s3(args, filled), via_typer(args, filled)
        assert fast.returncode == ref.returncode == 1 and "rule #2" in fast.stderr
        assert (fast.stdout, fast.stderr) == (ref.stdout, ref.stderr) == ("", ref.stderr)
    del rules[2]
    paths.rules_path(home).write_text(json.dumps(rules))
    _settle(home)
    assert "- Semantic rules: 6\n" in run_s3(["status"], filled).stdout  # checked by typer, then recorded
    r = _imported(["status"], filled)
    assert "- Semantic rules: 6\n" in r.stdout and r.stderr.split() == []


def test_status_trusts_no_file_written_just_now(filled: dict[str, str]) -> None:
    home = Path(filled["SOPHIA_HOME"])
    stamp = _stamped(filled)
    stamp.unlink()
    assert run_s3(["learn", "one more rule"], filled).returncode == 0  # semantic_rules.json written just now
    assert run_s3(["status"], filled).returncode == 0
    assert not stamp.exists()
    _settle(home)
    assert run_s3(["status"], filled).returncode == 0 and stamp.exists()


def test_status_to_a_forced_terminal_goes_through_rich(filled: dict[str, str]) -> None:
    _stamped(filled)
    env = {**filled, "FORCE_COLOR": "1"}
    fast, ref = run_s3(["status"], env), via_typer(["status"], env)
    assert fast.returncode == 0 and (fast.stdout, fast.stderr) == (ref.stdout, ref.stderr)
    assert "\x1b[1m" in fast.stdout  # the headers bold, as rich prints them to a terminal
