"""The layout stays readable: docs/architecture.md names every module with its job, no module
grows past 600 lines, and no module imports one that imports it back."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "docs" / "architecture.md"
MAX_LINES = 600


def modules() -> list[str]:
    """Every hand-written module of arena/ and engine/ (not the generated protocol code, not
    the starter templates, which are bots, not arena's code)."""
    found = []
    for path in sorted([*ROOT.glob("arena/**/*.py"), *ROOT.glob("engine/**/*.py")]):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith("arena/v1/") or re.match(r"arena/starters/[^/]+/", relative):
            continue
        found.append(relative)
    return found


def listed() -> dict[str, str]:
    """Module path -> its one-line job, from the architecture page's lines
    "- `path`: job" (or "- `path`, `path`: job" for modules that share one)."""
    found = {}
    for line in ARCHITECTURE.read_text().splitlines():
        if match := re.match(r"- ((?:`[\w/]+\.py`(?:, )?)+): (.+)", line):
            for path in re.findall(r"`([\w/]+\.py)`", match[1]):
                found[path] = match[2]
    return found


def test_every_module_is_listed_with_its_job():
    missing = [module for module in modules() if module not in listed()]
    assert not missing, f"add these to docs/architecture.md, each with its job: {missing}"


def test_every_listed_module_exists():
    gone = [module for module in listed() if not (ROOT / module).is_file()]
    assert not gone, f"docs/architecture.md lists modules that are gone: {gone}"


@pytest.mark.parametrize("module", modules())
def test_no_module_is_longer_than_600_lines(module):
    lines = len((ROOT / module).read_text().splitlines())
    assert lines <= MAX_LINES, f"{module} has {lines} lines: split it by job"


def _imports(module: str, known: set[str]) -> set[str]:
    """The arena/engine modules `module` imports, anywhere in it (an import deferred into a
    function still ties the two modules together), but for names imported for type
    annotations only (under `if TYPE_CHECKING:`), which never run. `from package import
    name` imports the module `package.name` where there is one, else the package."""
    tree = ast.parse((ROOT / module).read_text())
    package = module.removesuffix(".py").replace("/", ".").removesuffix(".__init__")
    names = set()
    for node in _runtime_nodes(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - (module.endswith("__init__.py")))[0]
                base = f"{parent}.{base}".rstrip(".")
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                names.add(submodule if submodule in known else base)
    return {name for name in names if name in known}


def _runtime_nodes(tree: ast.AST):
    """Every node of `tree` but those under `if TYPE_CHECKING:`."""
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, ast.If) and getattr(child.test, "id", None) == "TYPE_CHECKING":
            continue
        yield child
        yield from _runtime_nodes(child)


def test_no_import_cycle_between_modules():
    names = {m.removesuffix(".py").replace("/", ".").removesuffix(".__init__"): m
             for m in modules()}
    graph = {name: _imports(path, set(names)) - {name} for name, path in names.items()}
    cycles = []

    def visit(node, trail, seen):
        for target in graph[node]:
            if target == trail[0]:
                cycles.append(" -> ".join([*trail, target]))
            elif target not in seen and target > trail[0]:
                seen.add(target)
                visit(target, [*trail, target], seen)

    for start in sorted(graph):
        visit(start, [start], {start})
    assert not cycles, "import cycles: " + "; ".join(cycles[:5])


def test_commands_that_print_text_load_no_page_templates_and_no_bot_checker():
    """Every command pays its imports at each start: `arena ladder` and `arena replay` print
    text unless asked for HTML, so jinja2 waits for a page, and the bot checker (which loads
    the match and the engines) for a league that checks its bots."""
    import subprocess
    import sys
    code = ("import sys, arena.cli.ladder, arena.cli.replay, arena.cli.league; "
            "print(sorted({'jinja2', 'arena.botcheck'} & set(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    assert done.stdout.strip() == "[]"
