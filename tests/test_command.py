"""The `spatialgap` command: each command loads only its own stage."""

import subprocess
import sys

from scoring.cli import COMMAND_MODULES, _module_of, main


def test_a_command_imports_only_its_stage():
    # serve-agent's first stderr line is its address (read by evaluate): no GDAL or matplotlib
    # import may print warnings before it, nor slow its start.
    code = (
        "import sys; from scoring.cli import _module_of, make_parser; "
        "make_parser(_module_of(['serve-agent', '--agent', 'chance'])); "
        "heavy = ('matplotlib', 'osgeo', 'scoring.render', 'scoring.score'); "
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert p.stdout.strip() == "[]"


def test_every_command_is_found_and_help_lists_them_all(capsys):
    for module, commands in COMMAND_MODULES.items():
        for command in commands:
            assert _module_of(["-v", command, "--x"]) == [module]
    assert _module_of(["--help"]) == list(COMMAND_MODULES)
    assert main([]) == 2
    out = capsys.readouterr().out
    assert all(c in out for cs in COMMAND_MODULES.values() for c in cs)
