"""``s3 version`` and ``s3 list KIND`` answered without typer (cli/fast_cmds.py): the same output, errors
and exit codes as the typer commands, and neither typer, rich nor pydantic imported to say them."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import copy_home, made_home, run_s3, stop_embedding_services

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


@pytest.fixture(scope="module")
def filled_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The home of ``filled``, made once for this file: each test works on its own copy of it, so none sees
    another's changes."""
    root = tmp_path_factory.mktemp("filled")
    yield made_home(root, *[["learn", t] for t in TEXTS], ["learn", "--domain", "docker", "restart the daemon"])
    stop_embedding_services(root)


@pytest.fixture
def filled(s3_env: dict[str, str], filled_home: Path) -> dict[str, str]:
    return copy_home(filled_home, s3_env)


def _both(cases: list[list[str]], env: dict[str, str]
          ) -> list[tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]]:
    """(the fast path's answer, typer's) to each of ``cases``, four processes at a time (they only read the
    home, or record the same status stamp or keep the same list under their locks): one process after another
    leaves a core idle."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        runs = [(pool.submit(run_s3, args, env), pool.submit(via_typer, args, env)) for args in cases]
        return [(fast.result(), ref.result()) for fast, ref in runs]


CASES = [["version"], ["version", "--json"], ["list", "rules"], ["list", "rules", "--json"],
         ["list", "--json", "rules"], ["list", "episodes"], ["list", "facts", "--json"], ["list", "gaps"],
         ["list", "bogus"], ["list"], ["list", "rules", "--help"], ["version", "--help"], ["version", "--bogus"],
         ["version", "extra"], ["list", "rules", "--json", "--json"], ["list", "rules", "extra"], ["list", "team"],
         ["list", "team", "--json"]]


def test_same_as_typer(filled: dict[str, str]) -> None:
    for args, (fast, ref) in zip(CASES, _both(CASES, filled), strict=True):
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
    cases = [["list", "rules"], ["list", "rules", "--json"]]
    for fast, ref in _both(cases, filled):
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


def _settle(home: Path, names: tuple[str, ...] = ()) -> None:
    """The state files (or those ``names``) as a session left them a while ago (files written within RACY_NS
    are not trusted)."""
    import os
    import time

    old = time.time() - 60
    for p in [home / n for n in names] or home.rglob("*.json"):
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
    for args, (fast, ref) in zip(STATUS_CASES, _both(STATUS_CASES, filled), strict=True):
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
    cases = [["status"], ["status", "--json"]]
    for args, (fast, ref) in zip(cases, _both(cases, filled), strict=True):
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
    for fast, ref in _both([["status"], ["status", "--json"]], filled):
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
    [(fast, ref)] = _both([["status"]], env)
    assert fast.returncode == 0 and (fast.stdout, fast.stderr) == (ref.stdout, ref.stderr)
    assert "\x1b[1m" in fast.stdout  # the headers bold, as rich prints them to a terminal


# ---- s3 status after a turn: the files the hooks rewrote are checked against their schemas (cli/status_check.py)


def _turn(home: Path, prompt: str = "thanks, now the tests") -> None:
    """What the Stop hook writes at the end of a turn (hooks/session_end.py), through the same writers."""
    from sophia.episode_store import upsert_index_entries
    from sophia.hooks.stats import update_self_model, update_user_model
    from sophia.timeutil import iso

    entry = {"id": f"ep_{random.getrandbits(32):08x}", "timestamp": iso(), "goal_summary": "fix the [build] :smile:",
             "outcome": "SUCCESS", "tool_call_count": 4, "heuristics_count": 1, "trivial": False, "consolidated": False,
             "keywords": ["build"], "project": "/p", "session_id": "s1"}
    upsert_index_entries([entry], home, durable=False)
    update_user_model(home, "default", prompts=[prompt], topics=["build"], durable=False)
    update_self_model(home, new_session=True, new_episode=True, durable=False)


TURN_FILES = ("episodes/index.json", "user_models/default.json", "self_model.json")


def _all_same(cases: list[list[str]], env: dict[str, str], why: object = None
              ) -> list[subprocess.CompletedProcess[str]]:
    """The fast path's answers to ``cases``, each checked to be typer's (code, stdout and stderr)."""
    out = []
    for args, (fast, ref) in zip(cases, _both(cases, env), strict=True):
        if (fast.returncode, fast.stdout, fast.stderr) != (ref.returncode, ref.stdout, ref.stderr):
            import difflib

            diff = "".join(difflib.unified_diff(ref.stdout.splitlines(True), fast.stdout.splitlines(True), n=1))
            raise AssertionError(f"{args} {why}: {fast.returncode} vs {ref.returncode}\n{diff}\n{fast.stderr}\n"
                                 f"{ref.stderr}")
        out.append(fast)
    return out


def test_status_after_a_turn_without_typer_or_pydantic(filled: dict[str, str]) -> None:
    home = Path(filled["SOPHIA_HOME"])
    stamp = _stamped(filled)
    _turn(home)
    for args, loaded in ((["status"], ["rich"]), (["status", "--json"], [])):  # rich: the goal's markup
        r = _imported(args, filled)  # within RACY_NS of the writes: checked, answered, not recorded
        assert r.returncode == 0 and r.stderr.split() == loaded, (args, r.stderr)
    before = json.loads(stamp.read_text())["files"]
    _settle(home, TURN_FILES)
    assert "- Total sessions: 1\n" in _imported(["status"], filled).stdout
    after = json.loads(stamp.read_text())["files"]  # recorded: the next status checks nothing
    changed = {Path(p).name for p in after if after[p] != before[p]}
    assert changed == {"index.json", "default.json", "self_model.json"}
    out = _all_same([["status"], ["status", "--json"]], filled)[0].stdout
    assert "(4 tools, 1 heuristics)" in out and "- Total episodes: 1\n" in out


# a hand edit after a kit write: (file, change, is it still valid?); the invalid ones are named by the typer path
EDITS: list[tuple[str, Any, bool]] = [
    ("episodes/index.json", lambda d: d["entries"][0].update(outcome="MAYBE"), False),
    ("episodes/index.json", lambda d: d["entries"][0].update(timestamp="yesterday"), False),
    ("episodes/index.json", lambda d: d["entries"][0].pop("id"), False),
    ("user_models/default.json", lambda d: d.update(trust_score=2), False),
    ("user_models/default.json", lambda d: d["affect_state"].update(valence="high"), False),
    ("self_model.json", lambda d: d.update(total_sessions="many"), False),
    ("self_model.json", lambda d: d.update(last_session="2026-02-30T10:00:00Z"), False),
    ("semantic_rules.json", lambda d: d[0].update(confidence=5), False),
    ("self_model.json", lambda d: d["knowledge_gaps"].append("how the cache expires"), True),  # our validator reads it
    ("self_model.json", lambda d: d.update(total_episodes=7, capabilities={"x": {
        "proficiency": 1, "experience_count": 2, "success_rate": 0.5, "last_refined": "2026-11-27T01:00:00Z"}}), True),
    # (1 is dumped 1.0: the typer path)
    ("self_model.json", lambda d: d.update(last_session="2026-11-27T01:57:53+00:00"), True),  # dumped with a Z
    ("config.json", lambda d: d.update(current_user="ana"), True),  # another user model: the typer path
    ("episodes/index.json", lambda d: d["entries"][0].update(outcome="FAILURE", note=[1]), True),
]


def test_status_catches_a_hand_edit_after_a_kit_write(filled: dict[str, str]) -> None:
    home = Path(filled["SOPHIA_HOME"])
    _stamped(filled)
    _turn(home)
    _settle(home, TURN_FILES)
    assert _imported(["status", "--json"], filled).stderr.split() == []  # checked and recorded after the turn
    for name, change, valid in EDITS:
        kept = (home / name).read_bytes()
        data = json.loads((home / name).read_text())
        change(data)
        (home / name).write_text(json.dumps(data, indent=2))
        for r in _all_same([["status"], ["status", "--json"]], filled, data):
            assert (r.returncode == 0) is valid, (name, r.stderr)
            if not valid:
                assert r.stdout == "" and name in r.stderr, (name, r.stderr)
        (home / name).write_bytes(kept)  # as the kit left it, and a status that has checked it
        _settle(home, (name,))
        assert run_s3(["status", "--json"], filled).returncode == 0
        assert _imported(["status", "--json"], filled).stderr.split() == [], name


def _spots(node: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) in a JSON document."""
    keys = list(node) if isinstance(node, dict) else range(len(node)) if isinstance(node, list) else []
    return [spot for k in keys for spot in [(node, k), *_spots(node[k])]]


