from __future__ import annotations

from pathlib import Path

import pytest

from .harness import ClaudeRun, claude_binary


@pytest.fixture
def e2e(isolated_home: Path, tmp_path: Path) -> ClaudeRun:
    if not claude_binary():
        pytest.skip("the claude client is not installed (./test.sh installs it into .cache/node)")
    return ClaudeRun(isolated_home, tmp_path / "project")
