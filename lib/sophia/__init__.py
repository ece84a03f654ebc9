"""Sophia System 3: persistent memory and a conscience for Claude Code.

This package's top level must stay import-cheap: hooks import parts of it with the
standard library only (``python -I -S``). Heavy or third-party imports (pydantic,
typer, numpy, torch) live in the modules that need them.
"""

__version__ = "0.1.0"
