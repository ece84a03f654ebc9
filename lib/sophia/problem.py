"""One finding of ``s3 doctor``: the file, what is wrong with it, and what ``--repair`` did.

Below ``state`` and the checkers it registers (``consistency``, ``index.doctor``), so that they
share it without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class Problem:
    path: Path
    reason: str
    action: str = ""
