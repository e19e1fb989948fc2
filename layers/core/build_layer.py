"""Builds memvault's Lambda layers, as `sam build` does and as `make package-check` does.

    python build_layer.py <LayerLogicalId> <ARTIFACTS_DIR>

template.yaml names four layers, split by what each function imports (ADR 0035):

- ``CoreLayer``: the memvault package and what every function imports (FastAPI,
  pydantic, boto3, Powertools, Mangum, argon2, opensearch-py, ...);
- ``InferenceLayer``: the gateway's own (bpe-openai's 78 MB of tables, uvicorn, aiohttp);
- ``McpLayer``: the MCP SDK and what only it pulls in;
- ``EmbeddingLayer``: the local embedding model (WordLlama's l2_supercat table, read
  from its installed files), tokenizers, safetensors and numpy.

Each layer installs exactly the wheels of ``locks/<layer>.txt`` (``--no-deps
--require-hashes``: every version is the one constraints.txt pins, the one the tests
ran, and every wheel is checked against its sha256), for CPython 3.12 on the Lambda
platform (``LAYER_ARCH``: x86_64 or arm64, manylinux wheels, so no Docker), under
``python/`` (Lambda puts /opt/python on sys.path). Then every module is compiled for
CPython 3.12 with unchecked-hash pycs (PEP 552): the layer is read-only at /opt, so
without them every cold start compiles about a thousand modules, and unchecked pycs are
valid whatever the file times the zip round trip leaves. That needs a CPython 3.12
(``LAYER_PYTHON``, else ``python3.12`` or a pyenv 3.12 found here). Last, third-party
modules keep only their bytecode (``drop_sources``; memvault keeps its sources), and
``prune`` has dropped what nothing on Lambda reads: about 35 MB of the inference
function's 250 (ADR 0052).

``scripts/lock_layers.py`` (``make lock``) writes the lock files from constraints.txt
and the layer split below; tests/sam/test_packaging.py checks they agree.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
LOCKS = HERE / "locks"
PACKAGE = HERE / "memvault"
PYTHON_VERSION = "3.12"
INSTALL_PREFIX = "/opt/python"
ARCHES = ("x86_64", "arm64")
# glibc 2.34 on Lambda's python3.12 (Amazon Linux 2023): every manylinux tag up to it.
_GLIBC = (34, 31, 28, 27, 26, 24, 17)


@dataclass(frozen=True)
class Layer:
    """One layer: the top-level requirements it answers for (their dependencies come
    with them, less what the Core layer has and what is never imported on Lambda)."""

    requirements: tuple[str, ...]
    description: str
    package: bool = False  # carries the memvault package itself


LAYERS: dict[str, Layer] = {
    "CoreLayer": Layer(
        (
            "fastapi",
            "pydantic",
            "pydantic-settings",
            "PyYAML",
            "httpx",
            "orjson",
            "python-multipart",
            "boto3",
            "opensearch-py",
            "argon2-cffi",
            "mangum",
            "aws-lambda-powertools[tracer]",
            # memvault.container imports the memory profiles, which use numpy.
            "numpy",
        ),
        "memvault and what every function imports",
        package=True,
    ),
    "InferenceLayer": Layer(
        ("uvicorn", "httptools", "aiohttp", "bpe-openai"), "the inference gateway's own"
    ),
    "McpLayer": Layer(("mcp",), "the MCP SDK"),
    "EmbeddingLayer": Layer(
        ("wordllama", "tokenizers", "safetensors"), "the local embedding model"
    ),
}

# Requirements of layers/core/requirements.txt that no function imports: the CLI's.
NOT_ON_LAMBDA = {"typer": "the CLI only", "rich": "the CLI only"}

# Distributions a layer's requirements pull in that nothing on Lambda imports: left out
# of every lock (the import check of `make package-check` proves each function starts
# without them, and tests/sam/test_packaging.py that memvault never imports them).
EXCLUDED: dict[str, str] = {
    "grpcio": "opensearch-py 3 declares opensearch-protobufs; only its gRPC transport imports it",
    "protobuf": "the same",
    "opensearch-protobufs": "the same",
    "huggingface-hub": "tokenizers declares it for from_pretrained; memvault reads the file",
    "hf-xet": "huggingface-hub's",
    "fsspec": "huggingface-hub's",
    "filelock": "huggingface-hub's",
    "tqdm": "huggingface-hub's",
    "typer": "the CLI's (and huggingface-hub's)",
    "typer-slim": "huggingface-hub's",
    "rich": "the CLI's",
    "pygments": "rich's",
    "markdown-it-py": "rich's",
    "mdurl": "rich's",
    "shellingham": "typer's",
    "toml": "wordllama's own modules, which memvault never imports (it reads two files)",
}

# botocore ships the models of 400-odd AWS services (28 MB); the layer keeps those of the
# services memvault calls (tests/sam/test_packaging.py greps the package for every
# client it makes), Powertools' (parameters, idempotency), the X-Ray SDK's (its sampler
# makes an xray client when the tracer starts) and the credential chain's.
BOTOCORE_SERVICES = (
    "xray",
    "dynamodb",
    "s3",
    "secretsmanager",
    "bedrock-runtime",
    "cloudformation",
    "ssm",
    "sts",
    "sso",
    "sso-oidc",
    "lambda",
    "sqs",
)

# Wheels of which a layer keeps only data files, the same for every architecture: their
# x86_64 wheel is installed whatever LAYER_ARCH is (wordllama has no aarch64 wheel; the
# files memvault reads from it are a safetensors table and a JSON tokenizer).
DATA_ONLY = ("wordllama",)

# The wordllama wheel carries compiled algorithms and their C sources memvault never
# runs: the embedding layer keeps the package marker, the one model's weights and
# tokenizer (memvault.adapters.embeddings.local) and its metadata.
WORDLLAMA_KEEP = (
    "__init__.py",
    "weights/l2_supercat_256.safetensors",
    "tokenizers/l2_supercat_tokenizer_config.json",
)


# Files and trees of installed packages that nothing on Lambda reads (ADR 0052), beyond
# the tests directories, C sources and type stubs every package loses:
PRUNED_PATHS = (
    # bpe-openai's tiktoken tables: for its Python ``Encoding`` wrapper, which memvault
    # never runs (memvault.tokens loads the Rust extension, whose o200k_base is built in).
    "bpe_openai/data",
    # numpy's Fortran wrapper generator, C headers, static libraries, PyInstaller hook,
    # and two subpackages numpy imports only when asked for them (``np.random``,
    # ``np.fft``), which nothing on Lambda does (``PRUNED_MODULES``).
    "numpy/f2py",
    "numpy/_core/include",
    "numpy/_core/lib",
    "numpy/_pyinstaller",
    "numpy/doc",
    "numpy/random",
    "numpy/fft",
    # Powertools' bundled Swagger UI, for its own API resolver's docs page.
    "aws_lambda_powertools/event_handler/openapi/swagger_ui/swagger-ui-bundle.min.js",
    "aws_lambda_powertools/event_handler/openapi/swagger_ui/swagger-ui.min.css",
)

# Extension modules nothing imports on Lambda: numpy's SIMD test module, and aiohttp's
# websocket reader and mask, which have pure-Python twins aiohttp falls back to
# (memvault's upstream calls never open a websocket).
PRUNED_EXTENSIONS = (
    "numpy/_core/_simd.",
    "aiohttp/_websocket/reader_c.",
    "aiohttp/_websocket/mask.",
)

# Modules the layers leave out (PRUNED_PATHS): memvault must never import them
# (tests/sam/test_packaging.py).
PRUNED_MODULES = ("numpy.random", "numpy.fft", "numpy.f2py", "numpy._core._simd")

# Sources kept beside their bytecode (``drop_sources``): memvault's own, so its
# tracebacks show their lines, and the one module known to read its own source at run
# time (anyio builds its lazy imports from ``inspect.getsource`` of its __init__).
KEEP_SOURCES = ("memvault/", "anyio/__init__.py")
BYTECODE_TAG = "cpython-312"  # sys.implementation.cache_tag of the runtime


def platforms(arch: str) -> list[str]:
    """pip's --platform values for Lambda's python3.12 on ``arch``."""
    machine = {"x86_64": "x86_64", "arm64": "aarch64"}[arch]
    tags = [f"manylinux_2_{g}_{machine}" for g in _GLIBC] + [f"manylinux2014_{machine}"]
    if machine == "x86_64":
        tags += ["manylinux2010_x86_64", "manylinux1_x86_64"]
    return tags


def pip_platform_args(arch: str) -> list[str]:
    args: list[str] = []
    for tag in platforms(arch):
        args += ["--platform", tag]
    return [
        *args,
        "--implementation",
        "cp",
        "--python-version",
        PYTHON_VERSION,
        "--only-binary=:all:",
    ]


def find_python() -> str:
    """A CPython 3.12 to compile the bytecode with (the runtime's own version)."""
    candidates = [os.environ.get("LAYER_PYTHON", ""), shutil.which("python3.12") or ""]
    home = os.path.expanduser("~")
    candidates += sorted(glob.glob(f"{home}/.pyenv/versions/3.12*/bin/python3.12"), reverse=True)
    for exe in filter(None, candidates):
        try:
            done = subprocess.run(
                [exe, "-c", "import sys; print(sys.version_info[:2] == (3, 12))"],
                capture_output=True,
                text=True,
                timeout=30,
            )
        except OSError:
            continue
        if done.returncode == 0 and done.stdout.strip() == "True":
            return exe
    raise SystemExit(
        "no CPython 3.12 found to compile the layer's bytecode for the python3.12 runtime:"
        " set LAYER_PYTHON to one"
    )


def install(layer: str, python_dir: Path, arch: str) -> None:
    """The layer's locked wheels for ``arch``, checked against their hashes."""
    code, data = _split_lock((LOCKS / f"{layer}.txt").read_text(encoding="utf-8"))
    for text, wheel_arch in ((code, arch), (data, "x86_64")):
        if not text.strip():
            continue
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write(text)
        try:
            cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-compile"]
            cmd += ["--no-deps", "--require-hashes", "--disable-pip-version-check"]
            cmd += [*pip_platform_args(wheel_arch), "--target", str(python_dir), "-r", f.name]
            subprocess.run(cmd, check=True)
        finally:
            os.unlink(f.name)
    if LAYERS[layer].package:
        if not (PACKAGE / "dashboard" / "static" / "index.html").is_file():
            raise SystemExit(
                "the dashboard is not built: run 'make dashboard' at the repo root first"
            )
        shutil.copytree(PACKAGE, python_dir / "memvault", ignore=_ignored)


def _split_lock(text: str) -> tuple[str, str]:
    """A lock file's requirements (joined continuation lines) as two files' texts: the
    wheels of the layer's architecture, and the DATA_ONLY ones."""
    entries = text.replace("\\\n", " ").splitlines()
    reqs = [e.strip() for e in entries if e.strip() and not e.lstrip().startswith("#")]
    data = [r for r in reqs if r.split("==")[0] in DATA_ONLY]
    code = [r for r in reqs if r not in data]
    return "\n".join(code) + "\n", "\n".join(data) + "\n"


def _ignored(_dir: str, names: list[str]) -> set[str]:
    return {n for n in names if n == "__pycache__" or n.endswith((".pyc", ".pyo"))}


def prune(python_dir: Path) -> None:
    """Drop what no import reads: console scripts, C sources beside compiled
    extensions, type stubs, every package's tests (numpy's are 16 MB), the models of AWS
    services memvault never calls, ``PRUNED_PATHS`` and ``PRUNED_EXTENSIONS``, and of
    wordllama everything but the one model memvault loads."""
    # Console scripts: nothing runs them on Lambda, and their shebang names the
    # interpreter that built the layer (the one thing two builds would not share).
    shutil.rmtree(python_dir / "bin", ignore_errors=True)
    for pattern in ("*.c", "*.cpp", "*.pyx", "*.pxd", "*.pyi"):
        for f in python_dir.rglob(pattern):
            f.unlink()
    for pruned in PRUNED_PATHS:
        path = python_dir / pruned
        if path.is_dir():
            shutil.rmtree(path)
        elif path.is_file():
            path.unlink()
    for prefix in PRUNED_EXTENSIONS:
        folder, _, stem = prefix.rpartition("/")
        for f in (python_dir / folder).glob(f"{stem}*.so"):
            f.unlink()
    for tests in sorted(python_dir.rglob("tests"), reverse=True):
        if tests.is_dir() and tests.relative_to(python_dir).parts[0] != "memvault":
            shutil.rmtree(tests)
    models = python_dir / "botocore" / "data"
    if models.is_dir():
        for service in models.iterdir():
            if service.is_dir() and service.name not in BOTOCORE_SERVICES:
                shutil.rmtree(service)
    wordllama = python_dir / "wordllama"
    if wordllama.is_dir():
        keep = {wordllama / k for k in WORDLLAMA_KEEP}
        for f in sorted(wordllama.rglob("*"), reverse=True):
            if f.is_file() and f not in keep:
                f.unlink()
            elif f.is_dir() and not any(f.iterdir()):
                f.rmdir()


def compile_bytecode(python_dir: Path, python: str | None = None) -> None:
    """Unchecked-hash pycs for CPython 3.12, with /opt/python paths in tracebacks."""
    exe = python or find_python()
    cmd = [exe, "-m", "compileall", "-q", "-j", "0", "--invalidation-mode", "unchecked-hash"]
    cmd += ["-s", str(python_dir), "-p", INSTALL_PREFIX, str(python_dir)]
    # With PYTHONPYCACHEPREFIX set (scripts/test.sh sets it) compileall would write the
    # pycs under that prefix instead of beside their sources, where the layer needs them.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit("compileall failed:\n" + done.stdout + done.stderr)


def drop_sources(python_dir: Path) -> None:
    """The installed packages' modules as bytecode alone (ADR 0052): each compiled
    module's pyc moves to where its source was (PEP 3147's sourceless layout, which
    CPython imports with its SourcelessFileLoader) and the source goes, except
    ``KEEP_SOURCES``. About 20 MB of the inference function's 250. A module that did not
    compile keeps its source; tracebacks through third-party code show file and line
    number, not the line's text."""
    for source in sorted(python_dir.rglob("*.py")):
        rel = source.relative_to(python_dir).as_posix()
        if rel.startswith(KEEP_SOURCES):
            continue
        pyc = source.parent / "__pycache__" / f"{source.stem}.{BYTECODE_TAG}.pyc"
        if pyc.is_file():
            os.replace(pyc, source.with_suffix(".pyc"))
            source.unlink()
    for cache in sorted(python_dir.rglob("__pycache__"), reverse=True):
        if cache.is_dir() and not any(cache.iterdir()):
            cache.rmdir()


def build(layer: str, artifacts: Path, arch: str | None = None) -> Path:
    arch = arch or os.environ.get("LAYER_ARCH", "x86_64")
    if layer not in LAYERS:
        raise SystemExit(f"unknown layer {layer!r}: one of {', '.join(LAYERS)}")
    if arch not in ARCHES:
        raise SystemExit(f"LAYER_ARCH must be one of {ARCHES}, not {arch!r}")
    python_dir = artifacts / "python"
    install(layer, python_dir, arch)
    prune(python_dir)
    compile_bytecode(python_dir)
    drop_sources(python_dir)
    return python_dir


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    build(argv[0], Path(argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
