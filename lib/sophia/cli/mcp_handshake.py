"""The MCP handshake answered before the SDK has loaded, and the SDK's own answer to it kept back.

Loading the SDK (pydantic models of the whole protocol, jsonschema, httpx) takes most of a second, and
a client waits on ``initialize`` before anything else. So ``s3 mcp`` reads the first line itself and, when it
is an ``initialize`` asking a protocol version the installed SDK supports, answers it at once with what the
SDK would answer. The same line is then handed to the SDK (``Replay``), so its session goes through the
handshake as always, and its answer to that request is held back (``HoldFirstAnswer``) and compared: a
difference is one line on stderr (the tests hold them equal). Anything else on the first line (a bad line,
another method, an unknown version) is left to the SDK alone. Stdlib only: this runs before the SDK loads.
"""

from __future__ import annotations

import json
import re
import sys
from importlib.util import find_spec
from pathlib import Path
from typing import Any

# what the SDK's lowlevel server announces for a server that registers tools and nothing else
CAPABILITIES: dict[str, Any] = {"experimental": {}, "tools": {"listChanged": False}}


def sdk_versions() -> list[str] | None:
    """The protocol versions the installed SDK supports, read from its own source (``mcp.shared.version``
    and the latest in ``mcp.types``) without running it; None when they cannot be read."""
    spec = find_spec("mcp")
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations)))
    try:
        latest = re.search(r'^LATEST_PROTOCOL_VERSION\s*=\s*"([^"]+)"', (root / "types.py").read_text(), re.M)
        listed = re.search(r"^SUPPORTED_PROTOCOL_VERSIONS[^=]*=\s*\[([^\]]*)\]",
                           (root / "shared" / "version.py").read_text(), re.M)
    except OSError:
        return None
    if not latest or not listed:
        return None
    names = [p.strip() for p in listed.group(1).split(",")]
    versions = [latest.group(1) if n == "LATEST_PROTOCOL_VERSION" else n.strip("\"'") for n in names]
    return versions if all(re.fullmatch(r"\d{4}-\d\d-\d\d", v) for v in versions) else None


def early_answer(line: bytes, server_info: dict[str, Any], instructions: str) -> dict[str, Any] | None:
    """The JSON-RPC response to ``line`` when it is an ``initialize`` this module can answer, else None."""
    try:
        msg = json.loads(line)
    except ValueError:
        return None
    if not isinstance(msg, dict) or msg.get("method") != "initialize" or msg.get("jsonrpc") != "2.0":
        return None
    params, rid = msg.get("params"), msg.get("id")
    if not isinstance(params, dict) or not isinstance(rid, (str, int)) or isinstance(rid, bool):
        return None
    asked, known = params.get("protocolVersion"), sdk_versions()
    if known is None or not isinstance(asked, str) or asked not in known:
        return None  # the SDK's own negotiation (and its error for a malformed request) decides
    if not isinstance(params.get("capabilities"), dict) or not isinstance(params.get("clientInfo"), dict):
        return None
    result = {"protocolVersion": asked, "capabilities": CAPABILITIES, "serverInfo": server_info,
              "instructions": instructions}
    return {"jsonrpc": "2.0", "id": rid, "result": result}


class Replay:
    """A text stdin for the SDK: ``first`` (the line already read) and then the rest of ``rest``."""

    def __init__(self, first: bytes, rest: Any) -> None:
        self._first: str | None = first.decode("utf-8", "replace")
        self._rest = rest

    def readline(self, *args: Any) -> str:
        if self._first is not None:
            line, self._first = self._first, None
            return line
        return str(self._rest.readline(*args))


class HoldFirstAnswer:
    """The protocol's stdout for the SDK, less the SDK's answer to the request answered early (compared
    with that early answer; a difference is one line on stderr)."""

    def __init__(self, out: Any, sent: dict[str, Any]) -> None:
        self._out, self._sent, self._held = out, sent, False

    def write(self, text: str) -> int:
        if not self._held and self._answers_early(text):
            self._held = True
            return len(text)
        return int(self._out.write(text))

    def _answers_early(self, text: str) -> bool:
        try:
            msg = json.loads(text)
        except ValueError:
            return False
        if not isinstance(msg, dict) or msg.get("id") != self._sent["id"] or "method" in msg:
            return False
        if msg.get("result") != self._sent["result"]:
            sys.stderr.write("s3 mcp: the early answer to initialize differs from the SDK's: "
                             f"{json.dumps(msg.get('result', msg.get('error')))[:300]}\n")
        return True

    def flush(self) -> None:
        self._out.flush()
