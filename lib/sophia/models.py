"""Pydantic models of the state files (seed Appendix A) plus Config and the episode index.

Imported by the CLI and ``s3 apply``; never by hooks (pydantic costs ~90 ms to import).
Stored objects tolerate unknown keys (``extra="allow"``) so that a newer or hand-edited
file loses nothing on a round trip through an older kit.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar, Literal
from uuid import uuid4

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from . import config_defaults, gaps
from .timeutil import now

TERMINAL_CREED: tuple[str, ...] = (
    "Prioritize user data safety above task completion.",
    "Do not fake tool outputs; execute them or fail.",
    "Admit ignorance rather than hallucinating.",
    "Maintain transparent capability tracking.",
    "Respect user privacy boundaries.",
)

SCHEMA_VERSION = config_defaults.SCHEMA_VERSION


class Stored(BaseModel):
    model_config = ConfigDict(extra="allow", validate_assignment=True)


class SkillRecord(Stored):
    """Tracks proficiency in a specific skill domain."""

    proficiency: float = Field(0.5, ge=0.0, le=1.0)
    experience_count: int = Field(0, ge=0)
    success_rate: float = Field(0.5, ge=0.0, le=1.0)
    last_refined: datetime = Field(default_factory=now)


class KnowledgeGap(Stored):
    """One knowledge gap: what is not known, where it was found, whether it is still open
    (:mod:`sophia.gaps` says what each field means and where a gap is shown)."""

    id: str
    text: str
    project: str | None = None
    is_global: bool = False
    key: str | None = None
    source: str = "unknown"
    source_ids: list[str] = Field(default_factory=list)
    opened_at: datetime | None = None
    closed_at: datetime | None = None
    closed_by: str | None = None

    @property
    def is_open(self) -> bool:
        return self.closed_at is None


class SelfModel(Stored):
    """The agent's persistent identity and capabilities. What is installed (skills, hooks, agents)
    is not stored here: ``s3 status`` reads it from the install manifest (``install.inventory``)."""

    agent_id: str = "sophia-system3"
    identity_goal: str = "Assist users effectively while learning and improving"
    terminal_creed: list[str] = Field(default_factory=lambda: list(TERMINAL_CREED))
    capabilities: dict[str, SkillRecord] = Field(default_factory=dict)
    knowledge_gaps: list[KnowledgeGap] = Field(default_factory=list)
    total_sessions: int = 0
    total_episodes: int = 0
    last_session: datetime | None = None
    last_reflection: datetime | None = None
    created_at: datetime = Field(default_factory=now)
    updated_at: datetime = Field(default_factory=now)

    @field_validator("knowledge_gaps", mode="before")
    @classmethod
    def _gap_records(cls, value: Any) -> Any:
        """An old string gap (a tree not migrated yet, a hand edit) reads as an unscoped record."""
        if not isinstance(value, list):
            return value
        return [gaps.record(g) if isinstance(g, str) else (gaps.from_value(g) or g) for g in value]


class AffectState(Stored):
    valence: float = Field(0.0, ge=-1.0, le=1.0)
    arousal: float = Field(0.5, ge=0.0, le=1.0)
    stress_indicator: float = Field(0.0, ge=0.0, le=1.0)
    idle_minutes: int = 0


class UserModel(Stored):
    user_id: str = "default"
    inferred_goals: list[str] = Field(default_factory=list)
    knowledge_level: dict[str, Literal["NOVICE", "INTERMEDIATE", "EXPERT"]] = Field(default_factory=dict)
    preferences: dict[str, Any] = Field(default_factory=dict)
    affect_state: AffectState = Field(default_factory=AffectState)
    trust_score: float = Field(0.5, ge=0.0, le=1.0)
    interaction_count: int = 0
    last_interaction: datetime | None = None
    topics_discussed: list[str] = Field(default_factory=list)
    successful_patterns: list[str] = Field(default_factory=list)
    created_at: datetime = Field(default_factory=now)
    updated_at: datetime = Field(default_factory=now)


Outcome = Literal["SUCCESS", "FAILURE", "PARTIAL", "UNKNOWN"]


class Episode(Stored):
    """One coding session's experience trace (seed 16.4, plus project, git context and the client)."""

    id: str
    session_id: str
    started_at: datetime
    ended_at: datetime
    end_trigger: Literal["stop_hook", "session_end", "reflect_command", "idle_timeout"] = "stop_hook"
    goal: str | None = None
    goal_summary: str = ""
    chain_of_thought: list[str] = Field(default_factory=list)
    actions: list[dict[str, Any]] = Field(default_factory=list)
    tool_call_count: int = 0
    outcome: Outcome = "UNKNOWN"
    error_analysis: str | None = None
    heuristics: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    embedding: list[float] | None = None
    trivial: bool = False
    consolidated: bool = False
    project: str | None = None
    git_branch: str | None = None
    git_commit: str | None = None
    files_touched: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)
    agent: Literal["claude_code", "codex"] | None = None  # which client ran it (None: recorded before Codex)


