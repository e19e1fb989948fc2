"""Package check: builds the Lambda layers as `sam build` does, and reports what each
function ships and how long its cold start imports take.

    .venv/bin/python scripts/package_check.py [--keep DIR] [--reuse] [--arch x86_64|arm64]
                                              [--import-times N] [--search URL]

Each layer of template.yaml is built by layers/core/build_layer.py, the code `sam build`
runs (layers/core/Makefile): its hash-locked wheels (layers/core/locks/) for the Lambda
platform, no Docker, bytecode compiled for python3.12. Then, per function, its layers
are overlaid in the template's order into one /opt/python (hard links: Lambda extracts
each layer over the previous one), and the script prints the function's unzipped size
(its code plus its layers, the Lambda Web Adapter's few MB not counted) against
Lambda's 250 MB, and exits 1 past it.

``--import-times N`` runs each function's cold start N times in a fresh CPython 3.12
(the runtime's version) from that /opt/python and nothing else: importing the entry
module builds the settings, the services and the app, on the AWS backend against a
moto_server on loopback (table from the template, bucket) and an OpenSearch URL where
nothing listens (no cold start may need search). It prints the median wall and CPU time
of the import (CPU time moves less on a busy machine) from the layers as built
(precompiled, third-party modules as bytecode alone: ADR 0052), and whether opensearch-py
was imported (it must not be: ADR 0052). A function that fails to import from its own
layers fails the check: that is the proof each one has what it needs. (ADR 0035 recorded
the same import without bytecode, what the old --no-compile layer cost; layers without
their sources cannot be measured that way.)

``--search URL`` then runs each function's handler from its own layers, in the same
CPython 3.12, on files of events/ (through scripts/local_lambda.py) against moto_server
and the OpenSearch node at URL: management writes a note and finds it by hybrid search,
MCP lists its tools, inference answers /healthz, counts o200k tokens and embeds with the
local model, ops makes the index and runs its upkeep, retention sweeps, jobs takes an
Object Created event. A wrong answer fails the check; the indices it made are dropped.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

import boto3
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "layers" / "core"))

import build_layer  # noqa: E402

TEMPLATE = ROOT / "template.yaml"
# Lambda: function + layers, unzipped, at most 262,144,000 bytes ("250 MB"). Sizes print in
# decimal MB, and what is left as 250 MB less the size: a margin that understates it.
LIMIT_BYTES = 250 * 1024 * 1024
REGION = "eu-west-1"


class _Loader(yaml.SafeLoader):
    pass


def _tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return {suffix: loader.construct_scalar(node)}
    if isinstance(node, yaml.SequenceNode):
        return {suffix: loader.construct_sequence(node, deep=True)}
    return {suffix: loader.construct_mapping(node, deep=True)}  # type: ignore[arg-type]


_Loader.add_multi_constructor("!", _tag)


def template() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.load(TEMPLATE.read_text(encoding="utf-8"), _Loader)
    return loaded


def function_layers(tpl: dict[str, Any]) -> dict[str, list[str]]:
    """Each function (by its code folder's name) -> the stack's own layers, in order."""
    base = tpl["Globals"]["Function"].get("Layers", [])
    out: dict[str, list[str]] = {}
    for res in tpl["Resources"].values():
        if res["Type"] != "AWS::Serverless::Function":
            continue
        props = res["Properties"]
        layers = [*base, *props.get("Layers", [])]
        names = [x["Ref"] for x in layers if isinstance(x, dict) and "Ref" in x]
        out[Path(props["CodeUri"]).name] = [n for n in names if n in build_layer.LAYERS]
    return out


def tree_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def zipped_bytes(path: Path) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "a.zip"
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
            for f in sorted(path.rglob("*")):
                if f.is_file():
                    zf.write(f, f.relative_to(path))
        return archive.stat().st_size


def overlay(layers: list[Path], target: Path) -> None:
    """The layers' python/ trees linked into target/python, later layers over earlier."""
    for layer in layers:
        src = layer / "python"
        for f in src.rglob("*"):
            if f.is_dir():
                continue
            dest = target / "python" / f.relative_to(src)
            dest.parent.mkdir(parents=True, exist_ok=True)
            if dest.exists():
                dest.unlink()
            os.link(f, dest)


def mb(n: int) -> str:
    return f"{n / 1_000_000:6.1f} MB"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class MotoServer:
    """moto_server on loopback with the stack's table (from the template) and bucket."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        exe = Path(sys.executable).with_name("moto_server")
        self.proc = subprocess.Popen(
            [str(exe), "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            self._start()
        except BaseException:
            self.stop()  # never leave the server behind
            raise

    def _start(self) -> None:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise SystemExit("moto_server did not start") from None
                time.sleep(0.1)
        props = template()["Resources"]["NotesTable"]["Properties"]
        session = boto3.Session(
            aws_access_key_id="testing", aws_secret_access_key="testing", region_name=REGION
        )
        ddb = session.client("dynamodb", endpoint_url=self.url)
        args = {k: props[k] for k in ("AttributeDefinitions", "KeySchema", "BillingMode")}
        ddb.create_table(
            TableName="memvault", GlobalSecondaryIndexes=props["GlobalSecondaryIndexes"], **args
        )
        session.client("s3", endpoint_url=self.url).create_bucket(
            Bucket="memvault", CreateBucketConfiguration={"LocationConstraint": REGION}
        )

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


_PROBE = """
import json, sys, time
t, c = time.perf_counter(), time.process_time()
{imports}
wall, cpu = time.perf_counter() - t, time.process_time() - c
searched = "opensearchpy" in sys.modules
print(json.dumps({{"ms": wall * 1000, "cpu_ms": cpu * 1000, "opensearch": searched}}))
"""


# ``--search URL``: each function's handler, from its own layers, on files of events/
# (scripts/local_lambda.py replays them as Lambda would), against moto_server and the
# OpenSearch node at URL. What each answered is printed; a wrong answer fails the check.
_SMOKE = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("local_lambda", sys.argv[1])
local = importlib.util.module_from_spec(spec)
spec.loader.exec_module(local)
function, events = sys.argv[2], sys.argv[3]
def event(name, key=None):
    with open(events + "/" + name + ".json", encoding="utf-8") as f:
        return local.with_key(json.load(f), key)
module = local.load_function(function)
out = {}
if function == "management":
    key = local.issue_key("package-check")
    put = local.invoke(function, event("management_put_note", key), module)
    out["put note"] = put["statusCode"]
    search = event("management_search", key)
    search["queryStringParameters"]["mode"] = "hybrid"
    search["multiValueQueryStringParameters"]["mode"] = ["hybrid"]
    found = json.loads(local.invoke(function, search, module)["body"])
    out["hybrid search"] = [found.get("mode"), [h["path"] for h in found.get("results", [])]]
    assert out["put note"] == 201 and out["hybrid search"] == ["hybrid", ["projects/launch.md"]]
elif function == "mcp":
    key = local.issue_key("package-check")
    answer = local.invoke(function, event("mcp_tools_list", key), module)
    out["tools/list"] = answer["statusCode"]
    assert answer["statusCode"] == 200 and "memory_search" in answer["body"], answer
elif function == "inference":
    out["healthz"] = local.invoke(function, event("healthz"), module)["statusCode"]
    from memvault.tokens import TokenCounter
    out["o200k tokens"] = TokenCounter()("Ship the beta on Friday.")
    from memvault.adapters.embeddings.local import shared_local_embedder
    out["embedding"] = shared_local_embedder().embed(["Ship the beta on Friday."]).dimension
    assert out == {"healthz": 200, "o200k tokens": 6, "embedding": 256}, out
elif function == "ops":
    out["init-search"] = local.invoke(function, {"action": "init-search"}, module)["created"]
    out["upkeep errors"] = local.invoke(function, event("retention_schedule"), module)["errors"]
    assert out["upkeep errors"] == {}, out
elif function == "retention":
    swept = local.invoke(function, event("retention_schedule"), module)
    out["unfinished"] = swept["unfinished"]
    assert swept["unfinished"] == [], swept
elif function == "jobs":
    out["object created"] = local.invoke(function, event("jobs_object_created"), module)
else:
    out["loaded"] = True  # a function this check has no events for yet
print(json.dumps(out))
"""


def smoke(function: str, opt: Path, moto: MotoServer, search_url: str, index: str) -> str:
    env = function_env(function, opt, moto)
    env["PYTHONPATH"] += os.pathsep + str(ROOT / "scripts")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(
        MEMVAULT_OPENSEARCH_URL=search_url,
        MEMVAULT_OPENSEARCH_INDEX=index,
        MEMVAULT_OPENSEARCH_REFRESH="true",
        MEMVAULT_OPENSEARCH_CREATE_INDEX="true",
        MEMVAULT_OPENSEARCH_REPLICAS="0",
    )
    script = str(ROOT / "scripts" / "local_lambda.py")
    done = subprocess.run(
        [build_layer.find_python(), "-s", "-c", _SMOKE, script, function, str(ROOT / "events")],
        cwd=ROOT / "functions" / function,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        raise SystemExit(f"{function} fails on its events from its own layers:\n{done.stderr}")
    return done.stdout.strip().splitlines()[-1]


def drop_indices(search_url: str, index: str) -> None:
    """The notes and vector indices the smoke run made (named after ``index``)."""
    import urllib.request

    with urllib.request.urlopen(f"{search_url}/_cat/indices/{index}*?h=index") as got:
        names = got.read().decode().split()
    for name in names:
        if name == index or name.startswith(index + "-"):
            urllib.request.urlopen(urllib.request.Request(f"{search_url}/{name}", method="DELETE"))


def function_env(function: str, opt: Path, moto: MotoServer) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "PYTHONPATH": os.pathsep.join([str(ROOT / "functions" / function), str(opt / "python")]),
        "PYTHONNOUSERSITE": "1",
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": REGION,
        "AWS_DEFAULT_REGION": REGION,
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_METRICS_NAMESPACE": "memvault",
        "MEMVAULT_BACKEND": "aws",
        "MEMVAULT_AWS_REGION": REGION,
        "MEMVAULT_TABLE": "memvault",
        "MEMVAULT_BUCKET": "memvault",
        "MEMVAULT_DYNAMODB_ENDPOINT": moto.url,
        "MEMVAULT_S3_ENDPOINT": moto.url,
        # Nothing listens there: no cold start may need search.
        "MEMVAULT_OPENSEARCH_URL": "http://127.0.0.1:9",
        "MEMVAULT_OPENSEARCH_AUTH": "none",
        "MEMVAULT_OPENSEARCH_CREATE_INDEX": "false",
    }
    # What the template sets per function beyond the globals (retention: no embedder).
    res = next(
        r
        for r in template()["Resources"].values()
        if r["Type"] == "AWS::Serverless::Function"
        and Path(r["Properties"]["CodeUri"]).name == function
    )
    for key, value in res["Properties"].get("Environment", {}).get("Variables", {}).items():
        if key.startswith("MEMVAULT_") and isinstance(value, str | int):
            env.setdefault(key, str(value))
    return env


def cold_start(function: str, opt: Path, moto: MotoServer, runs: int) -> dict[str, Any]:
    imports = "import uvicorn.main\nimport app" if function == "inference" else "import app"
    env = function_env(function, opt, moto)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # /opt is read-only on Lambda
    python = build_layer.find_python()
    samples: list[float] = []
    cpu: list[float] = []
    searched = False
    for _ in range(runs):
        done = subprocess.run(
            [python, "-s", "-c", _PROBE.format(imports=imports)],
            cwd=ROOT / "functions" / function,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if done.returncode != 0:
            raise SystemExit(f"{function} does not start from its own layers:\n{done.stderr}")
        result = json.loads(done.stdout.strip().splitlines()[-1])
        samples.append(float(result["ms"]))
        cpu.append(float(result["cpu_ms"]))
        searched = searched or bool(result["opensearch"])
    return {
        "ms": statistics.median(samples),
        "cpu_ms": statistics.median(cpu),
        "opensearch": searched,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="build the layers here and keep them")
    parser.add_argument("--reuse", action="store_true", help="reuse layers built in --keep")
    parser.add_argument("--arch", choices=build_layer.ARCHES, default="x86_64")
    parser.add_argument("--import-times", type=int, default=0, metavar="N")
    parser.add_argument("--functions", nargs="*", help="only these (folder names)")
    parser.add_argument(
        "--search",
        metavar="URL",
        help="also run each function's handler on events/ against this OpenSearch node",
    )
    args = parser.parse_args()
    tmp = tempfile.TemporaryDirectory()
    work = args.keep or Path(tmp.name)
    try:
        built: dict[str, Path] = {}
        for layer in build_layer.LAYERS:
            out = work / "layers" / layer
            if not (args.reuse and (out / "python").is_dir()):
                shutil.rmtree(out, ignore_errors=True)
                build_layer.build(layer, out, args.arch)
            built[layer] = out
            print(f"{layer:<15} {mb(tree_bytes(out))} unzipped, {mb(zipped_bytes(out))} zipped")
        per_function = function_layers(template())
        worst = 0
        runs_here = {"x86_64": "x86_64", "aarch64": "arm64"}.get(os.uname().machine)
        if args.import_times and args.arch != runs_here:
            print(f"(no import times: {args.arch} layers do not run on this machine)")
            args.import_times = 0
        if args.search and args.arch != runs_here:
            args.search = None
        moto = MotoServer() if args.import_times or args.search else None
        index = f"memvault-package-check-{os.getpid()}"
        try:
            for function, layers in sorted(per_function.items()):
                if args.functions and function not in args.functions:
                    continue
                code = tree_bytes(ROOT / "functions" / function)
                opt = work / "opt" / function
                shutil.rmtree(opt, ignore_errors=True)
                overlay([built[name] for name in layers], opt)
                total = code + tree_bytes(opt)
                worst = max(worst, total)
                line = (
                    f"{function:<11} {mb(total)} of 250 MB unzipped,"
                    f" {mb(250_000_000 - total)} left ({' + '.join(layers)})"
                )
                if moto is not None and args.import_times:
                    hot = cold_start(function, opt, moto, args.import_times)
                    line += (
                        f"\n    cold-start import, median of {args.import_times} (wall / CPU):"
                        f" {hot['ms']:5.0f} / {hot['cpu_ms']:5.0f} ms;"
                        f" opensearch-py imported: {'yes' if hot['opensearch'] else 'no'}"
                    )
                if moto is not None and args.search:
                    line += f"\n    events: {smoke(function, opt, moto, args.search, index)}"
                print(line, flush=True)
        finally:
            if moto is not None:
                moto.stop()
            if args.search:
                drop_indices(args.search, index)
        if worst > LIMIT_BYTES:
            print(f"over Lambda's limit: {mb(worst)} > 250 MB", file=sys.stderr)
            return 1
        return 0
    finally:
        tmp.cleanup()


if __name__ == "__main__":
    sys.exit(main())
