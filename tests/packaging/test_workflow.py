"""The GitHub Pages workflow: valid YAML, README's install, cached runs, Pages deployment."""

import re

import yaml

from crsbench_lib.paths import project_root

WORKFLOW = ".github/workflows/book.yml"


def _workflow() -> dict:
    return yaml.safe_load((project_root() / WORKFLOW).read_text(encoding="utf-8"))


def _steps(workflow: dict) -> list[dict]:
    return [step for job in workflow["jobs"].values() for step in job.get("steps", [])]


def _make_targets() -> set[str]:
    text = (project_root() / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([A-Za-z0-9_.-]+)\s*:(?!=)", text, flags=re.MULTILINE))


def test_workflow_loads_and_deploys_the_book_to_pages():
    workflow = _workflow()
    # PyYAML reads the bare key `on` as True.
    triggers = workflow.get("on", workflow.get(True))
    assert "push" in triggers and "workflow_dispatch" in triggers
    assert workflow["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    uses = {step["uses"].split("@")[0]: step for step in _steps(workflow) if "uses" in step}
    assert uses["actions/upload-pages-artifact"]["with"]["path"] == "_build/html"
    assert "actions/deploy-pages" in uses
    assert workflow["jobs"]["deploy"]["needs"] == "build"


def test_workflow_restores_and_saves_the_run_cache():
    cache = next(s for s in _steps(_workflow()) if s.get("uses", "").startswith("actions/cache@"))
    assert cache["with"]["path"] == ".crsbench-cache"
    # A key unique to the run saves the grown cache; the restore prefix finds the previous run's.
    assert "github.run_id" in cache["with"]["key"]
    prefix = cache["with"]["restore-keys"].strip()
    assert cache["with"]["key"].startswith(prefix)


def test_every_make_command_of_the_workflow_exists_in_the_makefile():
    runs = [s["run"] for s in _steps(_workflow()) if "run" in s]
    called = re.findall(r"\bmake\s+([A-Za-z0-9_.-]+)", "\n".join(runs))
    assert "book" in called, "the workflow must build the book with the README's command"
    targets = _make_targets()
    missing = sorted(set(called) - targets)
    assert not missing, f"the workflow runs make targets the Makefile lacks: {missing}"
    # The README's set-up command is what the workflow builds with.
    readme = (project_root() / "README.md").read_text(encoding="utf-8")
    assert "make book" in readme


def test_makefile_target_parser_sees_the_real_targets():
    assert {"install", "book", "test", "pdf", "publish"} <= _make_targets()
    assert "REMOTE" not in _make_targets() and "PYTHON" not in _make_targets()


def _edition_steps(workflow: dict) -> list[dict]:
    return [s for s in _steps(workflow) if "medmnist" in (s.get("name", "") + s.get("run", "")).lower()]


def test_the_real_data_edition_is_opt_in_and_published_beside_the_default_one():
    workflow = _workflow()
    triggers = workflow.get("on", workflow.get(True))
    inputs = triggers["workflow_dispatch"]["inputs"]
    assert inputs["real_data_edition"]["type"] == "boolean" and inputs["real_data_edition"]["default"] is False
    steps = _edition_steps(workflow)
    assert steps, "the workflow has no real-data edition step"
    # Nothing downloads unless asked: every step of the edition runs only when the input or variable says so.
    for step in steps:
        assert "inputs.real_data_edition" in step["if"] and "vars.CRSBENCH_REAL_DATA_EDITION" in step["if"]
    downloads = [s for s in _steps(workflow) if "--allow-download" in s.get("run", "")]
    assert downloads and all(s in steps for s in downloads)
    build = next(s for s in steps if "run" in s)
    profile = re.search(r"crsbench run --profile (\S+)", build["run"]).group(1)
    assert (project_root() / "configs" / f"{profile}.yaml").is_file()
    # Its book goes to its own folder (never over the default book), then into the site under the profile's name.
    out = re.search(rf"crsbench book --profile {profile} --out (\S+)", build["run"]).group(1)
    assert not out.rstrip("/").endswith("_build/html") and out != "."
    assert f"cp -R {out}/_build/html/. _build/html/{profile}/" in build["run"]
    # The edition is placed before the site is uploaded.
    names = [s.get("name", s.get("uses", "")) for s in workflow["jobs"]["build"]["steps"]]
    upload = next(i for i, n in enumerate(names) if n.startswith("actions/upload-pages-artifact"))
    assert names.index(build["name"]) < upload


def test_a_public_repository_gets_launch_buttons():
    from crsbench_lib.report.book import REPOSITORY_ENV

    value = _workflow()["jobs"]["build"]["env"][REPOSITORY_ENV]
    # Set from the repository the workflow runs in, and only when it is public.
    assert "github.repository" in value and "github.event.repository.private == false" in value
