"""What applying each result does to the stores (in-process, against real files and locks)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import run_s3
from metahelp import items, load_fixture, make_episode, rules, seed_episodes, self_model, standard_episodes
from sophia.contracts import ContractError
from sophia.memory.apply import apply_result
from sophia.state import init_tree

T0 = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)


@pytest.fixture
def home(sophia_home: Path) -> Path:
    init_tree(sophia_home)
    standard_episodes(sophia_home)
    return sophia_home


def apply(kind: str, data: Any, home: Path, at: datetime = T0) -> dict[str, Any]:
    return apply_result(kind, data, home, at=at)


# ---------------------------------------------------------------- reflection


def test_docker_plus_006_twice_is_056_and_each_heuristic_once(s3_env: dict[str, str], home: Path) -> None:
    """The issue's done-when check, through the real CLI, from proficiency 0.5."""
    sm = self_model(home)
    sm["capabilities"] = {"Docker": {"proficiency": 0.5, "experience_count": 3, "success_rate": 0.5,
                                     "last_refined": "2026-01-01T00:00:00Z"}}
    (home / "self_model.json").write_text(json.dumps(sm))
    result = {
        "episodes_analyzed": ["ep_a"],
        "heuristics": [
            {"trigger_concept": "Docker Deployment", "rule_content": "Always check daemon status before deploying",
             "confidence": 0.85, "source_episodes": ["ep_a"]},
            {"trigger_concept": "API Debugging", "rule_content": "When debugging 500 errors, check logs before code",
             "confidence": 0.72, "source_episodes": ["ep_c1"]},
        ],
        "capability_updates": [{"domain": "Docker", "proficiency_delta": 0.06, "reason": "2 deployments"}],
        "knowledge_gaps_identified": ["Kubernetes pod networking"],
    }
    for _ in range(2):
        r = run_s3(["apply", "reflection", "-"], s3_env, input=json.dumps(result))
        assert r.returncode == 0, r.stderr
    assert "proficiency 50% → 56% (+6%)" not in r.stdout  # the second run says it changed nothing
    assert "nothing changed" in r.stdout
    assert self_model(home)["capabilities"]["Docker"]["proficiency"] == pytest.approx(0.56, abs=1e-9)
    contents = [x["rule_content"] for x in rules(home)]
    assert sorted(contents) == sorted(h["rule_content"] for h in result["heuristics"])
    assert [g["text"] for g in self_model(home)["knowledge_gaps"]] == ["Kubernetes pod networking"]
    listed = json.loads(run_s3(["list", "rules", "--json"], s3_env).stdout)
    assert len(listed) == 2


def test_reflection_text_output_follows_seed_format(s3_env: dict[str, str], home: Path) -> None:
    r = run_s3(["apply", "reflection", str(Path(__file__).parent / "fixtures/contracts/reflection/valid/seed_13_2.json")],
               s3_env)
    assert r.returncode == 0, r.stderr
    for line in ("## Reflection Complete", "### Episodes Analyzed: 1", "- ep_a: Deploy the app with Docker [SUCCESS]",
                 "### Heuristics Extracted: 1", "**Docker Deployment**", "Confidence: 0.85",
                 "- Docker: proficiency 50% → 56% (+6%)", "### Knowledge Gaps Identified",
                 "- Kubernetes pod networking"):
        assert line in r.stdout, (line, r.stdout)


def test_near_duplicate_heuristic_merges_with_validation(home: Path) -> None:
    h = {"trigger_concept": "Docker Deployment", "rule_content": "Always check the Docker daemon status before deploying",
         "confidence": 0.8, "source_episodes": ["ep_a"]}
    apply("reflection", {"heuristics": [h]}, home)
    h2 = dict(h, rule_content="Always check Docker daemon status before deploying.", source_episodes=["ep_c1"])
    out = apply("reflection", {"heuristics": [h2]}, home, T0 + timedelta(days=1))
    assert out["changes"]["rules_merged"] and not out["changes"]["rules_added"]
    [rule] = rules(home)
    assert rule["validation_count"] == 1
    assert rule["confidence"] == pytest.approx(0.85)
    assert rule["last_validated"] == "2026-03-03T10:00:00Z"
    assert rule["source_episodes"] == ["ep_a", "ep_c1"]
    # opposite meaning is NOT a duplicate
    h3 = dict(h, rule_content="Never check the Docker daemon status before deploying")
    apply("reflection", {"heuristics": [h3]}, home)
    assert len(rules(home)) == 2


