"""The contracts between the subagents and the library: what each ``s3 apply KIND`` accepts.

Claude does the thinking in the subagents (``agents/*.md``); they return JSON in these shapes
(seed 12.2, 13.2, 15.3 and the EverMemOS / SHEEP / P2 extraction fields), bare or wrapped in the
seed's AgentResult envelope (11.4). Everything here is checked before anything is written.
Unknown fields are rejected (a misspelt ``heuristic`` must not silently do nothing), and no
field anywhere may be called ``terminal_creed``: the creed is immutable.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .errors import SophiaError
from .kinds import MAX_DOMAIN_CHARS, MAX_RULE_CHARS

KINDS = ("reflection", "consolidation", "memory", "extraction", "guardian")

# Which envelope agent_type may feed which KIND.
AGENTS_FOR_KIND: dict[str, tuple[str, ...]] = {
    "reflection": ("s3-reflection", "s3-introspection"),
    "consolidation": ("s3-consolidation",),
    "memory": ("s3-memory",),
    "extraction": ("s3-extraction",),
    "guardian": ("s3-guardian",),
}

FORBIDDEN_KEYS = ("terminal_creed",)


class ContractError(SophiaError):
    """A result that does not match its contract; ``field`` is the dotted path of the culprit."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        super().__init__(f"{field}: {message}" if field else message)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


Confidence = Field(ge=0.0, le=1.0)
# What CLAUDE.md and the hooks carry into every session: capped at the same length as `s3 learn`.
RuleText = Annotated[str, Field(max_length=MAX_RULE_CHARS)]
DomainName = Annotated[str, Field(max_length=MAX_DOMAIN_CHARS)]


def _nonempty(v: str) -> str:
    if not v:
        raise ValueError("must not be empty")
    return v


# ---------------------------------------------------------------- reflection (13.2 + P2-2)


class Heuristic(Strict):
    trigger_concept: DomainName
    rule_content: RuleText
    confidence: float = Field(0.7, ge=0.0, le=1.0)
    source_episodes: list[str] = Field(default_factory=list)

    _ne = field_validator("trigger_concept", "rule_content")(_nonempty)


class Outcome(Strict):
    success: bool
    complexity: float = Field(0.5, ge=0.0, le=1.0)


class CapabilityUpdate(Strict):
    domain: DomainName
    proficiency_delta: float = Field(0.0, ge=-1.0, le=1.0)
    reason: str = ""
    outcomes: list[Outcome] = Field(default_factory=list, description="seed 5.3: one per task done in the domain")

    _ne = field_validator("domain")(_nonempty)


class Question(Strict):
    """P2-2 stage 1: a question asked before concluding, with the memory ids that answered it."""

    question: str
    evidence: list[str] = Field(default_factory=list)
    answer: str = ""


class Link(Strict):
    source_id: str
    target_id: str
    relation: str = "related"

    _ne = field_validator("source_id", "target_id", "relation")(_nonempty)


class ReflectionResult(Strict):
    episodes_analyzed: list[str] = Field(default_factory=list)
    questions: list[Question] = Field(default_factory=list)
    heuristics: list[Heuristic] = Field(default_factory=list)
    capability_updates: list[CapabilityUpdate] = Field(default_factory=list)
    knowledge_gaps_identified: list[RuleText] = Field(default_factory=list)
    suggested_goals: list[str] = Field(default_factory=list, description="s3-introspection")
    links: list[Link] = Field(default_factory=list)
    error_analysis: str | None = Field(None, description="what went wrong in the analysed episodes and why; "
                                       "kept on each of them with the heuristics drawn from it")


# ---------------------------------------------------------------- consolidation (15.3)


class ConsolidationResult(Strict):
    clusters_found: int = Field(0, ge=0)
    rules_created: list[Heuristic] = Field(default_factory=list)
    episodes_consolidated: list[str] = Field(default_factory=list)
    skipped_reason: str | None = None


# ---------------------------------------------------------------- memory (12.2 + SHEEP verification)


class MemoryMatch(Strict):
    episode_id: str | None = None
    memory_id: str | None = None
    relevance_score: float = Field(0.0, ge=0.0, le=1.0)
    goal_summary: str = ""
    outcome: str | None = None
    key_heuristics: list[str] = Field(default_factory=list)
    relevant_context: str = ""
    verified: bool = True

    @model_validator(mode="after")
    def _has_id(self) -> MemoryMatch:
        if not (self.episode_id or self.memory_id):
            raise ValueError("each match needs episode_id or memory_id")
        return self

    @property
    def id(self) -> str:
        return str(self.memory_id or self.episode_id)


class MemoryResult(Strict):
    query: str
    matches: list[MemoryMatch] = Field(default_factory=list)
    search_method: Literal["keyword", "semantic", "hybrid", "agentic"] = "hybrid"
    rounds: int = Field(1, ge=1, le=2)
    rewritten_queries: list[str] = Field(default_factory=list)
    sub_queries: list[str] = Field(default_factory=list, max_length=3,
                                   description="the parts a multi-part question was split into (round 1)")
    sufficient: bool | None = None
    rejected: list[str] = Field(default_factory=list, description="ids recalled but failing verification")

    _ne = field_validator("query")(_nonempty)


# ---------------------------------------------------------------- extraction (EverMemOS / SHEEP / P2)


def _iso_field(v: Any) -> Any:
    if v is None or v == "":
        return None
    from .timeutil import parse

    d = parse(v)
    if d is None:
        raise ValueError(f"not an ISO date or date-time: {v!r}")
    return v


