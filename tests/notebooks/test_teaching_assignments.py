"""The teaching page's plan against the chapters' exercises: every exercise assigned, and each lab command that
reruns an assigned exercise's notebook with one of its parameters uses the exercise's value (lecturer's items 24/25)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEACHING = ROOT / "book" / "teaching.md"
_SESSION = re.compile(r"^### Session (?P<n>\d+)\b(?P<body>.*?)(?=^### |^## |\Z)", re.M | re.S)
_REF = re.compile(r"\{ref\}`(?P<label>ex-[^`]+)`")
_SOLUTION = re.compile(r"^````\{solution\} (?P<label>ex-\S+)\s*$(?P<body>.*?)^````\s*$", re.M | re.S)
_RERUN = re.compile(r"`(?P<command>crsbench notebook [^`]+)`")
_PLACEHOLDER = re.compile(r"\b[A-Z][A-Z0-9_]{2,}\b")


def exercise_labels() -> list[str]:
    """Every exercise label of every chapter."""
    labels = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        text = "\n".join("".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
                         if c["cell_type"] == "markdown")
        labels += re.findall(r"^````\{exercise\}\s*\n:label: (\S+)", text, flags=re.M)
    return labels


def rerun_commands() -> dict[str, list[str]]:
    """Exercise label -> the ``crsbench notebook`` commands its solution gives."""
    out: dict[str, list[str]] = {}
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        text = "\n".join("".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
                         if c["cell_type"] == "markdown")
        for match in _SOLUTION.finditer(text):
            out[match.group("label")] = [m.group("command") for m in _RERUN.finditer(match.group("body"))]
    return out


def notebook_parameters(command: str) -> tuple[str, dict[str, str]]:
    """``crsbench notebook NAME -p K V -p K2 V2`` -> (NAME, {K: V, K2: V2}).

    Examples
    --------
    >>> notebook_parameters("crsbench notebook transfer -p top_k 5")
    ('transfer', {'top_k': '5'})
    """
    words = shlex.split(command.replace("\\\n", " "))
    name = words[2]
    params = {words[i + 1]: words[i + 2] for i in range(3, len(words) - 2) if words[i] == "-p"}
    return name, params


def lab_commands(body: str) -> list[str]:
    """The ``crsbench notebook`` commands of a session's code blocks (continuation lines joined)."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", body, flags=re.S):
        joined = re.sub(r"\\\n\s*", " ", block)
        commands += [line.split("#")[0].strip() for line in joined.splitlines()
                     if line.strip().startswith("crsbench notebook")]
    return commands


def mismatches(page: str, reruns: dict[str, list[str]]) -> list[str]:
    """Lab commands that set a parameter of an assigned exercise's notebook to another value than the exercise."""
    problems = []
    for session in _SESSION.finditer(page):
        labs = [notebook_parameters(c) for c in lab_commands(session.group("body"))]
        for label in _REF.findall(session.group("body")):
            for command in reruns.get(label, []):
                name, wanted = notebook_parameters(command)
                for lab_name, given in labs:
                    for key in set(wanted) & set(given):
                        if lab_name != name or _PLACEHOLDER.search(wanted[key] + given[key]):
                            continue
                        if wanted[key] != given[key]:
                            problems.append(f"session {session.group('n')}: {label} asks {key} {wanted[key]}, "
                                            f"the lab runs {key} {given[key]}")
    return problems


def test_every_exercise_is_assigned_in_a_session():
    page = TEACHING.read_text(encoding="utf-8")
    assigned = {label for session in _SESSION.finditer(page) for label in _REF.findall(session.group("body"))}
    labels = exercise_labels()
    assert len(labels) >= 20
    assert [label for label in labels if label not in assigned] == []


def test_lab_commands_use_the_values_their_exercises_ask_for():
    assert mismatches(TEACHING.read_text(encoding="utf-8"), rerun_commands()) == []


def test_the_mismatch_check_catches_a_lab_that_contradicts_its_exercise():
    page = ("### Session 8: x\n\n- **Exercises:** {ref}`ex-transfer-1`.\n\n```bash\n"
            "crsbench notebook transfer -p top_k 2\n```\n")
    reruns = {"ex-transfer-1": ["crsbench notebook transfer -p top_k 5"]}
    assert mismatches(page, reruns) == ["session 8: ex-transfer-1 asks top_k 5, the lab runs top_k 2"]
    assert mismatches(page.replace("top_k 2", "top_k 5"), reruns) == []
    # A placeholder (a name the student fills in) is not a value to compare.
    names = {"ex-insertion-1": ["crsbench notebook insertion -p candidates '[NAME, NAME]'"]}
    lab = page.replace("ex-transfer-1", "ex-insertion-1").replace("transfer -p top_k 2",
                                                                  "insertion -p candidates '[WEAKEST, SECOND]'")
    assert mismatches(lab, names) == []
