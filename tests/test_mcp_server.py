"""``s3 mcp``: the official MCP SDK's client talks to the real server over stdio (a subprocess), and
the tools' own checks are called directly. Bars: the five tools listed with schemas and annotations;
remember then search in a fresh home; forget takes an item out of search and `s3 recall`; a bad
argument is an MCP error and the server keeps answering; nothing but protocol on stdout."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import LIB, run_s3

TOOLS = {"search", "get", "timeline", "remember", "forget"}


def with_client(env: dict[str, str], body: Callable[[Any], Awaitable[Any]]) -> Any:
    """Run ``body(session)`` against ``python -m sophia.cli.entry mcp`` started by the SDK's stdio client."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def go() -> Any:
        params = StdioServerParameters(command=sys.executable, args=["-m", "sophia.cli.entry", "mcp"], env=env)
        async with stdio_client(params) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            return await body(s)

    return asyncio.run(asyncio.wait_for(go(), 120))


def text_of(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


@pytest.mark.usefixtures("inited")
def test_lists_five_tools_with_schemas_and_annotations(s3_env: dict[str, str]) -> None:

    async def body(s: Any) -> Any:
        return (await s.list_tools()).tools

    tools = {t.name: t for t in with_client(s3_env, body)}
    assert set(tools) == TOOLS
    for t in tools.values():
        assert t.description and len(t.description) > 40
        assert t.inputSchema["type"] == "object" and t.inputSchema["required"]
        assert t.inputSchema["additionalProperties"] is False
        assert t.annotations is not None
    for name in ("search", "get", "timeline"):
        assert tools[name].annotations.readOnlyHint is True
    assert tools["forget"].annotations.destructiveHint is True
    assert tools["remember"].annotations.readOnlyHint is False and tools["remember"].annotations.destructiveHint is False
    assert set(tools["search"].inputSchema["properties"]) == {"query", "project", "kinds", "as_of", "known_at", "limit"}


@pytest.mark.usefixtures("inited")
def test_remember_search_get_forget_and_recall_agree(s3_env: dict[str, str], tmp_path: Path) -> None:
    project = tmp_path / "repo"
    project.mkdir()
    lesson = "Run the flaky integration suite with --reruns 2 before blaming the network"

    async def body(s: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        out["remember"] = await s.call_tool("remember", {"text": lesson, "project": str(project)})
        out["search"] = await s.call_tool("search", {"query": "flaky integration suite reruns"})
        rid = text_of(out["search"]).split()[0]
        out["get"] = await s.call_tool("get", {"ids": [rid, "rule_doesnotexist"]})
        out["forget"] = await s.call_tool("forget", {"id": rid})
        out["after"] = await s.call_tool("search", {"query": "flaky integration suite reruns"})
        out["again"] = await s.call_tool("forget", {"id": rid})
        out["rid"] = rid
        return out

    out = with_client(s3_env, body)
    assert not out["remember"].isError and "saved as rule" in text_of(out["remember"])
    first = text_of(out["search"]).splitlines()[0]
    assert first.startswith("rule_") and " rule " in first and "rel " in first and "[repo]" in first
    got = json.loads(text_of(out["get"]))
    assert got["items"][0]["id"] == out["rid"] and got["items"][0]["project"] == str(project)
    assert lesson in got["items"][0]["text"] and got["missing"] == ["rule_doesnotexist"]
    assert not out["forget"].isError and out["rid"] in text_of(out["forget"])
    assert "No memories match" in text_of(out["after"])
    assert out["again"].isError and "no memory with id" in text_of(out["again"])
    # `s3 recall` (the same engine) agrees: gone
    r = run_s3(["recall", "flaky integration suite reruns", "--json"], s3_env)
    assert r.returncode == 0 and json.loads(r.stdout)["results"] == []


@pytest.mark.usefixtures("inited")
def test_search_gives_what_s3_recall_gives(s3_env: dict[str, str]) -> None:
    for lesson in ("Pin the Docker base image by digest, tags move", "Docker builds cache layers by instruction order",
                   "Use uv to create virtualenvs quickly"):
        assert run_s3(["learn", lesson], s3_env).returncode == 0

    async def body(s: Any) -> Any:
        return await s.call_tool("search", {"query": "docker image layers", "limit": 5})

    lines = text_of(with_client(s3_env, body)).splitlines()
    recall = json.loads(run_s3(["recall", "docker image layers", "--json", "--limit", "5"], s3_env).stdout)["results"]
    assert [ln.split()[0] for ln in lines] == [r["id"] for r in recall]
    assert [float(ln.split(" rel ")[1].split()[0]) for ln in lines] == [round(r["relevance"], 2) for r in recall]


@pytest.mark.usefixtures("inited")
def test_bad_arguments_are_mcp_errors_and_the_server_goes_on(s3_env: dict[str, str]) -> None:

    async def body(s: Any) -> list[Any]:
        return [await s.call_tool("search", {"query": "x", "limit": 0}),
                await s.call_tool("search", {"query": "pytest", "as_of": "yesterday"}),
                await s.call_tool("search", {"query": "pytest", "colour": "red"}),
                await s.call_tool("timeline", {"around": "not a date or id"}),
                await s.call_tool("remember", {"text": "x" * 1001}),
                await s.call_tool("remember", {"text": "fine", "project": "relative/path"}),
                await s.call_tool("no_such_tool", {}),
                await s.call_tool("remember", {"text": "Prefer ruff over flake8 in new projects", "project": "global"})]

    results = with_client(s3_env, body)
    *bad, good = results
    for r in bad:
        assert r.isError, text_of(r)
        msg = text_of(r)
        assert "\n" not in msg.strip() and "Traceback" not in msg
    assert "as_of" in text_of(bad[1]) and "YYYY-MM-DD" in text_of(bad[1])
    assert "neither a memory id nor a date" in text_of(bad[3])
    assert not good.isError and "every project" in text_of(good)


@pytest.mark.usefixtures("inited")
def test_remember_redacts_and_merges_facts(s3_env: dict[str, str], sophia_home: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from sophia.cli import mcp_tools

    proj = str(tmp_path)
    first = mcp_tools.call("remember", {"kind": "fact", "project": proj,
                                        "text": "The staging database password is hunter2secretXYZ99 (rotate monthly)"})
    assert "saved as fact fact_" in first
    again = mcp_tools.call("remember", {"kind": "fact", "project": proj,
                                        "text": "the staging database password is hunter2secretXYZ99 (rotate monthly)."})
    assert again.startswith("merged")
    facts = json.loads((sophia_home / "memory" / "facts.json").read_text())["items"]
    assert len(facts) == 1 and facts[0]["project"] == proj
    # the same fact for another project is its own memory
    mcp_tools.call("remember", {"kind": "fact", "project": "/elsewhere",
                                "text": "The staging database is rebuilt every night"})
    assert len(json.loads((sophia_home / "memory" / "facts.json").read_text())["items"]) == 2
    monkeypatch.chdir(tmp_path)
    assert f"(project {proj})" in mcp_tools.call("remember", {"text": "Tabs, never spaces, in Makefiles"})


@pytest.mark.usefixtures("inited")
def test_remember_redacts_secrets(s3_env: dict[str, str], sophia_home: Path) -> None:
    from sophia.cli import mcp_tools

    mcp_tools.call("remember", {"text": "Deploy with API_KEY=supersecretvalue123 exported", "project": "global"})
    assert "supersecretvalue123" not in (sophia_home / "semantic_rules.json").read_text()


@pytest.mark.usefixtures("inited")
def test_timeline_around_an_id_and_a_date(s3_env: dict[str, str], sophia_home: Path) -> None:
    from sophia.cli import mcp_tools
    from sophia.index import db, store
    from sophia.kinds import make_item

    conn = db.connect(sophia_home)
    store.upsert_items(conn, [
        make_item("fact_a", "fact", "migrated the billing service to postgres", event_time="2026-03-01T10:00:00Z",
                  project="/p"),
        make_item("fact_b", "fact", "billing tests went green again", event_time="2026-03-02T09:00:00Z", project="/p"),
        make_item("fact_c", "fact", "the other project's deploy", event_time="2026-03-02T09:30:00Z", project="/q"),
        make_item("fact_d", "fact", "a month later", event_time="2026-04-05T09:00:00Z", project="/p"),
    ])
    conn.close()
    by_id = mcp_tools.call("timeline", {"around": "fact_a", "project": "/p", "days": 2})
    lines = by_id.splitlines()
    assert [ln.lstrip("> ").split()[0] for ln in lines] == ["fact_a", "fact_b"] and lines[0].startswith("> ")
    by_date = mcp_tools.call("timeline", {"around": "2026-03-02", "days": 1})
    assert {ln.split()[0] for ln in by_date.splitlines()} == {"fact_a", "fact_b", "fact_c"}
    assert "Nothing recorded" in mcp_tools.call("timeline", {"around": "2020-01-01"})


def test_no_home_is_a_clear_error(s3_env: dict[str, str]) -> None:
    from sophia.cli import mcp_tools

    with pytest.raises(mcp_tools.ToolError, match="s3 init"):
        mcp_tools.call("search", {"query": "anything"})


def test_stdout_carries_only_the_protocol(s3_env: dict[str, str]) -> None:
    """A stray print anywhere in the process goes to stderr; raw JSON-RPC lines in, only JSON-RPC out."""
    code = ("import sys; sys.path.insert(0, sys.argv[1])\n"
            "from sophia.cli.mcp_server import _protocol_stdout\n"
            "out = _protocol_stdout(); print('stray'); import os; os.write(1, b'raw\\n'); out.write(b'proto\\n')\n")
    r = subprocess.run([sys.executable, "-c", code, str(LIB)], capture_output=True, timeout=60)
    assert r.stdout == b"proto\n" and b"stray" in r.stderr and b"raw" in r.stderr
    run_s3(["init"], s3_env)
    msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "raw", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search", "arguments": {"query": 5}}},
            {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "search",
                                                                           "arguments": {"query": "anything"}}}]
    p = subprocess.Popen([sys.executable, "-m", "sophia.cli.entry", "mcp"], env=s3_env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdin is not None and p.stdout is not None and p.stderr is not None
    out = []
    for m in msgs:  # one at a time, as a client does (the stdin stays open until the answers are in)
        p.stdin.write(json.dumps(m) + "\n")
        p.stdin.flush()
        if "id" in m:
            out.append(json.loads(p.stdout.readline()))
    p.stdin.close()
    rest, err = p.stdout.read(), p.stderr.read()
    assert p.wait(timeout=60) == 0 and rest == ""
    assert [m.get("id") for m in out] == [1, 2, 3] and all(m["jsonrpc"] == "2.0" for m in out)
    assert out[1]["result"]["isError"] is True and out[2]["result"]["isError"] is False
    assert "Traceback" not in err


def test_the_server_never_loads_torch_or_the_model(s3_env: dict[str, str]) -> None:
    code = ("import sys; sys.path.insert(0, sys.argv[1])\n"
            "import sophia.cli.mcp_server as m, sophia.cli.mcp_tools as t; m.build()\n"
            "print(sorted(k for k in ('torch', 'numpy', 'sentence_transformers', 'typer') if k in sys.modules))\n")
    r = subprocess.run([sys.executable, "-c", code, str(LIB)], capture_output=True, text=True, timeout=60, env=s3_env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


INIT_LINE = {"jsonrpc": "2.0", "id": 7, "method": "initialize",
             "params": {"protocolVersion": "", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}


def _handshake(env: dict[str, str], version: str) -> tuple[dict[str, Any], dict[str, Any], str]:
    """The answers to ``initialize`` (asking ``version``) and a following ``tools/list``, and stderr."""
    init = {**INIT_LINE, "params": {**INIT_LINE["params"], "protocolVersion": version}}
    p = subprocess.Popen([sys.executable, "-m", "sophia.cli.entry", "mcp"], env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdin is not None and p.stdout is not None and p.stderr is not None
    p.stdin.write(json.dumps(init) + "\n")
    p.stdin.flush()
    first = json.loads(p.stdout.readline())
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n"
                  + json.dumps({"jsonrpc": "2.0", "id": 8, "method": "tools/list"}) + "\n")
    p.stdin.flush()
    second = json.loads(p.stdout.readline())
    p.stdin.close()
    rest, err = p.stdout.read(), p.stderr.read()
    assert p.wait(timeout=60) == 0 and rest == "", (rest, err)
    return first, second, err


def test_the_early_handshake_is_the_sdks_own(s3_env: dict[str, str]) -> None:
    """Every protocol version the SDK supports is answered early, exactly as the SDK answers it (the
    server compares the two and says a difference on stderr), then the SDK serves the session; a version
    the SDK does not know is left to the SDK's negotiation (its latest)."""
    from mcp.shared.version import SUPPORTED_PROTOCOL_VERSIONS
    from mcp.types import LATEST_PROTOCOL_VERSION

    from sophia.cli.mcp_handshake import sdk_versions

    assert sdk_versions() == SUPPORTED_PROTOCOL_VERSIONS
    run_s3(["init"], s3_env)
    for version in [*SUPPORTED_PROTOCOL_VERSIONS, "1999-01-01"]:
        first, second, err = _handshake(s3_env, version)
        want = version if version in SUPPORTED_PROTOCOL_VERSIONS else LATEST_PROTOCOL_VERSION
        assert first["id"] == 7 and first["result"]["protocolVersion"] == want
        assert first["result"]["serverInfo"]["name"] == "sophia-memory"
        assert second["id"] == 8 and {t["name"] for t in second["result"]["tools"]} == TOOLS
        assert "differs" not in err and "Traceback" not in err


def test_the_handshake_is_answered_before_the_sdk_loads(s3_env: dict[str, str]) -> None:
    code = ("import io, sys; sys.path.insert(0, sys.argv[1])\n"
            "sys.stdin = io.TextIOWrapper(io.BytesIO(sys.argv[2].encode() + b'\\n'))\n"
            "from sophia.cli import mcp_server\n"
            "out = io.BytesIO(); stdin, stdout = mcp_server._answer_early(out)\n"
            "print(out.getvalue().decode().strip()); print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('mcp', 'pydantic', 'anyio')))\n"
            "print(stdin.readline().strip() == sys.argv[2], stdin.readline() == '')\n")
    line = json.dumps({**INIT_LINE, "params": {**INIT_LINE["params"], "protocolVersion": "2025-06-18"}})
    r = subprocess.run([sys.executable, "-c", code, str(LIB), line], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    answer, loaded, replay = r.stdout.strip().splitlines()
    assert json.loads(answer)["result"]["protocolVersion"] == "2025-06-18"
    assert loaded == "[]"  # answered with the SDK not imported
    assert replay == "True True"  # and the same line handed on to the SDK, then the real stdin


def test_the_sdks_answer_to_the_early_request_is_held_back_and_compared() -> None:
    import io

    from sophia.cli.mcp_handshake import HoldFirstAnswer

    sent = {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-06-18"}}
    out, err = io.StringIO(), io.StringIO()
    hold = HoldFirstAnswer(out, sent)
    old, sys.stderr = sys.stderr, err
    try:
        hold.write('{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2024-11-05"}}\n')
        hold.write('{"jsonrpc":"2.0","id":1,"result":{"again":true}}\n')
        hold.write('{"jsonrpc":"2.0","id":2,"result":{}}\n')
    finally:
        sys.stderr = old
    assert out.getvalue().splitlines() == ['{"jsonrpc":"2.0","id":1,"result":{"again":true}}',
                                           '{"jsonrpc":"2.0","id":2,"result":{}}']
    assert "differs" in err.getvalue() and "2024-11-05" in err.getvalue()


def test_the_early_answer_leaves_what_it_cannot_answer_to_the_sdk() -> None:
    from sophia.cli.mcp_handshake import early_answer

    info = {"name": "n", "version": "1"}
    ok = {**INIT_LINE, "params": {**INIT_LINE["params"], "protocolVersion": "2025-06-18"}}
    assert early_answer(json.dumps(ok).encode(), info, "i") is not None
    for bad in (b"not json", b"[]", json.dumps({**ok, "method": "ping"}).encode(),
                json.dumps({**ok, "id": None}).encode(), json.dumps({**ok, "id": True}).encode(),
                json.dumps({**ok, "params": {**ok["params"], "protocolVersion": "1999-01-01"}}).encode(),
                json.dumps({**ok, "params": {**ok["params"], "clientInfo": "x"}}).encode()):
        assert early_answer(bad, info, "i") is None, bad


def test_the_sdk_loads_lean_and_falls_back_to_the_ordinary_import(s3_env: dict[str, str]) -> None:
    code = ("import sys; sys.path.insert(0, sys.argv[1])\n"
            "import sophia.cli.mcp_server as m\n"
            "if sys.argv[2] == 'broken': m.LEAN_PACKAGES = ('mcp', 'mcp.no_such_package')\n"
            "m.build(); print(sorted(k for k in ('mcp.server.fastmcp', 'mcp.client.session') if k in sys.modules))\n")
    lean = subprocess.run([sys.executable, "-c", code, str(LIB), "lean"], capture_output=True, text=True, timeout=60)
    assert lean.returncode == 0, lean.stderr
    assert lean.stdout.strip() == "[]"  # the SDK's client and FastMCP are not loaded
    broken = subprocess.run([sys.executable, "-c", code, str(LIB), "broken"], capture_output=True, text=True,
                            timeout=60)
    assert broken.returncode == 0, broken.stderr
    assert "mcp.server.fastmcp" in broken.stdout  # the ordinary import, whole