def _mutations(doc: Any, rnd: random.Random, n: int) -> list[Any]:
    """``doc`` with one value replaced, one key dropped or one added, ``n`` times (a JSON copy each)."""
    values = [None, True, False, 0, 1, -1, 2, 7, 2**60, 0.0, 0.5, 1.0, 1.5, -0.5, "", "x", "SUCCESS", "EXPERT",
              "2026-11-27T01:57:53Z", "2026-11-27T01:57:53.120000Z", "2026-11-27T01:57:53.000000Z",
              "2026-11-27T01:57:53.12Z", "2026-02-30T00:00:00Z", "2026-11-27T01:57:53+02:00", "2026-11-27T01:57:53",
              "2026-11-27", "0000-01-01T00:00:00Z", [], ["a"], [1], [1.5], {}, {"a": 1}, {"proficiency": 0.5}]
    out = []
    for _ in range(n):
        d = json.loads(json.dumps(doc))
        spots = _spots(d)
        node, key = rnd.choice(spots) if spots else (d, None)
        what = rnd.random()
        if what < 0.15 and isinstance(node, dict):
            del node[key]
        elif what < 0.25 and isinstance(node, dict):
            node[rnd.choice(["extra", "id", "timestamp", "proficiency"])] = rnd.choice(values)
        elif key is not None:
            node[key] = json.loads(json.dumps(rnd.choice(values)))
        out.append(d)
    return out


