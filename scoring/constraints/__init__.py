"""Constraints and edits: fact sentences, their wording, the edit executor, explanations, map framing."""
