"""Model runner: config, transport, client, prompts, the `run` and `serve-agent` commands.
Runs are written through scoring.formats.rundir (layout, journal), which the scorer reads.

Public entry points:
    scoring.runner.config.ModelSpec / load_config / EnvKeyProvider
    scoring.runner.prompts.build_messages
    scoring.runner.run.run_benchmark
    scoring.runner.agents.agent / serve
"""
