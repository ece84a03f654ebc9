from __future__ import annotations

from pathlib import Path

import pytest

from .codex_harness import CodexRun, codex_binary
from .harness import ClaudeRun, claude_binary


@pytest.fixture
def e2e(isolated_home: Path, tmp_path: Path) -> ClaudeRun:
    if not claude_binary():
        pytest.skip("the claude client is not installed (./test.sh installs it into .cache/node)")
    return ClaudeRun(isolated_home, tmp_path / "project")


@pytest.fixture
def codex_e2e(isolated_home: Path, tmp_path: Path) -> CodexRun:
    if not codex_binary():
        pytest.skip("the codex client is not installed (./test.sh installs it into .cache/node)")
    return CodexRun(isolated_home, tmp_path / "project")