def test_schema_check_accepts_nothing_pydantic_refuses(tmp_path: Path) -> None:
    """Every file the fast check passes, its model validates; one it passes as exact is its model's dump."""
    from pydantic import TypeAdapter, ValidationError

    from sophia import models
    from sophia.cli.status_check import RULES_LIST, compile_file, custom_fields, schemas
    from sophia.state import init_tree

    init_tree(tmp_path)
    _turn(tmp_path)
    rnd = random.Random(30)
    passed = failed = 0
    for path, entry in schemas(tmp_path).items():
        doc = json.loads(Path(path).read_text())
        model: Any = TypeAdapter(list[models.SemanticRule]) if entry["model"] == RULES_LIST else \
            TypeAdapter(getattr(models, entry["model"]))
        if entry["model"] == "SelfModel":
            doc = model.dump_python(model.validate_python(doc), mode="json")
            doc["capabilities"] = {"docker": {"proficiency": 0.7, "experience_count": 3, "success_rate": 0.5,
                                              "last_refined": "2026-11-27T01:57:53Z"}}
        if entry["model"] == RULES_LIST:
            doc = [{"id": "rule_1", "trigger_concept": "Build", "rule_content": "check the cache", "source": "manual",
                    "confidence": 0.8, "last_validated": None, "created_at": "2026-11-26T12:00:00Z"}]
        custom = {k: doc[k] for k in custom_fields(entry)}
        if entry["model"] != "Config":
            assert compile_file(entry, exact=False, custom=custom)(doc), entry["model"]  # not a check that says no
        for d in _mutations(doc, rnd, 600):
            for exact in (False, True):
                if not compile_file(entry, exact=exact, custom=custom)(d):
                    failed += 1
                    continue
                passed += 1
                try:
                    dumped = model.dump_python(model.validate_python(d), mode="json")
                except ValidationError as exc:
                    raise AssertionError(f"{entry['model']}: the check passed {d!r}") from exc
                if exact:
                    assert json.dumps(dumped) == json.dumps(d), entry["model"]
    assert passed > 1000 and failed > 1000  # both ways, often


