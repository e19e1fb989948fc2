"""Pure domain logic and value objects (paths, markdown, ranking, screening, recall): no I/O."""
