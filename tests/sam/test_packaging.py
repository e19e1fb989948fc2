"""The Lambda layer: what it installs agrees with pyproject.toml and the template.

Whether it fits in Lambda is `make package-check` (scripts/package_check.py): it builds
the layer for real from PyPI's manylinux wheels (about 30 s and a download), which is
no job for the test suite.
"""

from __future__ import annotations

import re
import tomllib

from tests.sam.template_helpers import ROOT, source

REQUIREMENTS = ROOT / "layers" / "core" / "requirements.txt"


def _requirements() -> list[str]:
    lines = REQUIREMENTS.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def _name(requirement: str) -> str:
    return re.split(r"[\[<>=!~ ;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def test_layer_requirements_are_the_project_dependencies_plus_lambdas() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    layer = _requirements()
    missing = set(project["dependencies"]) - set(layer)
    assert not missing, f"pyproject.toml dependencies missing from {REQUIREMENTS}: {missing}"
    extra = {_name(r) for r in layer} - {_name(r) for r in project["dependencies"]}
    assert extra == {"mangum", "aws-lambda-powertools"}
    # X-Ray needs the tracer extra; the functions' Tracer would fail to import without it.
    assert any(r.startswith("aws-lambda-powertools[tracer]") for r in layer)


def test_layer_build_targets_the_template_runtime() -> None:
    layer = source()["Resources"]["CoreLayer"]
    assert layer["Metadata"]["BuildMethod"] == "makefile"
    makefile = (ROOT / "layers" / "core" / "Makefile").read_text(encoding="utf-8")
    assert "build-CoreLayer:" in makefile
    runtime = layer["Properties"]["CompatibleRuntimes"][0]  # python3.12
    assert f"--python-version {runtime.removeprefix('python')}" in makefile
    assert "manylinux2014_x86_64" in makefile and layer["Properties"][
        "CompatibleArchitectures"
    ] == ["x86_64"]
    assert '"$(ARTIFACTS_DIR)/python/memvault"' in makefile
