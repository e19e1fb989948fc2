"""Search text full of engine syntax: user text must never reach an engine as syntax."""

HOSTILE_QUERIES = [
    '"unbalanced',
    "a AND OR NOT",
    "col:umn",
    "NEAR(a b)",
    "*",
    "^start",
    "(((",
    "a -b +c",
    "title:evil}",
    "'; DROP TABLE notes; --",
    "{path}: x",
    "émigré 日本語",
]
