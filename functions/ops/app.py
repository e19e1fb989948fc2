"""The ops function: upkeep every few minutes (the search outbox drained for every
account, expired holds settled, the queue's age as a metric), the search index made at
deploy time (the SearchIndex custom resource), and the operator's commands (init-search,
reindex, drain): see memvault.lambda_ops. The only function whose role may create the
search index. Logs, metrics and traces: memvault.lambda_powertools.
"""

from __future__ import annotations

from memvault.lambda_boot import boot_services
from memvault.lambda_ops import Ops
from memvault.lambda_powertools import Powertools

powertools = Powertools("ops")

services = boot_services()
ops = Ops(services, powertools)
handler = powertools.handler(ops.handle)
