"""The outcome of an analysis: allow, ask or deny, with a reason Claude (or the user) can act on."""

from __future__ import annotations

from .record import record

RANK = {"allow": 0, "ask": 1, "deny": 2}


@record
class Finding:
    level: str  # ask | deny
    rule: str  # family, e.g. rm_recursive, git_destructive
    why: str  # what was stopped and why
    instead: str = ""  # what to do instead

    def reason(self) -> str:
        text = f"{self.why}."
        if self.instead:
            text += f" {self.instead}"
        return text


@record
class Decision:
    level: str = "allow"
    findings: list[Finding] | None = None

    @property
    def top(self) -> Finding | None:
        if not self.findings:
            return None
        return max(self.findings, key=lambda f: RANK[f.level])


def combine(findings: list[Finding]) -> Decision:
    if not findings:
        return Decision("allow", [])
    worst = max(findings, key=lambda f: RANK[f.level])
    return Decision(worst.level, findings)
