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


# -- what a task takes of a sweep's shape, refused before any job with its key named -------------------------------
SHAPE_CASES = [  # (sweep, change, the message's start)
    ("dyck", {"N": [5, 8]}, "config key 'sweeps.dyck.N': a word of Dyck-(2, 2) has an even length: N = 5"),
    ("dyck", {"d": 6}, "config key 'sweeps.dyck.d': bounded Dyck has 4 tokens ( ) [ ]: d must be 4, got 6"),
    ("lookup", {"q": [2]}, "config key 'sweeps.lookup.q': index lookup reads one position: q must be 1, got 2"),
]


@pytest.mark.parametrize("sweep, change, message", SHAPE_CASES, ids=lambda c: str(c)[:30])
def test_a_shape_the_task_does_not_take_is_refused_naming_its_key(sweep, change, message):
    import copy

    import yaml
    from helpers import ROOT
    from stsq.config import ConfigError, validate_config
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    config["sweeps"][sweep].update(copy.deepcopy(change))
    with pytest.raises(ConfigError) as refused:
        validate_config(config, ROOT / "workflow" / "schemas" / "config.schema.yaml")
    assert str(refused.value).startswith(message), str(refused.value)


@pytest.mark.parametrize("task", sorted(tk.SHAPE_LIMITS))
def test_each_tasks_shape_limits_refuse_what_its_sampler_refuses_and_nothing_else(task):
    import itertools

    import torch
    from stsq.sts.task import sample_batch
    for N, q, d in itertools.product((3, 4, 6), (1, 2), (2, 4, 5)):
        try:
            sample_batch(4, N, q, d, torch.Generator().manual_seed(0), task)
            takes = True
        except ValueError:
            takes = False
        assert takes == (tk.SHAPE_LIMITS[task](N, q, d) is None), (task, N, q, d)
