"""What a rule applies to, guessed from the technologies and topics its words name (``s3 learn``
without ``--domain``). Standard library only.

Only whole words listed here count (no stemming, no first-word fallback): an insight that names
none of them is "General". A stemmed fragment ("Alway") or a function word ("Instead") can
never come out.
"""

from __future__ import annotations

import re

GENERAL = "General"

# Domain name -> the lower-case words that name it. A word belongs to one domain only.
VOCABULARY: dict[str, tuple[str, ...]] = {
    "Git": ("git", "github", "gitlab", "rebase", "rebasing", "commit", "commits", "branch", "branches",
            "stash", "cherry-pick", "gitignore"),
    "Docker": ("docker", "dockerfile", "dockerfiles", "container", "containers", "podman"),
    "Kubernetes": ("kubernetes", "k8s", "kubectl", "helm", "pod", "pods"),
    "Python": ("python", "pip", "venv", "virtualenv", "django", "flask", "fastapi", "pydantic", "mypy",
               "ruff", "poetry", "pyproject"),
    "JavaScript": ("javascript", "js", "nodejs", "npm", "yarn", "pnpm", "typescript", "tsc",
                   "react", "jsx", "tsx", "eslint"),
    "Rust": ("rust", "cargo", "rustc", "crate", "crates", "clippy"),
    "Go": ("golang", "goroutine", "goroutines", "gofmt"),
    "Java": ("java", "maven", "gradle", "jvm", "kotlin"),
    "C/C++": ("c++", "cpp", "cmake", "gcc", "clang", "makefile"),
    "Shell": ("bash", "shell", "zsh", "shellcheck", "posix", "sed", "awk", "grep"),
    "Database": ("database", "databases", "db", "sql", "sqlite", "postgres", "postgresql", "mysql",
                 "mariadb", "mongodb", "redis", "migration", "migrations", "schema", "transaction",
                 "transactions", "query", "queries", "orm"),
    "Testing": ("test", "tests", "testing", "pytest", "unittest", "jest", "mocha", "fixture", "fixtures",
                "mock", "mocks", "coverage", "tdd", "bats", "flaky"),
    "Security": ("security", "secret", "secrets", "password", "passwords", "credential", "credentials",
                 "auth", "authentication", "oauth", "ssl", "tls", "encryption", "vulnerability", "cve",
                 "xss", "csrf"),
    "API": ("api", "apis", "http", "https", "endpoint", "endpoints", "graphql", "grpc", "webhook",
            "webhooks"),
    "CI/CD": ("ci", "jenkins", "pipeline", "pipelines", "workflow", "workflows"),
    "Deployment": ("deploy", "deploys", "deploying", "deployment", "deployments", "release", "releases",
                   "rollout", "rollback", "staging", "production"),
    "Infrastructure": ("aws", "gcp", "azure", "terraform", "ansible", "nginx", "dns", "server", "servers"),
    "Linux": ("linux", "systemd", "apt", "ubuntu", "debian", "cron", "kernel"),
    "Performance": ("performance", "latency", "profiling", "profiler", "cache", "caching", "benchmark",
                    "benchmarks", "throughput"),
    "Concurrency": ("thread", "threads", "threading", "async", "asyncio", "concurrency", "concurrent",
                    "lock", "locks", "deadlock", "mutex"),
    "Debugging": ("debug", "debugging", "debugger", "traceback", "stacktrace", "breakpoint"),
    "Documentation": ("docs", "documentation", "readme", "docstring", "docstrings", "changelog"),
    "Frontend": ("css", "html", "frontend", "dom", "browser"),
    "Logging": ("logs", "logging", "logger", "monitoring", "metrics"),
}

_DOMAIN_OF = {word: name for name, words in VOCABULARY.items() for word in words}
_WORD = re.compile(r"[a-z0-9][a-z0-9+#-]*")


def guess_domain(text: str) -> str:
    """The domain whose words the text names most often (the earliest named on a tie), else General."""
    hits: dict[str, list[int]] = {}
    for pos, word in enumerate(_WORD.findall((text or "").lower())):
        name = _DOMAIN_OF.get(word) or _DOMAIN_OF.get(word.rstrip("-"))
        if name:
            hits.setdefault(name, []).append(pos)
    if not hits:
        return GENERAL
    return min(hits, key=lambda name: (-len(hits[name]), hits[name][0]))
