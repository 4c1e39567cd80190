"""A task's normalization, checked: a model that learned nothing scores 1.0 on every registered task, and a task
whose normalization does not match its target is refused, naming the task and what it scored."""

import dataclasses
import math

import pytest
from stsq.core import tasks as tk
from stsq.core.guards import TaskError, check_chance_level


@pytest.mark.parametrize("task", list(tk.TASKS))
def test_a_model_that_learned_nothing_scores_one_on_every_registered_task(task):
    found = check_chance_level(task)
    assert found and all(abs(v - 1.0) <= 0.05 for v in found.values()), found


def test_a_classification_whose_power_is_written_for_d_but_handed_the_classes_is_refused(monkeypatch):
    """A task of bounded Dyck's words (2 classes at d = 4) whose power was written as if it received d: log(d / 2),
    where the loss hands it the number of classes. At chance every loss would read log 2 / log 1: refused."""
    wrong = dataclasses.replace(tk.TASKS["dyck"], name="dyck_wrong", power=lambda d, q: math.log(d / 2) or 1e-9)
    monkeypatch.setitem(tk.TASKS, "dyck_wrong", wrong)
    with pytest.raises(TaskError, match=r"task 'dyck_wrong': a model that learned nothing scores .* not 1\.0"):
        check_chance_level("dyck_wrong")


def test_a_regression_whose_power_misses_a_factor_is_refused(monkeypatch):
    """STS_q with E||t||^2 written as d (it is d / q): every loss at q = 2 would read half of what it is."""
    wrong = dataclasses.replace(tk.TASKS["sts"], name="sts_wrong", power=lambda d, q: float(d))
    monkeypatch.setitem(tk.TASKS, "sts_wrong", wrong)
    with pytest.raises(TaskError, match=r"task 'sts_wrong': .*0\.50\d at \(N, q, d\) = \(16, 2, 7\)"):
        check_chance_level("sts_wrong")
