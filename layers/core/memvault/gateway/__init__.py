"""The inference gateway: recall and memory tool rounds in front of model providers."""
