"""`s3 apply` fuzzed: random JSON and mutated valid results. Either it applies, or it fails with a clear
error (a SophiaError; on the CLI: exit 2, one line plus the hint) and the tree is byte-for-byte unchanged."""

from __future__ import annotations

import copy
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import run_s3

FIXTURES = Path(__file__).parent / "fixtures" / "contracts"
KINDS = ["reflection", "consolidation", "memory", "extraction"]
VALID = {k: [json.loads(p.read_text()) for p in sorted((FIXTURES / k / "valid").glob("*.json"))]
         for k in KINDS if (FIXTURES / k / "valid").is_dir()}


def tree_hash(root: Path) -> dict[str, str]:
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            if f.endswith(".lock"):
                continue
            p = Path(dirpath) / f
            out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def json_values() -> st.SearchStrategy[Any]:
    scalars = (st.none() | st.booleans() | st.integers(min_value=-10**12, max_value=10**12)
               | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=40)
               | st.sampled_from(["ep_a", "", "2025-13-45", "SUCCESS", "../x", "a" * 5000]))
    return st.recursive(scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(
        st.sampled_from(["heuristics", "rule_content", "trigger_concept", "confidence", "atomic_facts", "fact",
                         "query", "matches", "result", "task_id", "status", "x"]) | st.text(max_size=8), c,
        max_size=4), max_leaves=10)


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, prefix + (i,))
    return out


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, Any]:
    kind = draw(st.sampled_from(sorted(VALID)))
    if draw(st.integers(0, 4)) == 0:
        return kind, draw(json_values())
    obj = copy.deepcopy(draw(st.sampled_from(VALID[kind])))
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(obj)
        path = draw(st.sampled_from(paths))
        if not path:
            continue
        parent = obj
        for step in path[:-1]:
            parent = parent[step]
        op = draw(st.sampled_from(["replace", "delete", "wrap"]))
        if op == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
        elif op == "wrap":
            parent[path[-1]] = [parent[path[-1]]]
        else:
            parent[path[-1]] = draw(json_values())
    return kind, obj


@pytest.mark.slow
def test_apply_random_results_fail_cleanly_or_apply(sophia_home: Path) -> None:
    from sophia.errors import SophiaError
    from sophia.memory.apply import apply_result
    from sophia.state import init_tree

    init_tree()
    seen = {"applied": 0, "rejected": 0}

    @settings(max_examples=int(os.environ.get("SOPHIA_FUZZ_EXAMPLES", "150")), deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck), database=None)
    @given(mutated())
    def run(case: tuple[str, Any]) -> None:
        kind, data = case
        before = tree_hash(sophia_home)
        try:
            apply_result(kind, data)
        except SophiaError as exc:
            msg = str(exc)
            assert msg and "\n" not in msg.strip() and "Traceback" not in msg, msg
            assert tree_hash(sophia_home) == before, f"partial write on rejected {kind} result: {msg}"
            seen["rejected"] += 1
        else:
            seen["applied"] += 1

    run()
    assert seen["rejected"] > 10, seen


CLI_GARBAGE = [b"", b"not json", b"[]", b"null", b'{"heuristics": "x"}', bytes(range(256)), b"[" * 50_000,
               b'{"result": {"heuristics": [{"trigger_concept": 5}]}}', json.dumps({"query": ""}).encode()]


@pytest.mark.parametrize("data", CLI_GARBAGE, ids=range(len(CLI_GARBAGE)))
def test_apply_cli_garbage_is_one_clear_error(data: bytes, s3_env: dict[str, str], sophia_home: Path,
                                              tmp_path: Path) -> None:
    assert run_s3(["init"], s3_env).returncode == 0
    before = tree_hash(sophia_home)
    f = tmp_path / "result.json"
    f.write_bytes(data)
    for kind in ("reflection", "memory"):
        r = run_s3(["apply", kind, str(f)], s3_env)
        assert r.returncode == 2, (kind, r.returncode, r.stdout, r.stderr)
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        assert 1 <= len(lines) <= 2 and lines[0].startswith("s3: error:"), r.stderr
        assert "Traceback" not in r.stderr + r.stdout
    assert tree_hash(sophia_home) == before
