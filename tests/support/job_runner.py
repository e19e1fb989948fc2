"""One job run as the job function runs it, in a process of its own (tests of killed
jobs): ``functions/jobs/app.py`` loaded as a cold start with the environment given, its
handler invoked on the event given, and, with ``kill_at``, the process SIGKILLed by
itself just before its ``kill_at``-th DynamoDB TransactWriteItems is sent: what a Lambda
timeout or an out-of-memory kill does to a job in the middle of its commit, with no
chance to run a line of cleanup.

    python -m tests.support.job_runner '{"env": {...}, "event": {...}, "kill_at": 40}'

Prints the handler's answer as JSON (when it lives to answer).
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import sys
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    config: dict[str, Any] = json.loads(sys.argv[1])
    os.environ.update(config["env"])
    spec = importlib.util.spec_from_file_location(
        "memvault_fn_jobs", ROOT / "functions" / "jobs" / "app.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    kill_at = config.get("kill_at")
    if kill_at:
        sent = 0

        def count(**_kwargs: Any) -> None:
            nonlocal sent
            sent += 1
            if sent >= kill_at:
                os.kill(os.getpid(), signal.SIGKILL)

        client = module.services.store.table.client
        client.meta.events.register("before-send.dynamodb.TransactWriteItems", count)
    context = SimpleNamespace(
        function_name="memvault-jobs",
        function_version="$LATEST",
        memory_limit_in_mb=3008,
        invoked_function_arn="arn:aws:lambda:eu-west-1:123456789012:function:memvault-jobs",
        aws_request_id=str(uuid.uuid4()),
        get_remaining_time_in_millis=lambda: 900_000,
    )
    print(json.dumps(module.handler(config["event"], context)))


if __name__ == "__main__":
    main()
