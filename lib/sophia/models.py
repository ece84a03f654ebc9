"""Pydantic models of the state files (seed Appendix A) plus Config and the episode index.

Imported by the CLI and ``s3 apply``; never by hooks (pydantic costs ~90 ms to import).
Stored objects tolerate unknown keys (``extra="allow"``) so that a newer or hand-edited
file loses nothing on a round trip through an older kit.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from uuid import uuid4

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .timeutil import now

TERMINAL_CREED: tuple[str, ...] = (
    "Prioritize user data safety above task completion.",
    "Do not fake tool outputs; execute them or fail.",
    "Admit ignorance rather than hallucinating.",
    "Maintain transparent capability tracking.",
    "Respect user privacy boundaries.",
)

SCHEMA_VERSION = "1.1.0"


class Stored(BaseModel):
    model_config = ConfigDict(extra="allow", validate_assignment=True)


class SkillRecord(Stored):
    """Tracks proficiency in a specific skill domain."""

    proficiency: float = Field(0.5, ge=0.0, le=1.0)
    experience_count: int = Field(0, ge=0)
    success_rate: float = Field(0.5, ge=0.0, le=1.0)
    last_refined: datetime = Field(default_factory=now)


class AgentState(Stored):
    status: Literal["ACTIVE", "IDLE", "REFLECTION", "ERROR"] = "IDLE"
    active_goal: str | None = None
    tokens_used_session: int = 0
    api_calls_session: int = 0


class SelfModel(Stored):
    """The agent's persistent identity and capabilities."""

    agent_id: str = "sophia-system3"
    identity_goal: str = "Assist users effectively while learning and improving"
    terminal_creed: list[str] = Field(default_factory=lambda: list(TERMINAL_CREED))
    capabilities: dict[str, SkillRecord] = Field(default_factory=dict)
    knowledge_gaps: list[str] = Field(default_factory=list)
    current_state: AgentState = Field(default_factory=AgentState)
    installed_skills: list[str] = Field(default_factory=list)
    installed_hooks: list[str] = Field(default_factory=list)
    available_agents: list[str] = Field(default_factory=list)
    total_sessions: int = 0
    total_episodes: int = 0
    last_session: datetime | None = None
    last_reflection: datetime | None = None
    created_at: datetime = Field(default_factory=now)
    updated_at: datetime = Field(default_factory=now)


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
    """One Claude Code session's experience trace (seed 16.4, plus project and git context)."""

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


class GuardianConfig(Stored):
    mode: Literal["enforce", "warn", "off"] = "enforce"
    allow: list[str] = Field(default_factory=list, description="regexes; a matching command is always allowed")
    deny: list[str] = Field(default_factory=list, description="regexes; a matching command is always denied")


class ContextConfig(Stored):
    session_start_enabled: bool = True
    session_start_max_tokens: int = Field(2000, ge=100, le=20000)
    prompt_context_enabled: bool = True
    prompt_context_max_items: int = Field(3, ge=0, le=20)
    prompt_context_min_score: float = 0.35
    include_ingested: bool = Field(False, description="inject ingested conversations (s3 ingest) into sessions")


class Config(Stored):
    schema_version: str = SCHEMA_VERSION
    embedding_provider: Literal["local", "none", "openai"] = "local"
    embedding_model: str = "all-MiniLM-L6-v2"
    embedding_backend: Literal["auto", "numpy", "sqlite-vec"] = "auto"
    embedding_idle_seconds: int = Field(900, ge=1, description="the embedding service exits after this idle time")
    embedding_batch_size: int = Field(32, ge=1, le=1024)
    embedding_threads: int = Field(0, ge=0, le=64, description="torch threads; 0 = min(2, cores)")
    reflection_trigger: Literal["manual", "on_session_end", "after_n_episodes"] = "manual"
    reflection_every_n_episodes: int = Field(10, ge=1)
    guardian_tier3_enabled: bool = True
    consolidation_min_episodes: int = Field(5, ge=1)
    user_mode: Literal["single", "multi"] = "single"
    current_user: str = "default"
    guardian: GuardianConfig = Field(default_factory=GuardianConfig)
    context: ContextConfig = Field(default_factory=ContextConfig)

    @field_validator("current_user")
    @classmethod
    def _safe_user(cls, v: str) -> str:
        if not v or "/" in v or v.startswith("."):
            raise ValueError("current_user must be a plain name (no '/' and not starting with '.')")
        return v
