"""memvault: a memory layer for LLM API keys."""

__version__ = "0.1.0"