class AtomicFact(Strict):
    fact: str
    event_time: str | None = None
    temporality: Literal["historical", "prospective"] | None = None

    _ne = field_validator("fact")(_nonempty)
    _t = field_validator("event_time", mode="before")(_iso_field)


class ForesightItem(Strict):
    description: str
    evidence: str = ""
    start_time: str
    end_time: str | None = None
    duration_days: int | None = Field(None, ge=0)
    confidence: float = Field(0.7, ge=0.0, le=1.0)

    _ne = field_validator("description")(_nonempty)
    _t = field_validator("start_time", "end_time", mode="before")(_iso_field)

    @model_validator(mode="after")
    def _window(self) -> ForesightItem:
        from .timeutil import parse

        if self.start_time is None:
            raise ValueError("start_time is required")
        end, start = parse(self.end_time), parse(self.start_time)
        if end and start and end < start:
            raise ValueError("end_time is before start_time")
        return self


class ProfileFact(Strict):
    fact: str
    kind: Literal["stable_trait", "transient_state", "preference"] = "transient_state"
    valid_until: str | None = None
    confidence: float = Field(0.7, ge=0.0, le=1.0)

    _ne = field_validator("fact")(_nonempty)
    _t = field_validator("valid_until", mode="before")(_iso_field)


class CausalLink(Strict):
    cause: str
    effect: str
    mechanism: str = ""
    confidence: float = Field(0.7, ge=0.0, le=1.0)

    _ne = field_validator("cause", "effect")(_nonempty)


class Procedure(Strict):
    name: str
    steps: list[str] = Field(min_length=1)

    _ne = field_validator("name")(_nonempty)

    @field_validator("steps")
    @classmethod
    def _steps(cls, v: list[str]) -> list[str]:
        out = [s.strip() for s in v]
        if any(not s for s in out):
            raise ValueError("steps must not be empty strings")
        return out


class ExtractionResult(Strict):
    episode_id: str | None = None
    subject: str = ""
    summary: str = ""
    episode: str = Field("", description="the narrative (EverMemOS episode)")
    observed_at: str | None = Field(None, description="when the conversation happened (default: now)")
    project: str | None = None
    atomic_facts: list[AtomicFact] = Field(default_factory=list)
    foresight: list[ForesightItem] = Field(default_factory=list)
    profile: list[ProfileFact] = Field(default_factory=list)
    causal: list[CausalLink] = Field(default_factory=list)
    procedures: list[Procedure] = Field(default_factory=list)
    links: list[Link] = Field(default_factory=list)

    _t = field_validator("observed_at", mode="before")(_iso_field)


CONTRACTS: dict[str, type[BaseModel]] = {
    "reflection": ReflectionResult,
    "consolidation": ConsolidationResult,
    "memory": MemoryResult,
    "extraction": ExtractionResult,
}


# ---------------------------------------------------------------- loading


class Envelope(BaseModel):
    model_config = ConfigDict(extra="forbid")
    task_id: str
    agent_type: str
    status: Literal["complete", "error", "partial"]
    timestamp: datetime | None = None
    result: dict[str, Any] | None = None
    error: str | None = None


def _find_forbidden(obj: Any, path: str = "") -> str | None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            p = f"{path}.{k}" if path else str(k)
            if str(k).lower() in FORBIDDEN_KEYS:
                return p
            hit = _find_forbidden(v, p)
            if hit:
                return hit
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            hit = _find_forbidden(v, f"{path}.{i}" if path else str(i))
            if hit:
                return hit
    return None


def describe(exc: ValidationError) -> tuple[str, str]:
    err = exc.errors()[0]
    loc = ".".join(str(x) for x in err.get("loc", ())) or "(root)"
    msg = str(err.get("msg"))
    if err.get("type") == "extra_forbidden":
        msg = "unknown field (not part of the contract)"
    more = f" (+{exc.error_count() - 1} more problems)" if exc.error_count() > 1 else ""
    return loc, msg + more


def unwrap(kind: str, data: Any) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Return (bare result, envelope or None). Raises ContractError."""
    if kind not in KINDS:
        raise ContractError("KIND", f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
    if not isinstance(data, dict):
        raise ContractError("(root)", "expected a JSON object")
    if "agent_type" in data and "task_id" in data:
        try:
            env = Envelope.model_validate(data)
        except ValidationError as exc:
            loc, msg = describe(exc)
            raise ContractError(loc, msg) from None
        if env.status == "error":
            raise ContractError("status", f"the agent reported an error: {env.error or 'no detail'}")
        if env.agent_type not in AGENTS_FOR_KIND[kind]:
            raise ContractError("agent_type", f"{env.agent_type!r} results cannot be applied as {kind} "
                                f"(expected {' or '.join(AGENTS_FOR_KIND[kind])})")
        if env.result is None:
            raise ContractError("result", "missing")
        return env.result, env.model_dump(mode="json", exclude={"result"})
    return data, None


def validate(kind: str, result: dict[str, Any]) -> BaseModel | dict[str, Any]:
    hit = _find_forbidden(result)
    if hit:
        raise ContractError(hit, "the terminal creed is immutable; no result may change it")
    model = CONTRACTS.get(kind)
    if model is None:  # guardian: validated by its own applier
        return result
    try:
        return model.model_validate(result)
    except ValidationError as exc:
        loc, msg = describe(exc)
        raise ContractError(loc, msg) from None


def digest(result: Any) -> str:
    """sha256 of the canonical JSON of a result (bare, i.e. without its envelope)."""
    canon = json.dumps(result, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()
