"""The behaviour every surface calls: vault, accounts, transfer, indexing, recall, billing."""
