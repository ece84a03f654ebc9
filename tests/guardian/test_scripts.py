"""What a script will run (sophia.guardian.scripts, recipes): files on disk read, their commands judged."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from sophia.guardian import recipes, scripts
from sophia.guardian.analyze import analyze_tool
from sophia.guardian.shell import parse

from .conftest import hook_env, payload, probe_env_in, run_hook

HOME = "/home/dev"


def judge(project: Path, cmd: str, cwd: Path | None = None, home: str = HOME) -> tuple[str, str]:
    d = analyze_tool("Bash", {"command": cmd}, str(cwd or project), {"HOME": home, "CLAUDE_PROJECT_DIR": str(project)})
    return d.level, d.top.reason() if d.top else ""


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        if text.startswith("#!"):
            p.chmod(0o755)
    return root


def pkg(**s: str) -> str:
    return json.dumps({"name": "x", "scripts": s}, indent=2)


# -- package scripts ----------------------------------------------------------------------------


def test_a_package_script_is_judged_and_the_reason_names_file_and_line(tmp_path: Path) -> None:
    p = write(tmp_path / "app", {"package.json": pkg(build="tsc", clean="rm -rf ~/")})
    level, why = judge(p, "npm run clean")
    assert level == "deny"
    assert f"{p}/package.json, line 5" in why and 'the script "clean"' in why and "/home/dev" in why
    assert judge(p, "npm run build") == ("allow", "")


def test_pre_and_post_scripts_and_arguments_run_with_the_script(tmp_path: Path) -> None:
    p = write(tmp_path / "app", {"package.json": pkg(prebuild="git reset --hard origin/main", build="tsc",
                                                     deploy="rm -rf", postlint="rm -rf ~/.ssh", lint="eslint .")})
    assert judge(p, "npm run build")[0] == "deny"
    assert judge(p, "npm run lint")[0] == "deny"
    assert judge(p, "npm run deploy -- /")[0] == "deny"
    assert judge(p, "npm run deploy -- dist")[0] == "allow"


@pytest.mark.parametrize(("cmd", "expect"), [
    ("npm test", "deny"), ("npm t", "deny"), ("yarn test", "deny"), ("pnpm test", "deny"), ("bun run test", "deny"),
    ("bun test", "allow"),  # bun's own test runner, not the script
    ("yarn wipe", "deny"), ("pnpm wipe", "deny"), ("bun wipe", "deny"), ("npm wipe", "allow"),  # npm has no shorthand
    ("yarn add lodash", "allow"), ("pnpm -r wipe", "allow"),  # every workspace: judged as the call alone
    ("npm install", "deny"), ("npm ci", "deny"), ("yarn", "deny"), ("npm install left-pad", "allow"),
])
def test_package_manager_spellings(tmp_path: Path, cmd: str, expect: str) -> None:
    p = write(tmp_path / "app", {"package.json": pkg(test="jest && rm -rf /", wipe="rm -rf ~",
                                                     postinstall="git push --force origin main")})
    assert judge(p, cmd)[0] == expect


def test_nested_scripts_and_cycles(tmp_path: Path) -> None:
    p = write(tmp_path / "app", {"package.json": pkg(all="npm run a", a="npm run b", b="rm -rf ~",
                                                     loop="npm run loop", ping="npm run pong", pong="npm run ping")})
    level, why = judge(p, "npm run all")
    assert level == "deny" and why.count("runs the script") == 3
    assert judge(p, "npm run loop") == ("allow", "")
    assert judge(p, "npm run ping") == ("allow", "")


def test_the_nearest_package_json_above_the_cwd_and_prefix(tmp_path: Path) -> None:
    p = write(tmp_path / "app", {"package.json": pkg(clean="rm -rf ../"), "src/x.ts": "",
                                 "web/package.json": pkg(clean="rm -rf /")})
    assert judge(p, "npm run clean", cwd=p / "src")[0] == "deny"  # ../ of the package folder: the project's parent
    assert "web/package.json" in judge(p, "npm --prefix web run clean")[1]
    assert "web/package.json" in judge(p, "yarn --cwd web clean")[1]


def test_a_file_that_cannot_be_read_or_understood_leaves_the_call_as_it_was(tmp_path: Path) -> None:
    p = write(tmp_path / "app", {"package.json": "{ not json"})
    assert judge(p, "npm run clean") == ("allow", "")
    big = write(tmp_path / "big", {"package.json": pkg(clean="rm -rf ~", pad="x" * (scripts.MAX_BYTES + 10))})
    assert judge(big, "npm run clean") == ("allow", "")
    assert judge(tmp_path / "none", "npm run clean") == ("allow", "")


def test_a_fifo_or_device_is_never_opened(tmp_path: Path) -> None:
    p = tmp_path / "app"
    p.mkdir()
    os.mkfifo(p / "package.json")
    os.mkfifo(p / "run.sh")
    done = threading.Event()

    def go() -> None:
        judge(p, "npm run clean")
        judge(p, "bash run.sh")
        judge(p, "bash /dev/stdin")
        done.set()

    threading.Thread(target=go, daemon=True).start()
    assert done.wait(5), "the analyzer blocked on a FIFO"


# -- make ---------------------------------------------------------------------------------------

MAKEFILE = """\
BUILD := build
OUT ?= $(BUILD)/out
.PHONY: all clean distclean
all: $(OUT)/app