def test_seed_5_3_capability_rules_with_outcomes(home: Path) -> None:
    cu = {"domain": "Python", "reason": "three tasks",
          "outcomes": [{"success": True, "complexity": 0.5}, {"success": True, "complexity": 1.0},
                       {"success": False, "complexity": 0.5}]}
    apply("reflection", {"capability_updates": [cu]}, home)
    rec = self_model(home)["capabilities"]["Python"]
    # proficiency 0.5 +0.025 +0.05 -0.01 = 0.565; success rate EMA from 0.5: .55, .595, .5355
    assert rec["proficiency"] == pytest.approx(0.565)
    assert rec["success_rate"] == pytest.approx(0.5355)
    assert rec["experience_count"] == 3
    # case-insensitive domain, clamping at 1.0
    apply("reflection", {"capability_updates": [{"domain": "python", "proficiency_delta": 0.9}]}, home)
    caps = self_model(home)["capabilities"]
    assert list(caps) == ["Python"] and caps["Python"]["proficiency"] == 1.0
    apply("reflection", {"capability_updates": [{"domain": "Go", "proficiency_delta": -0.9}]}, home)
    assert self_model(home)["capabilities"]["Go"]["proficiency"] == 0.0
    # each applied change is in the history the viewer charts; the same result again adds nothing
    apply("reflection", {"capability_updates": [{"domain": "Go", "proficiency_delta": -0.9}]}, home)
    hist = [json.loads(line) for line in (home / "logs" / "capabilities.jsonl").read_text().splitlines()]
    assert [(h["domain"], h["proficiency"]) for h in hist] == [("Python", 0.565), ("Python", 1.0), ("Go", 0.0)]
    assert all(h["at"] and h["digest"] and h["experience_count"] >= 0 for h in hist)


def test_gaps_and_goals_are_deduplicated(home: Path) -> None:
    apply("reflection", {"knowledge_gaps_identified": ["Kubernetes pod networking", "GraphQL schema design"]}, home)
    apply("reflection", {"knowledge_gaps_identified": ["kubernetes pod networking.", "Rust lifetimes"],
                         "suggested_goals": ["Learn Rust lifetimes"]}, home)
    sm = self_model(home)
    assert [g["text"] for g in sm["knowledge_gaps"]] == ["Kubernetes pod networking", "GraphQL schema design",
                                                         "Rust lifetimes"]
    assert sm["suggested_goals"] == ["Learn Rust lifetimes"]
    assert sm["last_reflection"] is not None


def test_reflection_marks_episodes_and_stores_links_on_both_ends(home: Path) -> None:
    out = apply("reflection", {"episodes_analyzed": ["ep_a", "ep_gone"], "heuristics": [
        {"trigger_concept": "Docker", "rule_content": "Pin base image digests", "confidence": 0.7}]}, home)
    assert out["changes"]["episodes_unknown"] == ["ep_gone"]
    ep = json.loads((home / "episodes" / "ep_a.json").read_text())
    assert ep["reflected"] is True
    rid = rules(home)[0]["id"]
    apply("reflection", {"links": [{"source_id": rid, "target_id": "ep_a", "relation": "elaborates"}]}, home)
    assert rules(home)[0]["links"] == [{"id": "ep_a", "relation": "elaborates"}]
    ep = json.loads((home / "episodes" / "ep_a.json").read_text())
    assert ep["links"] == [{"id": rid, "relation": "elaborates"}]