def test_dumps_is_what_json_writes() -> None:
    """plain.dumps: json.dumps(indent=2, ensure_ascii=False, default=str) byte for byte, on random documents
    (flat dicts and lists of them, which go through the C encoder, and everything around them)."""
    rnd = random.Random(30)
    scalars: list[Any] = [None, True, False, 0, -7, 2**70, 0.5, -1e300, float("nan"), float("inf"), float("-inf"),
                          "", "x", "}\x00{", "a\nb\"\\", "\x00\x1f\x7f", "ünï ✓ 漢", "\ud800", Path("/p"), (1, "t"), [], {}]

    def doc(depth: int) -> Any:
        kind = rnd.random()
        if depth > 3 or kind < 0.4:
            return rnd.choice(scalars)
        if kind < 0.6:
            return [doc(depth + 1) for _ in range(rnd.randint(0, 4))]
        if kind < 0.75:  # a list of flat dicts, as the stores list
            return [{f"k{j}": rnd.choice(scalars) for j in range(rnd.randint(1, 4))} for _ in range(rnd.randint(1, 4))]
        keys: list[Any] = ["a", "b", "}\x00{", "ü", 1, 2.5, True, None]
        return {rnd.choice(keys): doc(depth + 1) for _ in range(rnd.randint(0, 5))}

    for _ in range(3000):
        d = doc(0)
        assert plain.dumps(d) == json.dumps(d, ensure_ascii=False, default=str, indent=2) + "\n", repr(d)


def test_schema_check_leaves_our_own_validators_to_pydantic() -> None:
    """A field read by a validator of ours (decorated or in its annotation) passes only as last validated; a
    model with a model validator never passes: the schema cannot say what they accept."""
    from typing import Annotated

    from pydantic import AfterValidator, BaseModel, field_validator, model_validator

    from sophia.cli.status_check import _mark_custom, compile_file, custom_fields

    class Fields(BaseModel):
        a: Annotated[int, AfterValidator(lambda v: v)] = 0
        b: int = 0
        c: list[str] = []

        @field_validator("c")
        @classmethod
        def _c(cls, v: list[str]) -> list[str]:
            return v

    class Whole(BaseModel):
        b: int = 0

        @model_validator(mode="before")
        @classmethod
        def _all(cls, data: Any) -> Any:
            return data

    schema = Fields.model_json_schema()
    _mark_custom(Fields, schema)
    entry = {"model": "Fields", "schema": schema}
    assert sorted(custom_fields(entry)) == ["a", "c"]
    check = compile_file(entry, exact=False, custom={"c": ["x"]})
    assert check({"b": 1}) and check({"b": 1, "c": ["x"]})
    assert not check({"a": 1}) and not check({"c": ["y"]}) and not check({"b": "1"})
    schema = Whole.model_json_schema()
    _mark_custom(Whole, schema)
    assert not compile_file({"model": "Whole", "schema": schema}, exact=False, custom={})({"b": 1})


# ---- s3 list rules: what the last list printed, kept under the rules file's and the code's stamps (cli/list_cache.py)

PLAIN = ["Use docker compose for services", "Run the tests with make check", "Pin the node version in CI"]


