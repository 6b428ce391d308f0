"""Shared by every stage: JSON files and the one atomic writer, memo caches, process start-up."""
