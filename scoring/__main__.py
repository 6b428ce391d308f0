from scoring.cli import run

run()
