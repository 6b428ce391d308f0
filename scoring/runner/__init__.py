"""Model runner: config, transport, client, prompts, journal, the `run` and `serve-agent` commands.

Public entry points:
    scoring.runner.config.ModelSpec / load_config / EnvKeyProvider
    scoring.runner.prompts.build_messages
    scoring.runner.run.run_benchmark
    scoring.runner.agents.agent / serve
"""