class IndexEntry(Stored):
    id: str
    timestamp: datetime
    goal_summary: str = ""
    outcome: Outcome = "UNKNOWN"
    tool_call_count: int = 0
    heuristics_count: int = 0
    trivial: bool = False
    consolidated: bool = False
    keywords: list[str] = Field(default_factory=list)
    project: str | None = None
    session_id: str | None = None


class EpisodeIndex(Stored):
    last_updated: datetime | None = None
    total_episodes: int = 0
    entries: list[IndexEntry] = Field(default_factory=list)


class SemanticRule(Stored):
    id: str = Field(default_factory=lambda: f"rule_{uuid4().hex[:8]}")
    trigger_concept: str
    rule_content: str
    source: Literal["reflection", "manual", "consolidation"] = "reflection"
    source_episodes: list[str] = Field(default_factory=list)
    confidence: float = Field(0.8, ge=0.0, le=1.0)
    last_validated: datetime | None = None
    validation_count: int = 0
    created_at: datetime = Field(default_factory=now)


class AuditResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    passed: bool
    reason: str = ""
    risk_level: Literal["low", "medium", "high"] = "low"
    concerns: list[str] = Field(default_factory=list)
    creed_violations: list[str] = Field(default_factory=list)
    recommendation: str | None = None


class AgentResult(BaseModel):
    """The envelope every subagent writes to ``agent_results/{task_id}.json``."""

    model_config = ConfigDict(extra="forbid")
    task_id: str
    agent_type: str
    status: Literal["complete", "error", "partial"]
    timestamp: datetime = Field(default_factory=now)
    result: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None


def _setting(key: str) -> Any:
    """The field for one config key: default and description from ``config_defaults``."""
    s = config_defaults.BY_KEY[key]
    if isinstance(s.default, list):
        return Field(default_factory=list, description=s.doc)
    return Field(s.default, description=s.doc)


class _Checked(Stored):
    """Validated by ``config_defaults.check`` (the one statement of what each key accepts)."""

    section: ClassVar[str] = ""

    @model_validator(mode="before")
    @classmethod
    def _check(cls, data: Any) -> Any:
        raw = data
        if isinstance(data, dict):  # on assignment the nested sections arrive as models
            raw = {k: v.model_dump(mode="json") if isinstance(v, BaseModel) else v for k, v in data.items()}
        _, problems = config_defaults.check({cls.section: raw} if cls.section else raw, only=cls.section)
        if problems:
            raise ValueError("; ".join(problems))
        return data


class GuardianConfig(_Checked):
    section: ClassVar[str] = "guardian"
    mode: str = _setting("guardian.mode")
    allow: list[str] = _setting("guardian.allow")
    deny: list[str] = _setting("guardian.deny")
    mcp_allow: list[str] = _setting("guardian.mcp_allow")
    mcp_deny: list[str] = _setting("guardian.mcp_deny")
    tier3_enabled: bool = _setting("guardian.tier3_enabled")


class ContextConfig(_Checked):
    section: ClassVar[str] = "context"
    session_start_enabled: bool = _setting("context.session_start_enabled")
    session_start_max_tokens: int = _setting("context.session_start_max_tokens")
    prompt_context_enabled: bool = _setting("context.prompt_context_enabled")
    prompt_context_max_items: int = _setting("context.prompt_context_max_items")
    prompt_context_min_score: float = _setting("context.prompt_context_min_score")
    include_ingested: bool = _setting("context.include_ingested")


class Config(_Checked):
    """config.json. Defaults, allowed values and descriptions live in ``config_defaults.SETTINGS``;
    a test holds these fields, that table and ``templates/config.json`` equal."""

    schema_version: str = _setting("schema_version")
    embedding_provider: str = _setting("embedding_provider")
    embedding_model: str = _setting("embedding_model")
    embedding_backend: str = _setting("embedding_backend")
    embedding_idle_seconds: int = _setting("embedding_idle_seconds")
    embedding_batch_size: int = _setting("embedding_batch_size")
    embedding_threads: int = _setting("embedding_threads")
    reflection_trigger: str = _setting("reflection_trigger")
    reflection_every_n_episodes: int = _setting("reflection_every_n_episodes")
    reflection_max_turns: int = _setting("reflection_max_turns")
    reflection_timeout_seconds: int = _setting("reflection_timeout_seconds")
    consolidation_min_episodes: int = _setting("consolidation_min_episodes")
    learning_enabled: bool = _setting("learning_enabled")
    learning_daily_max_jobs: int = _setting("learning_daily_max_jobs")
    learning_daily_max_usd: float = _setting("learning_daily_max_usd")
    learning_model: str = _setting("learning_model")
    learning_exclude_projects: list[str] = _setting("learning_exclude_projects")
    current_user: str = _setting("current_user")
    guardian: GuardianConfig = Field(default_factory=GuardianConfig)
    context: ContextConfig = Field(default_factory=ContextConfig)
