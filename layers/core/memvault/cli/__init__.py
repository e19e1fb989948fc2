"""The `memvault` command line: `serve`, `mcp`, admin commands and a client of the REST API."""
