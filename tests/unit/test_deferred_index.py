"""adapters/aws/deferred.py: the search adapter is built on first use, once, and stands
in for it entirely (attribute reads, writes and deletes reach the adapter)."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from memvault.adapters.aws.deferred import DeferredSearchIndex


class Adapter:
    def __init__(self) -> None:
        self.counts = {"a": 1}

    def search(self, q: str) -> str:
        return f"hits for {q}"


def test_built_on_first_use_and_only_once() -> None:
    built: list[Adapter] = []

    def build() -> Adapter:
        built.append(Adapter())
        return built[-1]

    index = DeferredSearchIndex(build)
    assert not index.built and built == []
    threads = [threading.Thread(target=lambda: index.search("x")) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(built) == 1 and index.built
    assert index.search("y") == "hits for y"
    assert index.counts is built[0].counts


def test_writes_and_deletes_reach_the_adapter(monkeypatch: pytest.MonkeyPatch) -> None:
    adapter = Adapter()
    index = DeferredSearchIndex(lambda: adapter)
    monkeypatch.setattr(index, "search", lambda q: "patched")
    assert adapter.search("q") == "patched"  # type: ignore[call-arg]
    monkeypatch.undo()
    assert adapter.search("q") == "hits for q"
    index.extra = 3  # type: ignore[attr-defined]
    assert adapter.extra == 3  # type: ignore[attr-defined]
    del index.extra  # type: ignore[attr-defined]
    assert not hasattr(adapter, "extra")


def test_a_build_failure_is_raised_where_the_adapter_is_used() -> None:
    def build() -> Adapter:
        raise RuntimeError("no search")

    index = DeferredSearchIndex(build)
    with pytest.raises(RuntimeError, match="no search"):
        index.search("x")
    assert not index.built


def test_the_aws_wiring_imports_no_opensearch_until_search_is_used() -> None:
    probe = (
        "import sys\n"
        "import memvault.adapters.aws.wiring, memvault.container\n"
        "assert 'opensearchpy' not in sys.modules, 'imported at wiring import'\n"
        "from memvault.adapters.aws.wiring import search_index\n"
        "from memvault.settings import Settings\n"
        "search_index(Settings(backend='aws', opensearch_url='http://127.0.0.1:9',"
        " opensearch_auth='none'))\n"
        "assert 'opensearchpy' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
