"""The Lambda layers: what they install agrees with pyproject.toml, constraints.txt, the
lock files and the template, and their build prunes and precompiles as it says.

Whether the built layers fit in Lambda and each function starts from its own layers is
`make package-check` (scripts/package_check.py): it builds them for real from PyPI's
manylinux wheels, which is no job for the test suite.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.sam.template_helpers import ROOT, source, transformed

LAYER_DIR = ROOT / "layers" / "core"
sys.path.insert(0, str(LAYER_DIR))
import build_layer  # noqa: E402

REQUIREMENTS = LAYER_DIR / "requirements.txt"
PACKAGE = LAYER_DIR / "memvault"

# The stack's own layers each function gets, in order (the Web Adapter aside).
FUNCTION_LAYERS = {
    "InferenceFunction": ["CoreLayer", "InferenceLayer", "EmbeddingLayer"],
    "ManagementFunction": ["CoreLayer", "EmbeddingLayer"],
    "McpFunction": ["CoreLayer", "McpLayer", "EmbeddingLayer"],
    "RetentionFunction": ["CoreLayer"],
    "OpsFunction": ["CoreLayer", "EmbeddingLayer"],
}

# Import names of the distributions no layer carries.
EXCLUDED_MODULES = {
    "grpc",
    "google.protobuf",
    "opensearch_protobufs",
    "huggingface_hub",
    "hf_xet",
    "fsspec",
    "filelock",
    "tqdm",
    "typer",
    "rich",
    "pygments",
    "markdown_it",
    "mdurl",
    "shellingham",
    "toml",
    # Its files are read, the package is never imported (only data is left of it).
    "wordllama",
}


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirements() -> list[str]:
    lines = REQUIREMENTS.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def _name(requirement: str) -> str:
    return canonical(re.split(r"[\[<>=!~ ;]", requirement, maxsplit=1)[0])


def _locks() -> dict[str, dict[str, tuple[str, list[str]]]]:
    """Layer -> {distribution: (version, sha256 hashes)}."""
    out: dict[str, dict[str, tuple[str, list[str]]]] = {}
    for layer in build_layer.LAYERS:
        text = (build_layer.LOCKS / f"{layer}.txt").read_text(encoding="utf-8")
        entries = text.replace("\\\n", " ").splitlines()
        pins: dict[str, tuple[str, list[str]]] = {}
        for entry in entries:
            if not entry.strip() or entry.startswith("#"):
                continue
            spec, *hashes = entry.split()
            name, version = spec.split("==")
            pins[canonical(name)] = (version, [h.removeprefix("--hash=sha256:") for h in hashes])
        out[layer] = pins
    return out


def _constraints() -> dict[str, str]:
    lines = (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines()
    pins = [line.split("==") for line in lines if "==" in line and not line.startswith("#")]
    return {canonical(name): version.strip() for name, version in pins}


def test_layer_requirements_are_the_project_dependencies_plus_lambdas() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    layer = _requirements()
    missing = set(project["dependencies"]) - set(layer)
    assert not missing, f"pyproject.toml dependencies missing from {REQUIREMENTS}: {missing}"
    extra = {_name(r) for r in layer} - {_name(r) for r in project["dependencies"]}
    assert extra == {"mangum", "aws-lambda-powertools"}
    # X-Ray needs the tracer extra; the functions' Tracer would fail to import without it.
    assert any(r.startswith("aws-lambda-powertools[tracer]") for r in layer)


def test_every_requirement_has_one_layer_or_none_on_purpose() -> None:
    placed = [_name(r) for layer in build_layer.LAYERS.values() for r in layer.requirements]
    assert len(placed) == len(set(placed)), "a requirement is answered for by two layers"
    wanted = {_name(r) for r in _requirements()}
    assert set(placed) | set(build_layer.NOT_ON_LAMBDA) >= wanted
    assert set(build_layer.NOT_ON_LAMBDA) <= wanted


def test_locks_pin_what_the_tests_ran_with_hashes_and_nothing_twice() -> None:
    constraints = _constraints()
    locks = _locks()
    seen: dict[str, str] = {}
    for layer, pins in locks.items():
        assert pins, layer
        for dist, (version, hashes) in pins.items():
            assert constraints.get(dist) == version, f"{layer}: {dist}=={version}"
            assert hashes and all(re.fullmatch(r"[0-9a-f]{64}", h) for h in hashes), dist
            assert dist not in build_layer.EXCLUDED, f"{layer} carries excluded {dist}"
            assert dist not in seen, f"{dist} is in {seen.get(dist)} and {layer}"
            seen[dist] = layer
    # Every layer's own requirements are locked in it or (shared) in Core.
    for layer, spec in build_layer.LAYERS.items():
        for requirement in spec.requirements:
            assert _name(requirement) in locks[layer] or _name(requirement) in locks["CoreLayer"]
    # Binary wheels differ per architecture: x86_64 and aarch64 hashes both.
    assert len(locks["CoreLayer"]["pydantic-core"][1]) == 2
    assert len(locks["InferenceLayer"]["bpe-openai"][1]) == 2
    # The data-only wheel is locked once: its x86_64 wheel serves both architectures.
    assert len(locks["EmbeddingLayer"]["wordllama"][1]) == 1


def test_the_heavy_and_unused_stay_where_they_belong() -> None:
    locks = _locks()
    assert "bpe-openai" in locks["InferenceLayer"]  # 78 MB, for the gateway alone
    assert "mcp" in locks["McpLayer"]
    assert {"wordllama", "tokenizers", "safetensors"} <= set(locks["EmbeddingLayer"])
    everywhere = {d for pins in locks.values() for d in pins}
    assert not {"grpcio", "protobuf", "typer", "rich", "pygments", "huggingface-hub"} & everywhere


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


def test_memvault_never_imports_what_the_layers_leave_out() -> None:
    for path in PACKAGE.rglob("*.py"):
        if "cli" in path.relative_to(PACKAGE).parts:
            continue  # the CLI runs on people's machines, never on Lambda
        for module in _imports(path):
            hit = {m for m in EXCLUDED_MODULES if module == m or module.startswith(m + ".")}
            assert not hit, f"{path.relative_to(ROOT)} imports {module}"


def test_every_aws_client_memvault_makes_has_its_botocore_model() -> None:
    called = set()
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        called |= set(
            re.findall(r"(?:make_client|boto3\.client|\.client)\(\s*\"([a-z0-9-]+)\"", text)
        )
    assert {"dynamodb", "s3", "secretsmanager"} <= called
    assert called <= set(build_layer.BOTOCORE_SERVICES), called - set(build_layer.BOTOCORE_SERVICES)


def test_prune_keeps_what_is_read(tmp_path: Path) -> None:
    py = tmp_path / "python"
    files = [
        "wordllama/__init__.py",
        "wordllama/weights/l2_supercat_256.safetensors",
        "wordllama/weights/other_model.safetensors",
        "wordllama/tokenizers/l2_supercat_tokenizer_config.json",
        "wordllama/algorithms/kmeans.c",
        "wordllama/algorithms/kmeans.cpython-312-x86_64-linux-gnu.so",
        "botocore/data/endpoints.json",
        "botocore/data/dynamodb/2012-08-10/service-2.json.gz",
        "botocore/data/ec2/2016-11-15/service-2.json.gz",
        "numpy/_core/tests/test_a.py",
        "numpy/testing/__init__.py",
        "numpy/__init__.pyi",
        "numpy/random/__init__.py",
        "numpy/random/mtrand.cpython-312-x86_64-linux-gnu.so",
        "numpy/fft/__init__.py",
        "numpy/f2py/__init__.py",
        "numpy/_core/include/numpy/ndarraytypes.h",
        "numpy/_core/_simd.cpython-312-x86_64-linux-gnu.so",
        "numpy/_core/_multiarray_umath.cpython-312-x86_64-linux-gnu.so",
        "bpe_openai/data/o200k_base.tiktoken.gz",
        "bpe_openai/_bindings.abi3.so",
        "aiohttp/_websocket/reader_c.cpython-312-x86_64-linux-gnu.so",
        "aiohttp/_websocket/reader_py.py",
        "aiohttp/_http_parser.cpython-312-x86_64-linux-gnu.so",
        "aws_lambda_powertools/event_handler/openapi/swagger_ui/swagger-ui-bundle.min.js",
        "aws_lambda_powertools/event_handler/openapi/swagger_ui/html.py",
        "jsonschema/tests/test_validators.py",
        "memvault/tests/fixture.md",
        "yarl/_quoting_c.pyx",
        "yarl/_quoting.py",
        "bin/fastapi",
    ]
    for name in files:
        (py / name).parent.mkdir(parents=True, exist_ok=True)
        (py / name).write_text("x")
    build_layer.prune(py)
    left = sorted(str(f.relative_to(py)) for f in py.rglob("*") if f.is_file())
    assert left == sorted(
        [
            "wordllama/__init__.py",
            "wordllama/weights/l2_supercat_256.safetensors",
            "wordllama/tokenizers/l2_supercat_tokenizer_config.json",
            "botocore/data/endpoints.json",
            "botocore/data/dynamodb/2012-08-10/service-2.json.gz",
            "numpy/testing/__init__.py",
            "numpy/_core/_multiarray_umath.cpython-312-x86_64-linux-gnu.so",
            "bpe_openai/_bindings.abi3.so",
            "aiohttp/_websocket/reader_py.py",
            "aiohttp/_http_parser.cpython-312-x86_64-linux-gnu.so",
            "aws_lambda_powertools/event_handler/openapi/swagger_ui/html.py",
            "memvault/tests/fixture.md",
            "yarl/_quoting.py",
        ]
    )
    # What the local embedder reads is what the prune keeps.
    from memvault.adapters.embeddings import local

    assert {local._WEIGHTS, local._TOKENIZER} <= set(build_layer.WORDLLAMA_KEEP)


def test_bytecode_is_compiled_for_the_runtime_unchecked(tmp_path: Path) -> None:
    try:
        python = build_layer.find_python()
    except SystemExit:
        pytest.fail("no CPython 3.12 here: the layer build cannot precompile (set LAYER_PYTHON)")
    py = tmp_path / "python"
    (py / "pkg").mkdir(parents=True)
    (py / "pkg" / "__init__.py").write_text("def f():\n    raise ValueError\n")
    build_layer.compile_bytecode(py, python)
    (pyc,) = (py / "pkg" / "__pycache__").iterdir()
    assert pyc.name == "__init__.cpython-312.pyc"
    data = pyc.read_bytes()
    magic = subprocess.run(
        [python, "-c", "import importlib.util; print(importlib.util.MAGIC_NUMBER.hex())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert data[:4].hex() == magic
    # PEP 552 flags: 0b01 = hash-based, not checked against the source (whatever the
    # file times after the zip round trip, the pyc is used).
    assert int.from_bytes(data[4:8], "little") == 1
    code = subprocess.run(
        [
            python,
            "-c",
            "import marshal, sys; print(marshal.loads(open(sys.argv[1], 'rb').read()[16:])"
            ".co_filename)",
            str(pyc),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert code == "/opt/python/pkg/__init__.py"


def test_third_party_modules_import_from_bytecode_alone(tmp_path: Path) -> None:
    """ADR 0052: after compiling, each third-party module's pyc takes its source's place
    and the source goes; memvault's sources and anyio's __init__ (it reads itself) stay.
    A runtime CPython imports the result, packages and plain modules alike."""
    try:
        python = build_layer.find_python()
    except SystemExit:
        pytest.fail("no CPython 3.12 here: the layer build cannot precompile (set LAYER_PYTHON)")
    py = tmp_path / "python"
    sources = {
        "lib3p/__init__.py": "from lib3p.core import answer\n",
        "lib3p/core.py": "def answer():\n    return 42\n",
        "plain.py": "VALUE = 'plain'\n",
        "anyio/__init__.py": "import inspect, sys\nSRC = inspect.getsource(sys.modules['anyio'])\n",
        "memvault/__init__.py": "",
        "memvault/mod.py": "def fail():\n    raise ValueError('from memvault')\n",
    }
    for name, text in sources.items():
        (py / name).parent.mkdir(parents=True, exist_ok=True)
        (py / name).write_text(text)
    build_layer.compile_bytecode(py, python)
    build_layer.drop_sources(py)
    left = sorted(str(f.relative_to(py)) for f in py.rglob("*") if f.is_file())
    assert left == sorted(
        [
            "lib3p/__init__.pyc",
            "lib3p/core.pyc",
            "plain.pyc",
            "anyio/__init__.py",
            "anyio/__pycache__/__init__.cpython-312.pyc",
            "memvault/__init__.py",
            "memvault/__pycache__/__init__.cpython-312.pyc",
            "memvault/mod.py",
            "memvault/__pycache__/mod.cpython-312.pyc",
        ]
    )
    probe = (
        "import sys, traceback, lib3p, plain, anyio, memvault.mod\n"
        "assert lib3p.answer() == 42 and plain.VALUE == 'plain' and 'getsource' in anyio.SRC\n"
        "assert lib3p.core.__file__.endswith('lib3p/core.pyc')\n"
        "try:\n    memvault.mod.fail()\n"
        "except ValueError:\n    print(traceback.format_exc())\n"
    )
    done = subprocess.run(
        [python, "-S", "-c", probe],
        env={"PYTHONPATH": str(py), "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    # memvault's own frames still show their source line (its files kept their sources).
    assert "raise ValueError('from memvault')" in done.stdout


def test_memvault_never_imports_what_the_prune_takes_out() -> None:
    """numpy.random, numpy.fft and the rest of PRUNED_MODULES are not in the layers: no
    module of memvault that runs on Lambda may import or reach them (``np.random``)."""
    for path in PACKAGE.rglob("*.py"):
        if "cli" in path.relative_to(PACKAGE).parts:
            continue
        text = path.read_text(encoding="utf-8")
        for module in build_layer.PRUNED_MODULES:
            attribute = "np." + module.removeprefix("numpy.")
            assert not re.search(rf"\b({re.escape(module)}|{re.escape(attribute)})\b", text), (
                f"{path.relative_to(ROOT)} uses {module}, which the layers leave out"
            )


def test_lock_split_installs_data_only_wheels_for_any_architecture() -> None:
    text = (
        "# c\nnumpy==2.4.6 \\\n    --hash=sha256:aa \\\n    --hash=sha256:bb\n"
        "wordllama==0.4 \\\n    --hash=sha256:cc\n"
    )
    code, data = build_layer._split_lock(text)
    assert code.split() == ["numpy==2.4.6", "--hash=sha256:aa", "--hash=sha256:bb"]
    assert data.split() == ["wordllama==0.4", "--hash=sha256:cc"]


def test_each_function_gets_the_layers_it_imports() -> None:
    res = transformed()["Resources"]
    for function, layers in FUNCTION_LAYERS.items():
        if function not in res:
            continue
        got = res[function]["Properties"]["Layers"]
        refs = [x["Ref"] for x in got if isinstance(x, dict) and "Ref" in x]
        # SAM names each layer version <LogicalId><hash of its content>.
        own = [name for ref in refs for name in build_layer.LAYERS if ref.startswith(name)]
        assert own == layers, function
        assert len(got) <= 5, function  # Lambda's limit
    for name in build_layer.LAYERS:
        assert any(r.startswith(name) for r in res), name


def test_layer_builds_target_the_template_runtime_and_architecture() -> None:
    src = source()
    makefile = (LAYER_DIR / "Makefile").read_text(encoding="utf-8")
    default_arch = src["Parameters"]["Architecture"]["Default"]
    assert f"LAYER_ARCH ?= {default_arch}" in makefile
    assert set(src["Parameters"]["Architecture"]["AllowedValues"]) == set(build_layer.ARCHES)
    for name in build_layer.LAYERS:
        layer = src["Resources"][name]
        assert layer["Metadata"]["BuildMethod"] == "makefile"
        assert layer["Properties"]["ContentUri"] == "layers/core/"
        assert f"build-{name}" in makefile
        runtime = layer["Properties"]["CompatibleRuntimes"][0]
        assert runtime == f"python{build_layer.PYTHON_VERSION}"
        assert layer["Properties"]["CompatibleArchitectures"] == [{"Ref": "Architecture"}]
        assert (build_layer.LOCKS / f"{name}.txt").is_file()
    assert src["Globals"]["Function"]["Runtime"] == f"python{build_layer.PYTHON_VERSION}"
    assert src["Globals"]["Function"]["Architectures"] == [{"Ref": "Architecture"}]
    assert "manylinux_2_34_aarch64" in build_layer.platforms("arm64")
    assert importlib.util.find_spec("memvault") is not None