def test_a_reflections_gaps_take_the_project_of_the_episodes_it_analysed(home: Path) -> None:
    seed_episodes(home, [make_episode("ep_p1", "Fix the build", project="/w/api"),
                         make_episode("ep_p2", "Fix the tests", project="/w/api"),
                         make_episode("ep_q", "Fix the docs", project="/w/site")])
    apply("reflection", {"episodes_analyzed": ["ep_p1", "ep_p2", "ep_unknown"],
                         "knowledge_gaps_identified": ["How the api is packaged"]}, home)
    apply("reflection", {"episodes_analyzed": ["ep_p1", "ep_q"], "knowledge_gaps_identified": ["Two projects"]}, home)
    apply("reflection", {"knowledge_gaps_identified": ["No episode at all"]}, home)
    by_text = {g["text"]: g for g in self_model(home)["knowledge_gaps"]}
    api = by_text["How the api is packaged"]
    assert (api["project"], api["source"], api["source_ids"]) == ("/w/api", "reflection", ["ep_p1", "ep_p2", "ep_unknown"])
    assert api["id"].startswith("gap_") and api["opened_at"] == "2026-03-02T10:00:00Z" and api["closed_at"] is None
    # episodes of two projects, or none: the gap has no project and is not marked global (unscoped)
    assert [(by_text[t]["project"], by_text[t]["is_global"]) for t in ("Two projects", "No episode at all")] == \
        [(None, False), (None, False)]
    # the same text in another scope is another gap; in the same scope it is not added twice
    apply("reflection", {"episodes_analyzed": ["ep_q"], "knowledge_gaps_identified": ["How the api is packaged"]}, home)
    apply("reflection", {"episodes_analyzed": ["ep_q"], "knowledge_gaps_identified": ["how the API is packaged."]}, home)
    same = [g["project"] for g in self_model(home)["knowledge_gaps"] if g["text"].lower().startswith("how the api")]
    assert same == ["/w/api", "/w/site"]


def test_secrets_in_results_are_redacted_before_storage(home: Path) -> None:
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    apply("reflection", {"heuristics": [{"trigger_concept": "GitHub", "rule_content": f"Use token {secret} for CI"}],
                         "knowledge_gaps_identified": [f"why {secret} expired"]}, home)
    apply("extraction", {"atomic_facts": [{"fact": f"The CI token is {secret}"}]}, home)
    for p in home.rglob("*.json"):
        assert secret not in p.read_text(), p


# ---------------------------------------------------------------- consolidation


def test_consolidation_rules_episodes_and_decay(home: Path) -> None:
    old = {"id": "rule_old", "trigger_concept": "Git", "rule_content": "Rebase before merging", "source": "manual",
           "source_episodes": [], "confidence": 0.8, "last_validated": "2025-12-02T10:00:00Z",
           "validation_count": 1, "created_at": "2025-11-01T10:00:00Z"}
    (home / "semantic_rules.json").write_text(json.dumps([old]))
    out = apply("consolidation", load_fixture("contracts/consolidation/valid/seed_15_3.json"), home)
    ch = out["changes"]
    assert ch["episodes_consolidated"] == ["ep_c1", "ep_c2", "ep_c3"]
    for eid in ("ep_c1", "ep_c2", "ep_c3"):
        ep = json.loads((home / "episodes" / f"{eid}.json").read_text())
        assert ep["consolidated"] is True and ep["consolidated_at"]
    index = json.loads((home / "episodes" / "index.json").read_text())
    flags = {e["id"]: e["consolidated"] for e in index["entries"]}
    assert flags == {"ep_a": False, "ep_c1": True, "ep_c2": True, "ep_c3": True}
    by_id = {r["id"]: r for r in rules(home)}
    # 90 days without validation: 0.8 * 0.95 ** 3
    assert by_id["rule_old"]["confidence"] == pytest.approx(round(0.8 * 0.95 ** 3, 4))
    new = [r for r in by_id.values() if r["source"] == "consolidation"]
    assert len(new) == 1 and new[0]["source_episodes"] == ["ep_c1", "ep_c2", "ep_c3"]
    # decay is a function of time: another consolidation the same day does not compound it
    apply("consolidation", {"clusters_found": 0}, home)
    assert {r["id"]: r for r in rules(home)}["rule_old"]["confidence"] == pytest.approx(round(0.8 * 0.95 ** 3, 4))
    # and validation resets it
    apply("reflection", {"heuristics": [{"trigger_concept": "Git", "rule_content": "Rebase before merging",
                                          "confidence": 0.5}]}, home)
    assert {r["id"]: r for r in rules(home)}["rule_old"]["confidence"] == pytest.approx(round(0.8 * 0.95 ** 3, 4) + 0.05)


