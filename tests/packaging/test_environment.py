"""environment.yml must list exactly the runtime dependencies of pyproject.toml."""

import tomllib

import yaml

from crsbench_lib.paths import project_root


def _normalise(requirement: str) -> str:
    return requirement.replace(" ", "").lower()


def test_environment_matches_pyproject():
    root = project_root()
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    environment = yaml.safe_load((root / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict))
    from_env = {_normalise(r) for r in pip_section if not r.startswith("-e")}
    from_pyproject = {_normalise(r) for r in project["dependencies"]}
    assert from_env == from_pyproject, (
        f"only in environment.yml: {sorted(from_env - from_pyproject)}; "
        f"only in pyproject.toml: {sorted(from_pyproject - from_env)}"
    )
    python_pin = next(d for d in environment["dependencies"] if isinstance(d, str) and d.startswith("python="))
    assert python_pin == "python=3.11" and project["requires-python"].startswith(">=3.11")


def test_torch_is_pinned_to_the_cpu_build():
    project = tomllib.loads((project_root() / "pyproject.toml").read_text())["project"]
    assert "torch==2.13.0" in project["dependencies"]
    assert not any(d.startswith(("timm", "open-clip", "torchvision")) for d in project["dependencies"])