$(OUT)/app:
\tmkdir -p $(OUT) && go build -o $@ .

clean:
\trm -rf $(BUILD) \\
\t  *.o

distclean: clean
\t@rm -rf $(HOME)/.config
\t-$(MAKE) -C sub clean

wipe:
\trm -rf $(DIR)/
"""


def test_make_judges_the_recipe_its_prerequisites_and_make_variables(tmp_path: Path) -> None:
    p = write(tmp_path / "app", {"Makefile": MAKEFILE, "sub/Makefile": "clean:\n\trm -rf ~\n"})
    assert judge(p, "make") == ("allow", "")
    assert judge(p, "make clean") == ("allow", "")
    level, why = judge(p, "make distclean")
    assert level == "deny" and "Makefile, line 14" in why and "recipe of distclean" in why
    assert judge(p, "make -n distclean") == ("allow", "")
    assert judge(p, "make --dry-run distclean") == ("allow", "")
    assert "sub/Makefile, line 2" in judge(p, "make -C sub clean")[1]
    assert judge(p, "make clean BUILD=/")[0] == "deny"  # a command-line variable overrides the file's
    assert judge(p, "make wipe")[0] == "deny"  # an undefined variable is empty: `rm -rf /`
    assert judge(p, "make wipe DIR=build")[0] == "allow"
    assert judge(p, "make -j 4 clean") == ("allow", "")


def test_makefile_parser_reads_plain_make() -> None:
    mk = recipes.parse_makefile("A = x\nA += y\nB ?= $(A)\nC := $(shell date)\n.DEFAULT_GOAL := two\n"
                                "one:\n\techo 1\ntwo: one ; echo 2\n\t@echo $(B) $@ $$HOME $(C)\n", "/p")
    assert recipes.make_default_goal(mk) == "two"
    got = [(r.line, r.text) for r in recipes.make_recipes(mk, ["two"])]
    assert got == [(7, "echo 1"), (8, "echo 2"), (9, f"echo x y two $HOME {recipes.UNKNOWN_VAR}")]


# -- just and task ------------------------------------------------------------------------------


def test_just_recipes_with_parameters_dependencies_and_a_shebang(tmp_path: Path) -> None:
    p = write(tmp_path / "app", {"justfile": 'dir := "target"\n\ndefault: build\n\nbuild:\n    cargo build\n\n'
                                             "clean: build\n    rm -rf {{dir}}\n\nwipe what:\n    rm -rf {{what}}\n\n"
                                             "script:\n    #!/usr/bin/env bash\n    set -e\n    rm -rf \"$HOME\"\n"})
    assert judge(p, "just") == ("allow", "")
    assert judge(p, "just clean") == ("allow", "")
    assert judge(p, "just wipe /")[0] == "deny"
    assert judge(p, "just wipe target") == ("allow", "")
    level, why = judge(p, "just script")
    assert level == "deny" and "justfile, line 17" in why
    assert judge(p, "just --list") == ("allow", "")


def test_taskfile_tasks_deps_calls_and_block_commands(tmp_path: Path) -> None:
    tf = ("version: '3'\nvars:\n  OUT: build\ntasks:\n  default:\n    deps: [build]\n  build:\n    cmds:\n"
          "      - go build -o {{.OUT}}/app\n  release:\n    cmds:\n      - task: push\n  push:\n    cmds:\n"
          "      - cmd: git push --force origin main\n  reset:\n    cmds:\n      - |\n        git fetch\n"
          "        git reset --hard origin/main\n")
    p = write(tmp_path / "app", {"Taskfile.yml": tf})
    assert judge(p, "task") == ("allow", "")
    assert "Taskfile.yml, line 15" in judge(p, "task release")[1]
    level, why = judge(p, "task reset")
    assert level == "deny" and "Taskfile.yml, line 20" in why
    assert judge(p, "task --list") == ("allow", "")


def test_yaml_subset_and_what_it_refuses() -> None:
    doc = recipes.yaml_load("a:\n  - x\n  - k: v  # note\n    j: 'w'\nb: [1, two]\nc: |\n  l1\n  l2\n")
    assert doc == {"a": [(2, "x"), {"k": (3, "v"), "j": (4, "w")}], "b": [(5, "1"), (5, "two")], "c": (7, "l1\nl2")}
    with pytest.raises(recipes.YamlError):
        recipes.yaml_load("a: &anchor x\n")


# -- files run directly -------------------------------------------------------------------------

SETUP = """\
#!/bin/sh
set -e
SCRIPT_DIR="$(cd "$(dirname "$0")" && pwd)"
cd "$SCRIPT_DIR/.."
# rm -rf / would be a disaster
rm -rf build
td=$(mktemp -d || mktemp -d -t tmp)
rm -rf "$td"
pushd docs && rm -rf _build && popd
cleanup() { rm -rf "$1"; }
rm -rf "$(find . -name __pycache__)"
"""


def test_shell_files_by_path_by_shell_and_by_source(tmp_path: Path) -> None:
    p = write(tmp_path / "app", {"scripts/setup.sh": SETUP,
                                 "scripts/reset.sh": "#!/bin/bash\ncd \"$(dirname \"$0\")/..\"\ngit reset --hard\n",
                                 "scripts/arg.sh": "#!/bin/sh\nrm -rf \"$1\"\n", "env.sh": "export A=1\nrm -rf ~/.ssh\n"})
    for cmd in ("./scripts/setup.sh", "sh scripts/setup.sh", "bash scripts/arg.sh build", "bash -n scripts/reset.sh",
                "./scripts/missing.sh"):
        assert judge(p, cmd) == ("allow", ""), cmd
    level, why = judge(p, "./scripts/reset.sh")
    assert level == "deny" and f"{p}/scripts/reset.sh, line 3" in why
    (p / "bin").mkdir()
    (p / "bin/install").write_text("#!/bin/sh\ncp app ~/.bashrc\n")  # named like a program a rule knows
    for cmd in ("bash scripts/arg.sh /", "sh scripts/arg.sh ~", "source env.sh", ". env.sh", "sudo scripts/reset.sh",
                "cd scripts && ./reset.sh", "./bin/install"):
        assert judge(p, cmd)[0] == "deny", cmd


def test_python_and_node_files_only_literal_shell_commands(tmp_path: Path) -> None:
    p = write(tmp_path / "app", {
        "bad.py": "import os, subprocess\n\n# os.system('rm -rf /')\nsubprocess.run(['rm', '-rf', '/'])\n",
        "ok.py": "import shutil, subprocess, sys\nsubprocess.run(['rm', '-rf', sys.argv[1]])\n"
                 "subprocess.run(f'rm -rf {sys.argv[1]}', shell=True)\nshutil.rmtree(sys.argv[1])\n",
        "bad.js": "const cp = require('child_process');\ncp.execSync('git push --force origin main');\n",
        "ok.js": "const { exec } = require('child_process');\nconst m = /x/.exec('y');\nexec(`rm -rf ${dir}`);\n",
        "tool": "#!/usr/bin/env python3\nimport os\nos.system('rm -rf ~')\n"})
    level, why = judge(p, "python3 bad.py")
    assert level == "deny" and "bad.py, line 4" in why
    assert judge(p, "node bad.js")[0] == "deny"
    assert judge(p, "./tool")[0] == "deny"
    assert judge(p, "python ok.py /") == ("allow", "")
    assert judge(p, "node ok.js") == ("allow", "")


def test_inside_a_file_a_value_known_only_at_run_time_is_no_question_but_a_literal_disaster_is(tmp_path: Path) -> None:
    p = write(tmp_path / "app", {"a.sh": "#!/bin/sh\nrm -rf \"$BUILD\"\n", "b.sh": "#!/bin/sh\nrm -rf \"$BUILD/\"*\n"})
    assert judge(p, "./a.sh") == ("allow", "")
    assert judge(p, "rm -rf \"$BUILD\"")[0] == "ask"  # typed, the same command is asked about
    assert judge(p, "./b.sh")[0] == "deny"  # `rm -rf /*` when BUILD is unset


@pytest.mark.parametrize("cmd", [
    "rm -rf $X", "cd $(x); rm -rf build", "eval \"$CMD\"", "cat list | xargs rm -rf", "chmod -R 777 $X", "shred $X",
    "python3 -c \"import shutil,sys; shutil.rmtree(sys.argv[1])\" build",
    "python3 -c \"import os,sys; os.system('rm -rf ' + sys.argv[1])\"",
])
def test_every_ask_of_an_unknown_value_is_one_scripts_treats_as_doubt(cmd: str) -> None:
    """scripts.DOUBT recognises these asks by their words: a rule that rewords one breaks this test."""
    d = analyze_tool("Bash", {"command": cmd}, "/home/dev/projects/app", {"HOME": HOME})
    assert d.level == "ask" and d.top and scripts.DOUBT.search(d.top.why), (d.level, d.top)


def test_command_lines_point_at_the_command_not_a_comment_or_an_earlier_word() -> None:
    text = "# rm old\nformat=1\nrm -rf a \\\n  b\nif true; then\n  rm x\nfi\nargs+=(y)\n"
    lines = scripts.command_lines(text, parse(text), 10)
    assert lines == [11, 12, 14, 15, 17]


def test_reading_is_bounded_in_time(tmp_path: Path) -> None:
    body = "".join(f"echo step {i} && cp a{i} b{i}\n" for i in range(600))[: scripts.MAX_SHELL - 100]
    p = write(tmp_path / "app", {"long.sh": "#!/bin/sh\n" + body + "\nrm -rf ~\n"})
    t = time.process_time()
    assert judge(p, "bash long.sh")[0] == "deny"
    assert time.process_time() - t < 2.0


# -- through the real hook ----------------------------------------------------------------------


@pytest.mark.parametrize("cmd", ["npm run clean", "pnpm clean", "yarn clean", "make clean", "gmake clean",
                                 "cd x && make", "just clean", "task clean", "./scripts/x.sh", "scripts/x.sh",
                                 "bash x.sh", "FOO=1 ./run", "sudo ./x.sh"])
def test_script_runners_reach_the_analyzer(tmp_path: Path, cmd: str) -> None:
    env = probe_env_in(tmp_path, SOPHIA_GUARDIAN_RESIDENT="0")
    assert run_hook(payload(command=cmd), env).reason == "reached"


def test_a_package_script_through_the_real_hook(tmp_path: Path) -> None:
    p = write(tmp_path / "app", {"package.json": pkg(clean="rm -rf ~/", build="tsc")})
    (tmp_path / "sh").mkdir()
    env = hook_env(tmp_path / "sh", CLAUDE_PROJECT_DIR=str(p), SOPHIA_GUARDIAN_RESIDENT="0")
    res = run_hook(payload(command="npm run clean", cwd=str(p)), env)
    assert res.decision == "deny" and "package.json, line" in res.reason
    assert run_hook(payload(command="npm run build", cwd=str(p)), env).decision == "allow"
