"""s3 learn (concurrency-safe), s3 list, s3 forget."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import LIB, run_s3
from metahelp import items, rules, standard_episodes


@pytest.mark.usefixtures("inited")
def test_learn_seed_output_and_list(s3_env: dict[str, str]) -> None:
    r = run_s3(["learn", "Always run database migrations in a transaction so they can be rolled back",
                "--domain", "Database"], s3_env)
    assert r.returncode == 0, r.stderr
    for line in ("## Insight Captured", "**Domain:** Database",
                 "**Rule:** Always run database migrations in a transaction so they can be rolled back",
                 "Current semantic rules count: 1"):
        assert line in r.stdout
    listed = json.loads(run_s3(["list", "rules", "--json"], s3_env).stdout)
    assert len(listed) == 1 and listed[0]["source"] == "manual" and listed[0]["confidence"] == 0.8
    assert listed[0]["id"].startswith("rule_") and listed[0]["trigger_concept"] == "Database"
    # the same insight again is a validation, not a second rule
    out = json.loads(run_s3(["learn", "always run database migrations in a transaction so they can be rolled back.",
                             "--json"], s3_env).stdout)
    assert out["status"] == "merged" and out["total_rules"] == 1 and out["rule"]["validation_count"] == 1


@pytest.mark.usefixtures("inited")
def test_learn_redacts_and_rejects_empty(s3_env: dict[str, str], sophia_home: Path) -> None:
    run_s3(["learn", "Deploy with API_KEY=supersecretvalue123 exported"], s3_env)
    assert "supersecretvalue123" not in (sophia_home / "semantic_rules.json").read_text()
    r = run_s3(["learn", "   "], s3_env)
    assert r.returncode == 2 and "empty" in r.stderr  # bad input


def test_learn_before_init_says_what_to_do(s3_env: dict[str, str]) -> None:
    r = run_s3(["learn", "x"], s3_env)
    assert r.returncode == 1 and "s3 init" in r.stderr


@pytest.mark.usefixtures("inited")
def test_concurrent_learns_keep_every_rule(s3_env: dict[str, str], sophia_home: Path) -> None:
    """8 processes x 25 learns under the lock: exactly 200 rules, the file always valid JSON."""
    code = (
        "import sys, random\n"
        f"sys.path.insert(0, {str(LIB)!r})\n"
        "from sophia.memory.manage import learn\n"
        "p = int(sys.argv[1]); rnd = random.Random(p)\n"
        "words = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike'.split()\n"
        "for i in range(25):\n"
        "    learn(f'proc{p} item{i} ' + ' '.join(rnd.sample(words, 6)) + f' token{p}x{i}', 'Stress')\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(p)], env=s3_env) for p in range(8)]
    assert all(p.wait(timeout=240) == 0 for p in procs)
    rs = rules(sophia_home)
    assert len(rs) == 200 and len({r["id"] for r in rs}) == 200


@pytest.mark.usefixtures("inited")
def test_list_kinds(s3_env: dict[str, str], sophia_home: Path) -> None:
    standard_episodes(sophia_home)
    ext = {"atomic_facts": [{"fact": "The user uses vim"}], "foresight": [
        {"description": "User on holiday", "start_time": "2026-01-01", "end_time": "2026-01-10"}],
        "profile": [{"fact": "User is a developer", "kind": "stable_trait"}]}
    assert run_s3(["apply", "extraction", "-"], s3_env, input=json.dumps(ext)).returncode == 0
    run_s3(["apply", "reflection", "-"], s3_env, input=json.dumps({"knowledge_gaps_identified": ["Rust"]}))
    for kind, n in [("episodes", 4), ("facts", 1), ("foresight", 1), ("profile", 1), ("scenes", 1), ("gaps", 1),
                    ("rules", 0)]:
        r = run_s3(["list", kind, "--json"], s3_env)
        assert r.returncode == 0, r.stderr
        data = json.loads(r.stdout)
        assert isinstance(data, list) and len(data) == n, (kind, data)
    assert [g["text"] for g in json.loads(run_s3(["list", "gaps", "--json"], s3_env).stdout)] == ["Rust"]
    r = run_s3(["list", "foresight"], s3_env)
    assert "User on holiday" in r.stdout and "valid 2026-01-01" in r.stdout
    r = run_s3(["list", "nonsense"], s3_env)
    assert r.returncode == 2 and "unknown kind" in r.stderr


@pytest.mark.usefixtures("inited")
def test_forget_each_kind(s3_env: dict[str, str], sophia_home: Path) -> None:
    standard_episodes(sophia_home)
    rid = json.loads(run_s3(["learn", "Pin base images", "--json"], s3_env).stdout)["rule"]["id"]
    ext = {"atomic_facts": [{"fact": "The user uses vim"}, {"fact": "The user uses tmux"}],
           "links": [{"source_id": "atomic_facts.0", "target_id": "atomic_facts.1", "relation": "same topic"}]}
    run_s3(["apply", "extraction", "-"], s3_env, input=json.dumps(ext))
    vim = next(f for f in items(sophia_home, "facts") if "vim" in f["text"])
    r = run_s3(["forget", vim["id"], "--json"], s3_env)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out == {"removed": vim["id"], "from": "memory/facts.json", "text": "The user uses vim"}
    [tmux] = items(sophia_home, "facts")
    assert tmux["links"] == []  # no dangling link left behind
    r = run_s3(["forget", rid], s3_env)
    assert r.returncode == 0 and "Pin base images" in r.stdout and rules(sophia_home) == []
    r = run_s3(["forget", "ep_a"], s3_env)
    assert r.returncode == 0 and "episodes/ep_a.json" in r.stdout
    assert not (sophia_home / "episodes" / "ep_a.json").exists()
    index = json.loads((sophia_home / "episodes" / "index.json").read_text())
    assert "ep_a" not in {e["id"] for e in index["entries"]} and index["total_episodes"] == 3
    r = run_s3(["forget", "fact_nope"], s3_env)
    assert r.returncode == 2 and "no memory with id 'fact_nope'" in r.stderr  # bad input: exit 2
    r = run_s3(["forget", "../../etc/passwd"], s3_env)
    assert r.returncode == 2 and "no memory" in r.stderr


# ---- issue 13.6: the domain guess names a real topic, and a rule's text has a cap


@pytest.mark.usefixtures("inited")
def test_learn_without_domain_guesses_a_real_topic_or_general(s3_env: dict[str, str]) -> None:
    """Not the stemmed first word ("Alway", "Instead", "Broken") but a named technology or topic."""
    cases = {
        "Always rebase feature branches with git before opening a pull request": "Git",
        "Instead of sleeping in tests, wait for the condition with a timeout": "Testing",
        "Broken promises to the user erode trust; say what is not done": "General",
    }
    for insight, want in cases.items():
        r = run_s3(["learn", insight, "--json"], s3_env)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["rule"]["trigger_concept"] == want, insight
    listed = run_s3(["list", "rules"], s3_env).stdout
    assert "[Git]" in listed and "[Testing]" in listed and "[General]" in listed
    for fragment in ("Alway", "Instead", "Broken"):
        assert f"[{fragment}]" not in listed


def test_domain_guess_is_a_vocabulary_name_or_general() -> None:
    from sophia.hooks.words import STOPWORDS
    from sophia.memory.domains import VOCABULARY, guess_domain

    words = [w for ws in VOCABULARY.values() for w in ws]
    assert len(words) == len(set(words)), "a word names one domain only"
    assert not set(words) & STOPWORDS
    assert guess_domain("Run the python migrations inside a database transaction") == "Database"
    assert guess_domain("Pin the Docker base image tag in every Dockerfile") == "Docker"
    assert guess_domain("Use pytest fixtures, not setup code copied into each test") == "Testing"
    assert guess_domain("Quote every variable in bash scripts") == "Shell"
    assert guess_domain("Never") == guess_domain("") == guess_domain("Always do the right thing") == "General"
    sentences = ["Always check twice", "Instead, ask first", "Broken things get fixed", "Don't go there",
                 "Use kubectl rollout undo to roll back a bad deploy", "C++ templates bloat compile times",
                 "Node.js streams need backpressure"]
    for s in sentences:
        d = guess_domain(s)
        assert d == "General" or d in VOCABULARY, (s, d)
        assert d.lower() not in STOPWORDS
    assert guess_domain("C++ templates bloat compile times") == "C/C++"
    assert guess_domain("Node.js streams need backpressure") == "JavaScript"


@pytest.mark.usefixtures("inited")
def test_learn_caps_the_insight_and_domain(s3_env: dict[str, str], sophia_home: Path) -> None:
    from sophia.kinds import MAX_DOMAIN_CHARS, MAX_RULE_CHARS

    huge = "Always keep the build green. " * 4000  # ~115 KB, as in the issue
    r = run_s3(["learn", huge], s3_env)
    assert r.returncode == 2 and f"at most {MAX_RULE_CHARS:,} characters" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr) < 400
    assert rules(sophia_home) == []
    r = run_s3(["learn", "Keep it short", "--domain", "D" * (MAX_DOMAIN_CHARS + 1)], s3_env)
    assert r.returncode == 2 and f"at most {MAX_DOMAIN_CHARS:,} characters" in r.stderr, r.stderr
    exact = ("x" * 9 + " ") * (MAX_RULE_CHARS // 10)
    r = run_s3(["learn", exact.strip() + "y", "--domain", "D" * MAX_DOMAIN_CHARS, "--json"], s3_env)
    assert r.returncode == 0, r.stderr
    assert len(rules(sophia_home)[0]["rule_content"]) == MAX_RULE_CHARS


@pytest.mark.usefixtures("inited")
def test_apply_obeys_the_same_rule_cap(s3_env: dict[str, str], sophia_home: Path) -> None:
    from sophia.kinds import MAX_DOMAIN_CHARS, MAX_RULE_CHARS

    long_rule = "r" * (MAX_RULE_CHARS + 1)
    cases = [
        ("reflection", {"heuristics": [{"trigger_concept": "Git", "rule_content": long_rule}]},
         "heuristics.0.rule_content"),
        ("reflection", {"heuristics": [{"trigger_concept": "G" * (MAX_DOMAIN_CHARS + 1), "rule_content": "ok"}]},
         "heuristics.0.trigger_concept"),
        ("reflection", {"knowledge_gaps_identified": ["g" * (MAX_RULE_CHARS + 1)]}, "knowledge_gaps_identified.0"),
        ("reflection", {"capability_updates": [{"domain": "C" * (MAX_DOMAIN_CHARS + 1)}]},
         "capability_updates.0.domain"),
        ("consolidation", {"rules_created": [{"trigger_concept": "Git", "rule_content": long_rule}]},
         "rules_created.0.rule_content"),
    ]
    for kind, result, field in cases:
        r = run_s3(["apply", kind, "-"], s3_env, input=json.dumps(result))
        assert r.returncode != 0 and field in r.stderr and "at most" in r.stderr, (field, r.stderr)
    assert rules(sophia_home) == []
    ok = {"heuristics": [{"trigger_concept": "Git", "rule_content": "r" * MAX_RULE_CHARS}]}
    r = run_s3(["apply", "reflection", "-"], s3_env, input=json.dumps(ok))
    assert r.returncode == 0, r.stderr
