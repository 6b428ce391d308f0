"""Adapters to the evaluation frameworks researchers use (optional extras: inspect, lmeval)."""
