"""`spatialgap evaluate` (what `make run` runs): every model and built-in agent over every
city, task and modality it can read, resumable, scored and reported in one command.

    plan      cities, participants (agents + configured models) and the modalities each reads
    cities    each city's benchmark, built once and reused; maps drawn in a background process
    agents    the built-in agents served over loopback HTTP, one process each
    sweep     the concurrent runs, then scoring and the report
    progress  one live display for the whole sweep
    cli       the command line and the closing one-screen summary
"""

from scoring.evaluate.cli import add_parser
from scoring.evaluate.plan import AGENT_MODALITIES, DEFAULT_AGENTS, City, Participant, SweepPlan
from scoring.evaluate.sweep import evaluate

__all__ = ["AGENT_MODALITIES", "DEFAULT_AGENTS", "City", "Participant", "SweepPlan", "add_parser", "evaluate"]
