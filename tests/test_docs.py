"""The documentation: README.md stays a short front door, every relative link of README.md
and docs/*.md leads somewhere, and docs/scenarios.md names the keys the models do not hold
(top-level and sweep keys, boot parameters); its generated key reference of the models' keys
is checked by tests/test_schema.py.

Each check is a function returning what it found wrong, so that the tests can show on
made-up input that it does find problems."""

from __future__ import annotations

import re
from pathlib import Path

from rcusim.input.bootargs import PARAMETERS
from rcusim.input.scenario import TOP_KEYS
from rcusim.commands.sweep import SWEEP_KEYS

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
SCENARIOS_DOC = DOCS / "scenarios.md"

README_MAX_LINES = 250
FIRST_COMMANDS = [
    'pip install -e . && python -m rcusim run scenarios/sync_rcu_10k.yaml',
    'pip install -e ".[test]" && python -m pytest',
]


def markdown_pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


# --------------------------------------------------------------------------
# README
# --------------------------------------------------------------------------

def first_code_block(text: str) -> list[str]:
    """Lines of the first fenced code block, without the fences."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("```"))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("```"))
    return lines[start + 1:end]


def commands_of(block: list[str]) -> list[str]:
    """The commands of a shell block: each line without its trailing comment."""
    commands = []
    for line in block:
        command = re.sub(r"\s+#.*$", "", line).strip()
        if command:
            commands.append(command)
    return commands


def test_readme_is_short():
    n = len(README.read_text().splitlines())
    assert n <= README_MAX_LINES, f"README.md has {n} lines; move detail into docs/"


def test_readme_starts_with_the_two_commands():
    text = README.read_text()
    assert text.startswith("# rcusim\n")
    assert commands_of(first_code_block(text)) == FIRST_COMMANDS


def test_ci_runs_the_readme_test_command_and_lists_the_slowest_tests():
    test_command = FIRST_COMMANDS[1].split(" && ")[1]
    ci = [line.replace("python3 ", "python ") for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert test_command in ci
    addopts = re.search(r'^addopts = "(.*)"$', (ROOT / "pyproject.toml").read_text(), re.M)[1]
    assert "--durations=15" in addopts.split()


def test_first_block_check_can_fail():
    wrong = "# rcusim\n\n```sh\npip install -e . && python -m pytest   # tests\n```\n"
    assert commands_of(first_code_block(wrong)) != FIRST_COMMANDS
    right = "# rcusim\n\n```sh\n" + "\n".join(c + "   # why" for c in FIRST_COMMANDS) + "\n```\n"
    assert commands_of(first_code_block(right)) == FIRST_COMMANDS


# --------------------------------------------------------------------------
# Links
# --------------------------------------------------------------------------

_FENCE = re.compile(r"^(```|~~~)")
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def _prose_lines(text: str):
    """Lines outside fenced code blocks."""
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line.strip()):
            fenced = not fenced
            continue
        if not fenced:
            yield line


def _strip_code_spans(line: str) -> str:
    return re.sub(r"`[^`]*`", "", line)


def links(text: str) -> list[str]:
    """Targets of the markdown links and images of `text`, outside code."""
    found = []
    for line in _prose_lines(text):
        found += _LINK.findall(_strip_code_spans(line))
    return found


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, markup and punctuation other than
    '-' and '_' dropped, spaces turned into '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)   # links keep their text
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Anchors of the headings of `text`; repeated headings get -1, -2, ... as on GitHub."""
    seen: dict[str, int] = {}
    result = set()
    for line in _prose_lines(text):
        m = _HEADING.match(line)
        if not m:
            continue
        base = github_anchor(m.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        result.add(base if n == 0 else f"{base}-{n}")
    return result


def broken_links(page: Path, text: str | None = None) -> list[str]:
    """Relative links of `page` whose file (or heading) does not exist."""
    text = page.read_text() if text is None else text
    problems = []
    for target in links(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):   # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = page if not path else (page.parent / path).resolve()
        if not dest.exists():
            problems.append(f"{page.name}: {target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(text if not path else dest.read_text()):
            problems.append(f"{page.name}: {target}: no such heading in {dest.name}")
    return problems


def test_relative_links_resolve():
    problems = [p for page in markdown_pages() for p in broken_links(page)]
    assert problems == []


def test_pages_link_to_something():
    # The link checker sees the links: every page has some, and the README its figure.
    for page in markdown_pages():
        assert links(page.read_text()), page.name
    assert any(t.endswith(".png") for t in links(README.read_text()))


def test_link_check_can_fail():
    page = DOCS / "model.md"
    text = ("# Title\n\n## A heading (with `code`, commas)\n\n"
            "[ok](validation.md) [ok](#a-heading-with-code-commas) ![img](expedited_storm_32cpu.png)\n"
            "[bad](nothing_here.md) ![bad](docs/expedited_storm_32cpu.png) [bad](#no-such-heading)\n"
            "[bad](validation.md#no-such-heading) [web](https://example.org/x.md)\n"
            "```\n[in code](not_checked.md)\n```\n")
    assert broken_links(page, text) == [
        "model.md: nothing_here.md: no such file",
        "model.md: docs/expedited_storm_32cpu.png: no such file",
        "model.md: #no-such-heading: no such heading in model.md",
        "model.md: validation.md#no-such-heading: no such heading in validation.md",
    ]


def test_github_anchor_rules():
    assert github_anchor("`synchronize_rcu()` with 10,000 callers (seed 000)") == \
        "synchronize_rcu-with-10000-callers-seed-000"
    assert github_anchor("kfree_rcu() floods: rcuscale's kfree test (seed 001)") == \
        "kfree_rcu-floods-rcuscales-kfree-test-seed-001"
    assert anchors("## Tests\n### Tests\n```\n# not a heading\n```\n") == {"tests", "tests-1"}


# --------------------------------------------------------------------------
# docs/scenarios.md names the keys outside the models
# --------------------------------------------------------------------------

def missing_keys(doc: str) -> list[str]:
    """Top-level keys of scenario files, keys of sweep files and boot parameters not named as
    `key` in `doc`."""
    named = set(re.findall(r"`([^`\s]+)`", doc))
    wanted = {f"scenario.{key}" for key in TOP_KEYS}
    wanted |= {f"sweep.{key}" for key in SWEEP_KEYS}
    wanted |= {f"bootargs.{name}" for name in PARAMETERS}
    return sorted(w for w in wanted if w.split(".", 1)[1] not in named)


def test_scenarios_doc_names_every_key_outside_the_models():
    assert missing_keys(SCENARIOS_DOC.read_text()) == []


def test_scenarios_doc_check_can_fail():
    doc = SCENARIOS_DOC.read_text()
    without = doc.replace("`plot`", "plot").replace("`rcutree.blimit`", "rcutree.blimit")
    assert missing_keys(without) == ["bootargs.rcutree.blimit", "sweep.plot"]
