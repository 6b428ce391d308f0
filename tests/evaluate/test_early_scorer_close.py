"""The early scorer's close ends its pool whole: worker, manager thread and the call queue's feeder
thread. A thread left running into the exit dropped the queue last, unlinked its semaphore and was
cut off before telling multiprocessing's resource tracker, which then warned of a leaked semaphore
("No such file or directory") below the command's last line after a Ctrl-C."""

import threading

import pytest

from scoring.evaluate.early import EarlyScorer


@pytest.mark.parametrize("abandon", [True, False])
def test_close_leaves_no_thread_or_process_of_the_pool(abandon):
    before = set(threading.enumerate())
    scorer = EarlyScorer(only_recorded=False)  # its worker is starting (spawned, preloading)
    processes = list(scorer._pool._processes.values())
    assert processes
    scorer.close(abandon=abandon)  # on Ctrl-C (abandon) or after the last run was scored
    assert [t.name for t in threading.enumerate() if t not in before] == []
    assert not any(p.is_alive() for p in processes)