def test_prospective_facts_turn_historical_on_digest(home: Path) -> None:
    apply("extraction", {"observed_at": "2026-03-01T00:00:00Z", "atomic_facts": [
        {"fact": "The user will take the AWS exam", "event_time": "2026-03-20"},
        {"fact": "The user will retire", "event_time": "2040-01-01"}]}, home)
    facts = {f["text"]: f for f in items(home, "facts")}
    assert {f["temporality"] for f in facts.values()} == {"prospective"}
    out = apply("reflection", {"knowledge_gaps_identified": []}, home, at=datetime(2026, 4, 1, tzinfo=UTC))
    assert len(out["changes"]["facts_now_historical"]) == 1
    facts = {f["text"]: f for f in items(home, "facts")}
    assert facts["The user will take the AWS exam"]["temporality"] == "historical"
    assert facts["The user will retire"]["temporality"] == "prospective"


# ---------------------------------------------------------------- memory


def test_memory_result_bumps_access_counts_once(home: Path) -> None:
    apply("extraction", {"atomic_facts": [{"fact": "The user prefers pytest"}]}, home)
    fid = items(home, "facts")[0]["id"]
    res = {"query": "test runner", "matches": [{"memory_id": fid, "relevance_score": 0.9},
                                                {"episode_id": "ep_a", "relevance_score": 0.4, "verified": False}],
           "rejected": ["ep_a"], "search_method": "agentic"}
    for _ in range(2):
        apply("memory", res, home)
    fact = items(home, "facts")[0]
    assert fact["meta"]["access_count"] == 1 and fact["meta"]["verified_count"] == 1
    ep = json.loads((home / "episodes" / "ep_a.json").read_text())
    assert ep["access_count"] == 1 and "verified_count" not in ep
    log = (home / "memory" / "retrievals.jsonl").read_text().splitlines()
    assert len(log) == 1 and json.loads(log[0])["rejected"] == ["ep_a"]
    apply("memory", {**res, "query": "test runner and CI", "sub_queries": ["test runner", "CI provider"]}, home)
    log = (home / "memory" / "retrievals.jsonl").read_text().splitlines()
    assert json.loads(log[-1])["sub_queries"] == ["test runner", "CI provider"]


# ---------------------------------------------------------------- extraction