@pytest.fixture(scope="module")
def plain_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The home of ``plain_rules``, made once for this file (each test gets its own copy)."""
    root = tmp_path_factory.mktemp("plain")
    yield made_home(root, *[["learn", t] for t in PLAIN])
    stop_embedding_services(root)


@pytest.fixture
def plain_rules(s3_env: dict[str, str], plain_home: Path) -> dict[str, str]:
    """Rules whose lines rich prints as they are (the text output is kept), dated a minute back."""
    copy_home(plain_home, s3_env)
    _settle(Path(s3_env["SOPHIA_HOME"]))
    return s3_env


def _kept(env: dict[str, str], json_out: bool = False) -> Path:
    from sophia import paths

    return paths.list_output_path("rules", json_out, Path(env["SOPHIA_HOME"]))


def test_list_keeps_its_output_and_prints_it_next_time(plain_rules: dict[str, str]) -> None:
    for args, json_out in ((["list", "rules"], False), (["list", "rules", "--json"], True)):
        first, ref = run_s3(args, plain_rules), via_typer(args, plain_rules)
        assert first.returncode == 0 and first.stdout == ref.stdout and "Pin the node version" in first.stdout
        kept = _kept(plain_rules, json_out)
        head, body = kept.read_text().split("\n", 1)
        assert body == first.stdout
        # the next list prints what is kept (shown here by a kept body the file does not hold), not the file
        kept.write_text(head + "\n" + body.replace("Pin the node version", "Pin THE KEPT version"))
        assert "Pin THE KEPT version" in run_s3(args, plain_rules).stdout


def test_list_reads_the_rules_again_after_any_change(plain_rules: dict[str, str]) -> None:
    import os

    home = Path(plain_rules["SOPHIA_HOME"])
    assert run_s3(["list", "rules"], plain_rules).returncode == 0 and _kept(plain_rules).is_file()
    # a writer (s3 learn) removes what is kept: a forgotten or changed rule stays nowhere else
    assert run_s3(["learn", "Cache the wheels between CI runs"], plain_rules).returncode == 0
    assert not _kept(plain_rules).exists()
    r = run_s3(["list", "rules"], plain_rules)
    assert "## Rules: 4" in r.stdout and "Cache the wheels" in r.stdout
    assert not _kept(plain_rules).exists()  # the file was written just now: too recent to key anything on
    # a hand edit in place (same inode), dated back: a new mtime, so another key
    _settle(home)
    assert run_s3(["list", "rules"], plain_rules).returncode == 0 and _kept(plain_rules).is_file()
    rules = home / "semantic_rules.json"
    text = rules.read_text()
    with open(rules, "r+") as f:
        f.write(text.replace("Cache the wheels", "Cache the WHEELS"))
    old = os.stat(rules).st_mtime - 120
    os.utime(rules, (old, old))
    r = run_s3(["list", "rules"], plain_rules)
    assert "Cache the WHEELS" in r.stdout and r.stdout == via_typer(["list", "rules"], plain_rules).stdout


def test_list_keeps_no_text_rich_would_change(filled: dict[str, str]) -> None:
    """Lines rich prints otherwise ("[bold]...") go through rich: that text is not kept; the JSON is."""
    _settle(Path(filled["SOPHIA_HOME"]))
    for args in (["list", "rules"], ["list", "rules", "--json"]):
        assert run_s3(args, filled).stdout == via_typer(args, filled).stdout
    assert not _kept(filled).exists() and _kept(filled, json_out=True).is_file()
    assert run_s3(["list", "rules"], filled).stdout == via_typer(["list", "rules"], filled).stdout


def test_list_with_a_damaged_kept_output_reads_the_file(plain_rules: dict[str, str]) -> None:
    ref = run_s3(["list", "rules"], plain_rules).stdout
    _kept(plain_rules).write_bytes(b"\xff\xfe not utf-8\n")
    assert run_s3(["list", "rules"], plain_rules).stdout == ref
    _kept(plain_rules).unlink()
    _kept(plain_rules).mkdir()  # not even a file: still listed
    assert run_s3(["list", "rules"], plain_rules).stdout == ref


def test_list_key_follows_the_code_that_prints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An upgraded or edited kit (any module of list_cache.CODE with another stamp) prints from the file again."""
    import os

    from sophia.cli import list_cache

    src = tmp_path / "semantic_rules.json"
    src.write_text("[]")
    lib = tmp_path / "lib"
    for c in list_cache.CODE:
        (lib / c).parent.mkdir(parents=True, exist_ok=True)
        (lib / c).write_text("# code\n")
    monkeypatch.setattr(list_cache, "LIB", lib)
    before = list_cache.key(src)
    assert before is not None and list_cache.key(src) == before
    for c in list_cache.CODE:
        st = os.stat(lib / c)
        os.utime(lib / c, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
        assert list_cache.key(src) != before, c
        before = list_cache.key(src)
    (lib / list_cache.CODE[0]).unlink()
    assert list_cache.key(src) is None


def test_list_keeps_nothing_while_a_writer_holds_the_rules(plain_rules: dict[str, str]) -> None:
    """A writer removes what is kept once it is done, under the rules' lock: a list meanwhile keeps nothing
    (else a list that read the old file could keep it after the writer's removal)."""
    import os

    from sophia import paths
    from sophia.locking import lock_path_for, try_flock

    fd = try_flock(lock_path_for(paths.rules_path(Path(plain_rules["SOPHIA_HOME"]))))
    assert fd is not None
    try:
        r = run_s3(["list", "rules"], plain_rules)
        assert r.returncode == 0 and "## Rules: 3" in r.stdout and not _kept(plain_rules).exists()
    finally:
        os.close(fd)
    assert run_s3(["list", "rules"], plain_rules).stdout == r.stdout and _kept(plain_rules).is_file()
