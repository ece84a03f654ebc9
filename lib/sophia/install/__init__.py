"""Install helpers (standard library only): merging our hook entries into Claude Code settings."""
