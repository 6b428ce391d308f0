"""`python -m scoring.adapters.lm_eval ARGS`: lm-eval's command line with this folder's tasks
included (lm-eval finds tasks of an installed package through --include_path only) and the
`spatialgap-chat-completions` model registered (scoring.adapters.lm_eval.model):

    python -m scoring.adapters.lm_eval --tasks spatialgap --model spatialgap-chat-completions \\
        --model_args model=M,base_url=http://127.0.0.1:8000/v1/chat/completions \\
        --apply_chat_template --metadata '{"bench": "PATH"}'

`--include_path` alone prints the folder (for lm-eval's own command or TaskManager)."""

import sys
from pathlib import Path

TASKS_DIR = Path(__file__).resolve().parent


def main(argv: list[str]) -> None:
    """Print the tasks folder, or run lm-eval with it included and our model registered."""
    if argv == ["--include_path"]:
        print(TASKS_DIR)
        return
    from lm_eval.__main__ import cli_evaluate

    import scoring.adapters.lm_eval.model  # noqa: F401 (registers the model with lm-eval)

    sys.argv = [sys.argv[0], *argv, "--include_path", str(TASKS_DIR)]
    cli_evaluate()


if __name__ == "__main__":
    main(sys.argv[1:])
