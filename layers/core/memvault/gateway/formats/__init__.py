"""The gateway's API formats: OpenAI Chat Completions and Anthropic Messages, both directions."""
