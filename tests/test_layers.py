"""The package layers of ``lib/sophia``: each unit imports only units below it, so there is no cycle.

A unit is a top-level module or package of ``sophia`` (``sophia.index``, ``sophia.paths``): the embedding
service's standard-library client (``embed_client``) sits below ``index``, which asks it for semantic hits,
and the service (``embed``) sits above ``index``, whose items it embeds. Every ``import`` counts,
the lazy ones inside functions and ``importlib.import_module("sophia....")`` included. Inside a unit
modules may import each other freely (the guardian's rule families call its analyzer).
docs/architecture.md draws the same order.
"""

from __future__ import annotations

import ast
from pathlib import Path

LIB = Path(__file__).resolve().parents[1] / "lib"

# lowest first; a unit may import only units listed before it
ORDER = [
    # base: standard library only, safe on every hook path
    "sophia", "errors", "timeutil", "paths", "config_defaults", "file_stamp", "atomic", "locking", "resident", "redact", "evidence",
    "outcome_words", "kinds", "gaps",
    "migrations",
    "episode_store", "problem", "consistency", "codex_rollout", "transcript_entries",
    # the pydantic models of the state files and of what the subagents return
    "models", "contracts",
    # the ~/.sophia state tree: create, read, check, repair
    "state",
    # recall: the embedding service's client, then the SQLite index and its search
    "embed_client", "index",
    # features built on the index
    "embed", "ingest", "guardian", "memory", "identity_md",
    # team memory: the shared replica in PostgreSQL (its launcher is standard library only)
    "team",
    # the learning loop: the digest's condensed input, zero-token learners, the digest queue and worker
    "learning",
    # entry points: hook modules, the installer's helpers, the LoCoMo evaluation, the web viewer, the s3 CLI
    "hooks", "install", "evaluation", "ui", "cli",
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(LIB).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def unit_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "sophia"


def _is_module(name: str) -> bool:
    p = LIB.joinpath(*name.split("."))
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def imports_of(path: Path, mod: str) -> list[tuple[str, int]]:
    """(imported sophia module, line) for every import in the file of module ``mod``, nested ones included."""
    package = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
    out: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
            target = ".".join(x for x in (base, node.module) if x)
            # `from sophia.embed_client import client` imports the module sophia.embed_client.client
            names = [f"{target}.{a.name}" if _is_module(f"{target}.{a.name}") else target for a in node.names]
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and (getattr(node.func, "attr", None) == "import_module" or getattr(node.func, "id", None) == "__import__")):
            names = [node.args[0].value]
        out += [(n, node.lineno) for n in names if n == "sophia" or n.startswith("sophia.")]
    return out


def sources() -> dict[str, Path]:
    return {module_name(p): p for p in sorted((LIB / "sophia").rglob("*.py"))}


def upward_imports(modules: dict[str, Path]) -> list[str]:
    rank = {u: i for i, u in enumerate(ORDER)}
    bad = []
    for mod, path in modules.items():
        src = unit_of(mod)
        for target, line in imports_of(path, mod):
            dst = unit_of(target)
            if dst != src and rank[dst] > rank[src]:
                bad.append(f"{mod}:{line}: {src} imports {target} ({dst} is above it)")
    return bad


def test_every_unit_has_a_place_in_the_order() -> None:
    units = {unit_of(m) for m in sources()}
    assert units - set(ORDER) == set(), "place the new package or module in ORDER (and in docs/architecture.md)"
    assert set(ORDER) - units == set(), "ORDER names a unit that no longer exists"


def test_no_unit_imports_a_unit_above_it() -> None:
    assert upward_imports(sources()) == []


def test_the_scan_sees_lazy_relative_and_importlib_imports(tmp_path: Path) -> None:
    """The checker itself: an import inside a function, a relative one and an importlib call all count."""
    probe = tmp_path / "probe.py"
    probe.write_text("from .. import paths\n\ndef f():\n    from ..cli import app\n    import importlib\n"
                     "    importlib.import_module('sophia.hooks.runtime')\n", encoding="utf-8")
    assert [m for m, _ in imports_of(probe, "sophia.index.probe")] == [
        "sophia.paths", "sophia.cli.app", "sophia.hooks.runtime"]
    bad = upward_imports({"sophia.index.probe": probe})
    assert len(bad) == 2 and "sophia.cli.app" in bad[0] and "sophia.hooks.runtime" in bad[1], bad


def test_the_pydantic_free_base_stays_free_of_pydantic() -> None:
    """Hooks import the base units with the standard library only (python -I -S)."""
    base = set(ORDER[: ORDER.index("models")])
    heavy = []
    for mod, path in sources().items():
        if unit_of(mod) not in base:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                heavy += [f"{path.name}: {n}" for n in names if n.split(".")[0] in ("pydantic", "typer", "numpy", "torch")]
    assert heavy == []
