"""Adapters: the implementations of memvault.ports, one subpackage per backend (sqlite, aws)."""
