"""The release table: every switch decided in one place, unknown releases refused."""

import dataclasses
import pathlib
import re
import subprocess
import sys

import pytest

from rcusim.errors import ScenarioError
from rcusim.input import releases
from rcusim.input.releases import NEWEST, SWITCHES, ReleaseSwitches, parse_release, release_switches


def test_every_switch_has_a_field_and_a_source():
    assert [f.name for f in dataclasses.fields(ReleaseSwitches)] == [s.name for s in SWITCHES]
    for s in SWITCHES:
        assert s.introduced_by and s.meaning, s.name
        assert releases.OLDEST <= s.since <= NEWEST, s.name


@pytest.mark.parametrize("switch", SWITCHES, ids=lambda s: s.name)
def test_switch_turns_on_at_its_release(switch):
    before = switch.since[:-1] + (switch.since[-1] - 1,)
    assert getattr(release_switches(switch.since), switch.name) is True
    assert getattr(release_switches(before), switch.name) is False


def test_nothing_else_compares_releases():
    # Release boundaries live only in rcusim/input/releases.py.
    root = pathlib.Path(releases.__file__).parent
    pattern = re.compile(r"release\w*\s*(<|>|<=|>=)\s*\(\d")
    offenders = [str(p.relative_to(root)) for p in root.rglob("*.py")
                 if p.name != "releases.py" and pattern.search(p.read_text())]
    assert offenders == []


@pytest.mark.parametrize("text", ["2.6", "2.6.4", "2.6.39", "3.0", "3.19", "4.20", "5.19", "6.0", "6.17", "6.19", "7.0"])
def test_known_releases_are_accepted(text):
    assert parse_release(text)[:2] == tuple(int(x) for x in text.split(".")[:2])


@pytest.mark.parametrize("text", ["7.9", "2.4", "2.5", "2.6.40", "3.20", "4.21", "5.20", "6.20",
                                  f"{NEWEST[0]}.{NEWEST[1] + 1}"])
def test_unknown_releases_are_refused_with_the_range(text):
    with pytest.raises(ScenarioError) as exc:
        parse_release(text)
    message = str(exc.value)
    assert "is not a release rcusim models" in message
    assert '"2.6"' in message and f'"{NEWEST[0]}.{NEWEST[1]}"' in message


def test_cli_refuses_an_unknown_release_in_one_line(tmp_path):
    root = pathlib.Path(__file__).resolve().parents[1]
    result = subprocess.run([sys.executable, "-m", "rcusim", "run", "scenarios/sync_rcu_10k.yaml",
                             "--set", "kernel.release=7.9", "--out", str(tmp_path / "out")],
                            capture_output=True, text=True, cwd=root)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "kernel.release" in lines[0] and "7.9" in lines[0], result.stderr
    assert not (tmp_path / "out").exists()


def test_stable_patches_from_their_sublevel_in_their_series():
    from rcusim.input.releases import stable_patches
    assert "sched-idle-consolidate-special-cases" in stable_patches("6.12.117")
    assert "sched-idle-consolidate-special-cases" in stable_patches("6.12.78")
    assert stable_patches("6.12.77") == ("sched-base-slice-700us", "sched-newidle-proportional")
    assert stable_patches("6.12.64") == ("sched-base-slice-700us",)
    assert stable_patches("6.12.30") == ()
    assert stable_patches("6.13.117") == ()
    assert stable_patches("6.12") == ()


def test_docs_list_every_switch():
    text = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "releases.md").read_text()
    for s in SWITCHES:
        row = next((line for line in text.splitlines() if line.startswith(f"| `{s.name}` |")), None)
        assert row is not None, s.name
        assert f"| v{'.'.join(map(str, s.since))} |" in row, s.name
