"""Skills and subagents: real frontmatter (kebab-case names, short descriptions, tools listed)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SKILLS = ["s3-init", "s3-status", "s3-recall", "s3-learn", "s3-reflect", "s3-refresh-identity", "s3-consolidate",
          "s3-forget"]
AGENTS = {"s3-memory": "haiku", "s3-reflection": "sonnet", "s3-consolidation": "sonnet",
          "s3-introspection": "haiku", "s3-extraction": "sonnet"}
KEBAB = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
S3_COMMANDS = {"init", "status", "recall", "learn", "reflect", "refresh-identity", "consolidate", "forget", "list",
               "apply"}


def frontmatter(path: Path) -> tuple[dict[str, str], str]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n"), path
    head, body = text[4:].split("\n---\n", 1)
    fields: dict[str, str] = {}
    key = ""
    for line in head.splitlines():
        m = re.match(r"^([a-z][a-z-]*):\s?(.*)$", line)
        if m:
            key = m.group(1)
            fields[key] = m.group(2).strip()
        elif key:  # block scalar continuation
            fields[key] += "\n" + line.strip()
    for k, v in fields.items():
        if v.startswith("|"):
            fields[k] = v[1:].strip()
        elif len(v) >= 2 and v[0] == v[-1] == '"':
            fields[k] = v[1:-1]
    return fields, body


# the memory's read-only MCP tools (a settings install's name and the plugin's); never remember or forget
MCP_READ = re.compile(r"mcp__(plugin_sophia-system3_)?sophia-memory__(search|get|timeline)")


def test_the_recall_skill_and_memory_agent_may_use_the_read_only_mcp_tools() -> None:
    for path, key in ((ROOT / "skills" / "s3-recall" / "SKILL.md", "allowed-tools"),
                      (ROOT / "agents" / "s3-memory.md", "tools")):
        fm, body = frontmatter(path)
        mcp = [t.strip() for t in fm[key].split(",") if t.strip().startswith("mcp__")]
        assert len(mcp) == 6 and all(MCP_READ.fullmatch(t) for t in mcp), mcp
        assert "`search`" in body and "`get`" in body


@pytest.mark.parametrize("name", SKILLS)
def test_skill_frontmatter(name: str) -> None:
    fm, body = frontmatter(ROOT / "skills" / name / "SKILL.md")
    assert fm["name"] == name and KEBAB.match(name)
    assert 40 < len(fm["description"]) < 1024
    assert re.search(r"\b[Uu]se (when|it when|before)\b", fm["description"]), "description must say when"
    assert "argument-hint" in fm
    tools = [t.strip() for t in fm["allowed-tools"].split(",") if not MCP_READ.fullmatch(t.strip())]
    assert tools and all(re.fullmatch(r"Bash\(s3 [a-z-]+:\*\)", t) for t in tools), tools
    allowed = {re.fullmatch(r"Bash\(s3 ([a-z-]+):\*\)", t).group(1) for t in tools}  # type: ignore[union-attr]
    assert allowed <= S3_COMMANDS
    used = set(re.findall(r"`s3 ([a-z-]+)", body))
    assert used and used <= allowed, (used, allowed)  # every s3 command it runs is pre-approved, and no more
    assert allowed <= used
    if fm["argument-hint"]:
        assert "$ARGUMENTS" in body
    assert len(body.splitlines()) < 500


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_agent_frontmatter(name: str) -> None:
    fm, body = frontmatter(ROOT / "agents" / f"{name}.md")
    assert fm["name"] == name and KEBAB.match(name)
    assert len(fm["description"]) < 1024
    assert fm["description"].count("<example>") >= 2 and "</example>" in fm["description"]
    tools = [t.strip() for t in fm["tools"].split(",") if not MCP_READ.fullmatch(t.strip())]
    assert set(tools) <= {"Bash", "Read", "Write"}, tools  # least privilege: no Edit, no web, no Glob
    assert fm["model"] == AGENTS[name]
    assert f'"agent_type": "{name}"' in body and "agent_results/{task_id}.json" in body
    assert re.search(r"`s3 apply (reflection|consolidation|memory|extraction) ", body)


def test_no_guardian_agent_here_and_no_strays() -> None:
    assert sorted(p.name for p in (ROOT / "skills").iterdir()) == sorted(SKILLS)
    names = {p.stem for p in (ROOT / "agents").glob("*.md")}
    assert set(AGENTS) <= names and names - set(AGENTS) <= {"s3-guardian"}
