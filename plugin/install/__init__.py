"""Dependency check and the in-app installer (import nothing of scoring)."""
