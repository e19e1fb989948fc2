"""Memory profiles (memIDs): what attaching them adds to a gateway request, and how well
facts are selected.

    .venv/bin/python bench/profiles.py                 # 16 memories x 1,000 facts, ~1 min
    .venv/bin/python bench/profiles.py --memories 4 --facts 200 --reps 100

Latency, in one run: memvault (embedded backend, the local embedding model) in front of
the scripted upstream (tests/support/upstream, the one stand-in), all in this process on
127.0.0.1. A key's member owns ``--memories`` memories of ``--facts`` embedded facts each
(plus two guardrails and three preferences each); every question (new each time, so
nothing is answered from a memo but what a profile memoises by revision) is sent
interleaved, alternating order, without ``x-mem-id`` and with all the memories attached.
The figure is the ``x-gateway-overhead-ms`` header (the time in memvault, less the time
waiting on the provider): the p50 and p99 of each path and the difference of the p50s,
which includes the one embedding call of the message. Target (never asserted): p50 added
≤ 5 ms.

Quality: a small labelled set written for this bench (LABELLED below: one user's facts
and questions, each question with the facts a good block holds) run through the same
selection (``ProfileService.attach``), reporting precision and recall of the selected
facts, micro-averaged over the questions.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
from pathlib import Path

import httpx
import numpy as np

import common  # noqa: F401  (puts the repo root on sys.path)
from memvault.adapters.embeddings.local import shared_local_embedder
from memvault.container import build_services
from memvault.domain.models import Toggles
from memvault.domain.profiles import ItemType, ProfileItem
from memvault.services.context import Caller
from tests.support.backends import backend_settings
from tests.support.clock import FakeClock
from tests.support.people import make_org
from tests.support.servers import serve
from tests.support.upstream import ScriptedUpstream

TOPICS = [
    "dog", "garden", "car", "flight", "allergy", "birthday", "coffee", "bank", "school",
    "doctor", "holiday", "music", "football", "kitchen", "printer", "laptop", "rent",
    "piano", "bicycle", "wine", "passport", "dentist", "yoga", "chess", "sister",
]  # fmt: skip
WORDS = [
    "blue", "green", "quiet", "early", "late", "small", "large", "weekly", "monthly",
    "morning", "evening", "north", "south", "red", "old", "new", "local", "remote", "spare",
    "fresh", "sweet", "sour",
]  # fmt: skip

# One user's facts, then questions and the facts (by index) a good block would hold.
LABELLED_FACTS = [
    "The user's dog is a beagle called Pixel.",  # 0
    "Pixel is allergic to chicken.",  # 1
    "The user is vegetarian.",  # 2
    "The user is allergic to peanuts.",  # 3
    "The user's partner is called Sam.",  # 4
    "Sam's birthday is on 14 March.",  # 5
    "The user drives a 2019 Toyota Corolla.",  # 6
    "The car is due for its service in May.",  # 7
    "The user works as a nurse at St Mary's hospital.",  # 8
    "The user works night shifts on weekends.",  # 9
    "The user lives in Leeds.",  # 10
    "The user's flat has no garden.",  # 11
    "The user is learning Spanish.",  # 12
    "The user plans a trip to Madrid in June.",  # 13
    "The user prefers window seats on flights.",  # 14
    "The user's laptop is a 2021 MacBook Air.",  # 15
    "The user plays the piano on Sunday mornings.",  # 16
    "The user's sister Ana lives in Lisbon.",  # 17
    "The user runs 5 km three times a week.",  # 18
    "The user's bank is Nationwide.",  # 19
]
LABELLED = [
    ("What can I cook for dinner tonight?", {2, 3}),
    ("What treats can I give my dog?", {0, 1}),
    ("Gift ideas for my partner's birthday?", {4, 5}),
    ("When should I book my car in for a service?", {6, 7}),
    ("Help me plan my week around work.", {8, 9}),
    ("Which window seat should I pick on my flight to Madrid?", {13, 14}),
    ("Suggest Spanish phrases for my trip.", {12, 13}),
    ("My laptop is slow, what should I check?", {15}),
    ("Which piano pieces suit a Sunday practice?", {16}),
    ("I want to visit my sister, how do I get there?", {17}),
    ("Give me a training plan for my running.", {18}),
    ("Can I grow tomatoes where I live?", {10, 11}),
]


def fact_text(rng: random.Random, i: int) -> str:
    topic, a, b = rng.choice(TOPICS), rng.choice(WORDS), rng.choice(WORDS)
    return f"Fact {i}: the user's {topic} notes say {a} and {b} things about the {topic}."


def seed_memories(
    services, caller: Caller, memories: int, facts: int, rng: random.Random
) -> list[str]:
    embedder = shared_local_embedder()
    profiles, store = services.profiles, services.profiles.store
    slugs = []
    for m in range(memories):
        slug = f"user-{m}"
        made = profiles.create(caller, slug=slug, name=slug)
        profiles.add_item(caller, slug, item_type=ItemType.GUARDRAIL, text=f"Rule {m}: be kind.")
        profiles.add_item(caller, slug, item_type=ItemType.GUARDRAIL, text="Never share PII.")
        for k in ("tone", "language", f"pref-{m}"):
            profiles.add_item(
                caller, slug, item_type=ItemType.PREFERENCE, text=f"{k} for {slug}", key=k
            )
        texts = [fact_text(rng, i) for i in range(facts)]
        vectors = embedder.embed_array(texts)
        now = services.profiles.clock()
        for i, (text, row) in enumerate(zip(texts, vectors, strict=True)):
            item = ProfileItem(
                id=f"{m:02d}{i:06d}",
                memory_id=made.id,
                item_type=ItemType.FACT,
                text=text,
                created_at=now,
                updated_at=now,
                vector=np.asarray(row, dtype=np.float32).tobytes(),
                model=embedder.model,
            )
            store.add_item(caller.account_id, item, max_items=10_000, now=now)
        slugs.append(slug)
    return slugs


def latency(args: argparse.Namespace) -> None:
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp, ScriptedUpstream() as upstream:
        overrides = {
            "openai_base_url": upstream.base_url + "/v1",
            "openai_api_key": "sk-bench",
        }
        with backend_settings(Path(tmp), "sqlite", **overrides) as settings:
            services = build_services(settings, clock=FakeClock())
            org = make_org(services, "bench")
            caller = org.member.caller
            print(f"seeding {args.memories} memories x {args.facts} facts ...", file=sys.stderr)
            slugs = seed_memories(services, caller, args.memories, args.facts, rng)
            issued = services.keys.create_key(caller, name="bench", toggles=Toggles())
            header = ",".join(slugs)
            for server in serve(services, services.profiles.clock):  # type: ignore[arg-type]
                run_paths(server.url, issued.secret, header, args, rng)


def run_paths(
    url: str, key: str, header: str, args: argparse.Namespace, rng: random.Random
) -> None:
    plain: list[float] = []
    attached: list[float] = []
    applied = 0
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}) as client:

        def send(question: str, mem: bool) -> float:
            nonlocal applied
            body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": question}]}
            headers = {"x-mem-id": header} if mem else {}
            r = client.post("/v1/chat/completions", json=body, headers=headers)
            r.raise_for_status()
            if mem and r.headers.get("x-memory-applied"):
                applied += 1
            return float(r.headers["x-gateway-overhead-ms"])

        for i in range(args.warmup):
            send(f"warm up {i} about the {rng.choice(TOPICS)}", True)
            send(f"warm up {i} about the {rng.choice(TOPICS)}", False)
        for i in range(args.reps):
            question = f"What do I know about my {rng.choice(TOPICS)}? ({i} {rng.random():.6f})"
            order = [(True, attached), (False, plain)]
            if i % 2:
                order.reverse()
            for mem, into in order:
                into.append(send(question, mem))
    p50_plain, p50_mem = statistics.median(plain), statistics.median(attached)
    q = statistics.quantiles
    print(f"requests per path: {len(plain)}; applied header non-empty on {applied}")
    print(f"overhead without x-mem-id: p50 {p50_plain:.2f} ms, p99 {q(plain, n=100)[98]:.2f} ms")
    print(
        f"overhead with {header.count(',') + 1} memories: p50 {p50_mem:.2f} ms, "
        f"p99 {q(attached, n=100)[98]:.2f} ms"
    )
    print(f"added by profiles, p50: {p50_mem - p50_plain:.2f} ms (target <= 5 ms)")


def quality() -> None:
    with tempfile.TemporaryDirectory() as tmp, backend_settings(Path(tmp), "sqlite") as settings:
        services = build_services(settings, clock=FakeClock())
        org = make_org(services, "quality")
        caller = org.member.caller
        services.profiles.create(caller, slug="u", name="u")
        for text in LABELLED_FACTS:
            services.profiles.add_item(caller, "u", item_type=ItemType.FACT, text=text)
        key = services.keys.create_key(caller, name="q", toggles=Toggles()).key
        chosen = right = wanted = 0
        for question, expected in LABELLED:
            got = services.profiles.attach(key, ["u"], question)
            picked = got.composition.facts if got.composition else ()
            ids = {LABELLED_FACTS.index(t) for t in picked}
            chosen += len(ids)
            right += len(ids & expected)
            wanted += len(expected)
            print(f"  {question!r}: picked {sorted(ids)}, expected {sorted(expected)}")
        precision = right / chosen if chosen else 0.0
        print(
            f"fact selection: precision {precision:.2f} ({right}/{chosen}),"
            f" recall {right / wanted:.2f} ({right}/{wanted}) on {len(LABELLED)} questions"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=16)
    parser.add_argument("--facts", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--quality-only", action="store_true")
    args = parser.parse_args()
    quality()
    if not args.quality_only:
        latency(args)


if __name__ == "__main__":
    main()
