"""Corpus cases for the repository's team memory (issue 31): ``<repo>/.sophia/team/`` is changed by people,
through review, so an agent's write, edit, copy, move or delete there is asked about, and so is an agent
running ``s3 team share`` / ``s3 team init --repo`` (the user's commands). Each has harmless twins:
reading the folder, committing it, suggesting, the kit's own ``~/.sophia/team`` (a team database's
settings), folders merely named ``team`` or ``.sophia`` elsewhere in the project.

``add(bash, tool, append)`` takes make_corpus's helpers. Categories: ``team_memory`` (ask) and
``harmless_team_memory`` (allow).
"""

from __future__ import annotations

from collections.abc import Callable

P = "/home/dev/projects/app"
H = "/home/dev"
Q, A = "ask", "allow"
T, TH = "team_memory", "harmless_team_memory"

ASKED = [
    "echo 'Run make itest' > .sophia/team/rule_itest.md",
    "printf '%s\\n' '---' 'kind: rule' '---' 'x' >> .sophia/team/rule_a.md",
    "cat > .sophia/team/rule_deploy.md <<'EOF'\n---\nkind: rule\n---\nDeploy on Fridays\nEOF",
    "cp notes/lesson.md .sophia/team/",
    "cp -r drafts/. .sophia/team",
    "mv draft.md .sophia/team/rule_new.md",
    "mv .sophia/team/rule_old.md /tmp/",
    "sed -i 's/never/always/' .sophia/team/rule_itest.md",
    "perl -pi -e 's/never/always/' .sophia/team/rule_itest.md",
    "rm .sophia/team/rule_itest.md",
    "rm -f .sophia/team/*.md",
    "rm -rf .sophia/team",
    "rm -rf .sophia",
    "find .sophia/team -name '*.md' -delete",
    "tee .sophia/team/rule_b.md < lesson.txt",
    "echo x | tee -a .sophia/team/proc_c.md",
    "truncate -s 0 .sophia/team/rule_itest.md",
    "ln -sf ../../notes.md .sophia/team/rule_link.md",
    "python3 -c \"open('.sophia/team/rule_py.md', 'w').write('---\\nkind: rule\\n---\\nx\\n')\"",
    f"echo 'shared by hand' > {P}/.sophia/team/fact_x.md",
    f"cd {P}/.sophia && rm team/rule_itest.md",
    "echo lesson > ../other-repo/.sophia/team/rule_x.md",
    "s3 team share rule_3fa2c1d4e5f6",
    "s3 team share proc_ab12 fact_cd34 --replace",
    "s3 team init --repo --share rule_3fa2c1d4e5f6",
]
HARMLESS = [
    "cat .sophia/team/rule_itest.md",
    "ls -la .sophia/team",
    "head -20 .sophia/team/*.md",
    "grep -rn pytest .sophia/team",
    "git diff -- .sophia/team",
    "git log --oneline -- .sophia/team",
    "git add .sophia/team && git commit -m 'team: share the itest rule'",
    "git status --short .sophia/team",
    "cp .sophia/team/rule_itest.md /tmp/review.md",
    "wc -l .sophia/team/*.md",
    "s3 team suggest",
    "s3 team suggest --json",
    "s3 team status",
    "s3 list team",
    "s3 recall 'integration tests'",
    "echo note > .sophia/notes.md",
    "mkdir -p docs/team && echo '# Team' > docs/team/README.md",
    "rm -rf src/sophia/team/__pycache__",
    "echo x > team/rule.md",
    "rm -rf .sophia-cache",
]


def add(bash: Callable[..., None], tool: Callable[..., None], append: Callable[[dict], None]) -> None:
    for cmd in ASKED:
        bash(cmd, Q, T)
    for cmd in HARMLESS:
        bash(cmd, A, TH)
    for name in ("Write", "Edit", "MultiEdit"):
        tool(name, f"{P}/.sophia/team/rule_itest.md", Q, T)
        tool(name, f"{P}/src/team/rule_itest.md", A, TH)
    tool("Write", f"{P}/.sophia/team/README.md", Q, T)
    tool("Write", "/home/dev/projects/other/.sophia/team/proc_x.md", Q, T)
    tool("Write", f"{P}/.sophia/notes.md", A, TH)
    tool("Write", f"{P}/docs/sophia/team.md", A, TH)
    tool("Edit", f"{H}/.sophia/team/notes.txt", A, TH)
    append({"tool_name": "Write", "tool_input": {"file_path": f"{P}/.sophia/team/rule_new.md",
            "content": "---\nkind: rule\nlearned_by: claude\n---\nAlways run make itest.\n"},
            "cwd": P, "expect": Q, "category": T})
