"""The HTTP routes, one module per area: notes, transfer, keys, billing and inference."""
