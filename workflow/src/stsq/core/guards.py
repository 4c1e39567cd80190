"""Guards on a registered task, before any job: a wrong normalization is refused, naming the task.

Every loss the pipeline reports is normalized so that a model that learned nothing scores 1 (a regression predicting
0, a classification giving every class the same logit).  A task whose normalization is off reports every loss
scaled, and nothing else shows it: ``check_chance_level`` draws one batch at a few shapes and refuses the task where
such a predictor does not score 1.
"""

from __future__ import annotations

import math

from stsq.core.errors import PipelineError
from stsq.core.measures import CHANCE_LEVELS, measure_of, resolve

# Shapes (N, q, d) a batch is drawn at, each task at those it takes (a task refuses the others with a ValueError):
# where a task's classes differ from d (bounded Dyck's 2 at d = 4), a normalization written for d and handed the
# number of classes shows.
SHAPES = ((8, 1, 4), (8, 1, 5), (16, 1, 7), (16, 2, 7))
SLACK = 0.05  # one batch of 4096: a regression's chance-level loss lies within 1 +- 0.05 (its sd is about 0.02)


class TaskError(PipelineError):
    """A registered task that the pipeline refuses to run."""


def check_chance_level(task: str, shapes=SHAPES) -> dict[tuple[int, int, int], float]:
    """The chance-level loss of ``task`` at each shape; raises ``TaskError`` naming the task where one is not 1."""
    chance = resolve(CHANCE_LEVELS[measure_of(task).name])
    found = {}
    for shape in shapes:
        try:
            found[shape] = chance(task, *shape)
        except ValueError:  # a shape the task does not take (index lookup reads one position: q = 1)
            continue
    if not found:
        raise TaskError(f"task {task!r}: it takes none of the shapes (N, q, d) {shapes} its normalization is "
                        "checked at")
    wrong = {s: v for s, v in found.items() if not (math.isfinite(v) and abs(v - 1.0) <= SLACK)}
    if wrong:
        at = ", ".join(f"{v:.3f} at (N, q, d) = {s}" for s, v in wrong.items())
        raise TaskError(f"task {task!r}: a model that learned nothing scores {at}, not 1.0: its normalization "
                        f"(Task.power, and Task.classes for a classification, whose power is called with the number "
                        f"of classes) does not match its target")
    return found