def test_extraction_stores_every_kind(home: Path) -> None:
    out = apply("extraction", load_fixture("contracts/extraction/valid/full.json"), home)
    ch = out["changes"]
    facts = items(home, "facts")
    assert {f["text"]: f["event_time"] for f in facts} == {
        "The user went to Beijing": "2026-02-25T00:00:00Z", "The user will start a new job": "2026-04-01T00:00:00Z"}
    assert all(f["timestamp"] == "2026-03-02T10:00:00Z" and f["source_ids"] == ["ep_c1"] for f in facts)
    [fs] = items(home, "foresight")
    assert fs["valid_from"] == "2026-03-10T00:00:00Z" and fs["valid_until"] == "2026-03-24T00:00:00Z"
    assert fs["meta"]["evidence"] and fs["meta"]["duration_days"] == 14
    [proc] = items(home, "procedures")
    assert proc["type"] == "procedure"
    assert proc["text"] == "Release: Run tests -> Bump version -> Tag -> Push"
    assert proc["meta"]["procedure_steps"] == ["Run tests", "Bump version", "Tag", "Push"]
    [causal] = items(home, "causal")
    assert causal["meta"]["cause"] == "flaky network" and causal["meta"]["effect"] == "CI timeouts"
    prof = {p["text"]: p for p in items(home, "profile")}
    assert prof["User has a cold"]["valid_until"] == "2026-03-09T00:00:00Z"
    assert prof["User has a cold"]["meta"]["stability"] == "transient"
    assert prof["User works as a data engineer"]["meta"]["kind"] == "stable_trait"
    # links on both ends (P2-1), including to the episode
    beijing = next(f for f in facts if "Beijing" in f["text"])
    assert beijing["links"] == [{"id": fs["id"], "relation": "same topic"}]
    assert fs["links"] == [{"id": beijing["id"], "relation": "same topic"}]
    ep = json.loads((home / "episodes" / "ep_c1.json").read_text())
    assert {"id": proc["id"], "relation": "elaborates"} in ep["links"]
    assert ep["narrative"].startswith("The user plans")
    assert proc["links"] == [{"id": "ep_c1", "relation": "elaborates"}]
    # scene + memcell
    assert ch["scene_id"] and all(f["scene_id"] == ch["scene_id"] for f in facts)
    [mc] = items(home, "memcells")
    assert mc["type"] == "memcell" and all(f["memcell_id"] == mc["id"] for f in facts)


def test_profile_promoted_after_three_sightings_over_seven_days(home: Path) -> None:
    def see(day: int, **kw: Any) -> dict[str, Any]:
        when = (T0 + timedelta(days=day)).strftime("%Y-%m-%dT%H:%M:%SZ")
        return apply("extraction", {"observed_at": when, "profile": [dict({"fact": "User prefers tabs",
                                                                            "kind": "preference"}, **kw)]}, home)

    see(0)
    see(1)
    assert items(home, "profile")[0]["meta"]["stability"] == "transient"
    out = see(2)  # 3 sightings but over 2 days: still transient
    assert out["changes"]["profile"]["promoted"] == []
    out = see(8)
    assert out["changes"]["profile"]["promoted"] == [items(home, "profile")[0]["id"]]
    p = items(home, "profile")[0]
    assert p["meta"]["stability"] == "stable" and len(p["meta"]["sightings"]) == 4
    assert p["meta"]["first_seen"] == "2026-03-02T10:00:00Z" and p["meta"]["last_confirmed"] == "2026-03-10T10:00:00Z"
    # an explicit time makes a fact transient with an end
    see(9, valid_until="2026-04-01")
    p = items(home, "profile")[0]
    assert p["meta"]["stability"] == "transient" and p["valid_until"] == "2026-04-01T00:00:00Z"


def test_conflict_in_scene_resolved_by_recency(home: Path) -> None:
    apply("extraction", {"observed_at": "2026-01-05T00:00:00Z", "episode": "The user talked about where they live",
                         "atomic_facts": [{"fact": "The user lives in Paris", "event_time": "2026-01-01"},
                                          {"fact": "The user drinks coffee every morning"}]}, home)
    apply("extraction", {"observed_at": "2026-01-08T00:00:00Z", "episode": "The user talked about where they live now",
                         "atomic_facts": [{"fact": "The user lives in Berlin", "event_time": "2026-01-07"},
                                          {"fact": "The user does not drink coffee every morning"}]}, home)
    facts = {f["text"]: f for f in items(home, "facts")}
    assert len({f["scene_id"] for f in facts.values()}) == 1
    paris, berlin = facts["The user lives in Paris"], facts["The user lives in Berlin"]
    assert paris["meta"]["superseded_by"] == berlin["id"]
    assert paris["valid_until"] == "2026-01-07T00:00:00Z"
    assert "superseded_by" not in berlin["meta"]
    coffee = facts["The user drinks coffee every morning"]
    assert coffee["meta"]["superseded_by"] == facts["The user does not drink coffee every morning"]["id"]
    records = [json.loads(line) for line in (home / "memory" / "conflicts.jsonl").read_text().splitlines()]
    assert {(r["signal"], r["superseded_id"]) for r in records} == {
        ("same_subject_different_value", paris["id"]), ("negation", coffee["id"])}
    assert all(r["resolution"] == "recency" for r in records)


