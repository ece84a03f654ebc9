"""The registry of memory kinds (sophia.kinds): one table read by apply, list, index, recall, forget,
the hooks and the docs; one converter per stored shape; no import indirection around our modules."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT
from metahelp import make_episode, seed_episodes
from sophia import kinds


@pytest.fixture
def home(sophia_home: Path) -> Path:
    from sophia.state import init_tree

    init_tree(sophia_home)
    return sophia_home


# ---------------------------------------------------------------- a toy kind, end to end


def _build_toy(entry: Any, m: kinds.Maker) -> dict[str, Any]:
    return m.new((entry.name,), f"Toy: {entry.name}", meta={"colour": entry.colour})


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Iterator[kinds.Kind]:
    """Register a toy kind and its contract field, as the 4 documented steps would."""
    from pydantic import create_model

    from sophia import contracts

    class Toy(contracts.Strict):
        name: str
        colour: str = "red"

    extended = create_model("ToyExtraction", __base__=contracts.ExtractionResult,
                            toys=(list[Toy], []))  # type: ignore[call-overload]
    monkeypatch.setitem(contracts.CONTRACTS, "extraction", extended)
    kind = kinds.register(kinds.Kind("toy", "toys", "memory", "toy_", "toys for the registry test",
                                     contract_field="toys", label="Toys", build=_build_toy))
    yield kind
    kinds.unregister("toy")


def test_a_registered_kind_is_applied_listed_indexed_recalled_and_forgotten(
        toy: kinds.Kind, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from typer.testing import CliRunner

    from sophia.cli.app import app
    from sophia.cli.cmd_apply import _render
    from sophia.index.rebuild import rebuild
    from sophia.index.search import recall
    from sophia.memory.apply import apply_result
    from sophia.memory.manage import forget, list_kind

    out = apply_result("extraction", {"toys": [{"name": "walrus kite", "colour": "blue"}]}, home)
    [tid] = out["changes"]["toys_added"]
    assert tid.startswith("toy_") and out["changes"]["index_updated"] is True
    stored = json.loads((home / "memory" / "toys.json").read_text())["items"]
    assert [(i["id"], i["type"], i["text"], i["meta"]["colour"]) for i in stored] == [
        (tid, "toy", "Toy: walrus kite", "blue")]
    _render(out)
    assert "- Toys: 1" in capsys.readouterr().out
    assert [i["id"] for i in list_kind("toys", home)] == [tid]
    listed = CliRunner().invoke(app, ["list", "toys"])
    assert listed.exit_code == 0 and f"- {tid} Toy: walrus kite" in listed.output
    assert [r["id"] for r in recall("walrus kite", types=["toy"], home=home)] == [tid]
    assert rebuild(home)["by_type"].get("toy") == 1
    assert forget(tid, home)["from"] == "memory/toys.json"
    assert recall("walrus kite", types=["toy"], home=home) == [] and list_kind("toys", home) == []


def test_unknown_types_are_still_refused_by_the_index() -> None:
    from sophia.index.store import normalize

    with pytest.raises(ValueError, match="unknown type 'toy'"):
        normalize({"id": "x", "type": "toy", "text": "t"})


def test_the_cli_lists_come_from_the_registry() -> None:
    from typer.testing import CliRunner

    from sophia.cli import cmd_memory
    from sophia.cli.app import app

    assert not hasattr(cmd_memory, "LIST_KINDS")
    r = CliRunner().invoke(app, ["list", "bogus"])
    assert r.exit_code == 2
    for k in kinds.KINDS.values():
        assert (k.plural in r.output) == k.listed, (k, r.output)
    for k in kinds.KINDS.values():
        assert k.store in kinds.STORES and k.prefix, k
    assert {k.contract_field for k in kinds.KINDS.values() if k.contract_field} <= set(
        __import__("sophia.contracts", fromlist=["ExtractionResult"]).ExtractionResult.model_fields)


def test_docs_name_every_kind() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    guides = "\n".join(p.read_text(encoding="utf-8") for p in
                       [*sorted((ROOT / "agents").glob("*.md")), *sorted((ROOT / "skills").glob("*/SKILL.md"))])
    for k in kinds.KINDS.values():
        names = rf"\b({re.escape(k.name)}|{re.escape(k.plural)})\b"
        assert re.search(names, readme, re.I), f"README.md does not name the {k.name!r} kind"
        assert re.search(names, guides, re.I), f"no agent or skill names the {k.name!r} kind"
    table = readme.split("### Memory kinds", 1)[-1].split("\n\n", 2)[1]
    for k in kinds.KINDS.values():
        assert f"| `{k.name}` |" in table, f"the README's memory kinds table misses {k.name!r}"


# ---------------------------------------------------------------- one converter


def test_one_episode_converter_everywhere() -> None:
    from sophia.hooks import episode as hook_episode
    from sophia.index import rebuild
    from sophia.memory import indexing

    assert rebuild.episode_item is kinds.episode_item and indexing.episode_item is kinds.episode_item
    assert rebuild.rule_item is kinds.rule_item and indexing.rule_item is kinds.rule_item
    assert not hasattr(hook_episode, "index_item")


def test_the_hook_and_a_rebuild_index_an_episode_the_same_way(home: Path) -> None:
    from sophia.hooks.session_end import index_episode
    from sophia.index.db import connect
    from sophia.index.rebuild import rebuild

    ep = make_episode("ep_x", "Tune the flaky walrus fixture", "FAILURE", ["walrus"], errors=["boom"],
                      error_analysis="the fixture leaked", heuristics=["isolate fixtures"])
    seed_episodes(home, [ep])
    assert index_episode(home, ep) == "indexed"

    def row() -> tuple[Any, ...]:
        conn = connect(home)
        try:
            return conn.execute("SELECT text, item_hash FROM items WHERE id = 'ep_x'").fetchone()
        finally:
            conn.close()

    live = row()
    rebuild(home)
    assert row() == live and "the fixture leaked" in live[0] and "isolate fixtures" in live[0]


def test_an_extracted_narrative_reaches_the_episode_in_the_index(home: Path) -> None:
    from sophia.index.search import recall
    from sophia.memory.apply import apply_result

    seed_episodes(home, [make_episode("ep_n", "Deploy the app")])
    apply_result("extraction", {"episode_id": "ep_n", "episode": "We argued about the zeppelin hangar."}, home)
    assert [r["id"] for r in recall("zeppelin hangar", types=["episode"], home=home)] == ["ep_n"]


# ---------------------------------------------------------------- no import indirection

INDIRECTION_FREE = ("hooks/session_end.py", "hooks/prompt_context.py", "memory/indexing.py", "memory/apply.py",
                    "memory/scenes.py", "evaluation/locomo.py")


def _own_import_guarded(tree: ast.AST) -> list[int]:
    """Lines of ``try: <import of sophia or a relative module> except ImportError``."""
    bad = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try):
            continue
        catches = {getattr(h.type, "id", None) for h in node.handlers}
        if "ImportError" not in catches and "ModuleNotFoundError" not in catches:
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.ImportFrom) and (stmt.level or (stmt.module or "").startswith("sophia")):
                bad.append(stmt.lineno)
            if isinstance(stmt, ast.Import) and any(a.name.startswith("sophia") for a in stmt.names):
                bad.append(stmt.lineno)
    return bad


@pytest.mark.parametrize("rel", INDIRECTION_FREE)
def test_own_modules_are_imported_plainly(rel: str) -> None:
    src = (ROOT / "lib" / "sophia" / rel).read_text(encoding="utf-8")
    assert "importlib" not in src, f"{rel} uses importlib"
    assert _own_import_guarded(ast.parse(src)) == [], f"{rel} guards an import of its own package"