def test_no_conflict_across_scenes_or_for_unrelated_facts(home: Path) -> None:
    apply("extraction", {"observed_at": "2026-01-05T00:00:00Z", "episode": "Gardening tomatoes basil soil compost",
                         "atomic_facts": [{"fact": "The user lives in Paris"}]}, home)
    apply("extraction", {"observed_at": "2026-01-06T00:00:00Z", "episode": "Rust compiler lifetimes borrow checker",
                         "atomic_facts": [{"fact": "The user lives in Berlin"}, {"fact": "The user likes Rust"}]}, home)
    facts = items(home, "facts")
    assert len({f["scene_id"] for f in facts}) == 2
    assert not any((f.get("meta") or {}).get("superseded_by") for f in facts)
    assert not (home / "memory" / "conflicts.jsonl").exists()


def test_invalid_extraction_changes_nothing_even_late(home: Path) -> None:
    """The link check runs after every item is built, but still before anything is written."""
    from metahelp import snapshot

    before = snapshot(home)
    with pytest.raises(ContractError) as exc:
        apply("extraction", {"atomic_facts": [{"fact": "a"}], "foresight": [
            {"description": "b", "start_time": "2026-01-01"}],
            "links": [{"source_id": "atomic_facts.0", "target_id": "fact_doesnotexist"}]}, home)
    assert exc.value.field == "links.0.target_id"
    assert snapshot(home) == before


def test_consolidate_prepare_clusters_with_keywords(s3_env: dict[str, str], home: Path) -> None:
    seed_episodes(home, [make_episode("ep_t", "trivial", trivial=True)])
    r = run_s3(["consolidate", "--prepare", "--json"], dict(s3_env, SOPHIA_EMBEDDINGS="off"))
    assert r.returncode == 0, r.stderr
    pack = json.loads(r.stdout)
    assert pack["unconsolidated"] == 4  # the trivial one is excluded
    assert pack["clustering"]["method"] == "dbscan-keywords"
    assert [sorted(c["episode_ids"]) for c in pack["clusters"]] == [["ep_c1", "ep_c2", "ep_c3"]]
    assert pack["noise"] == ["ep_a"]
    assert pack["task"]["apply_command"].startswith("s3 apply consolidation ")


def test_reflect_prepare_pack(s3_env: dict[str, str], home: Path) -> None:
    apply("reflection", {"heuristics": [{"trigger_concept": "Docker", "rule_content": "Pin images"}],
                         "episodes_analyzed": ["ep_c3"]}, home)
    r = run_s3(["reflect", "--prepare", "--episodes", "2", "--json"], s3_env)
    assert r.returncode == 0, r.stderr
    pack = json.loads(r.stdout)
    assert len(pack["episodes"]) == 2 and "ep_c3" not in [e["id"] for e in pack["episodes"]]
    assert pack["existing_rules"][0]["rule_content"] == "Pin images"
    assert pack["task"]["result_path"].endswith(".json") and pack["task"]["agent_type"] == "s3-reflection"
    assert "knowledge_gaps" in pack["self_model"]
    r = run_s3(["reflect"], s3_env)
    assert r.returncode == 2 and "s3-reflection" in r.stderr


def test_what_a_digest_learns_belongs_to_its_episodes_project(home: Path) -> None:
    """The digest worker names the episode, not the project: facts, foresight and procedures take the
    episode's project (so another project's session never gets them); the profile, about the user, does not."""
    seed_episodes(home, [make_episode("ep_shop", "Fix the checkout", project="/work/shop")])
    apply("extraction", {"episode_id": "ep_shop", "atomic_facts": [{"fact": "The checkout uses Stripe"}],
                         "profile": [{"fact": "The user prefers pytest", "kind": "preference"}]}, home)
    assert [f["project"] for f in items(home, "facts")] == ["/work/shop"]
    assert [p["project"] for p in items(home, "profile")] == [None]
