"""The claims: each a record of the paper's statement (or a pipeline check), its threshold and why, what it
presupposes and the sweeps that test it; measured by stsq.claims from a sweep's tables.

Apart from the vocabulary (stsq.experiment): training, evaluation and the data never read a claim, so a threshold
changes the claims table and what reads it, and nothing before it (stsq.codehash).  docs/claims.md explains each
threshold.
"""

from __future__ import annotations

from dataclasses import dataclass

SAMPLING_Z = 2.0  # a loss counts as below an exact floor only when below it by more than this many standard errors


# The sweeps of config.yaml with their own make target (the cpu sweep's is `make run`); the claims say
# which of them tests each claim (``Claim.tested_by``), the report names the command.
MAKE_SWEEPS = ("cpu", "budget", "encodings", "separation")


# -- claims -------------------------------------------------------------------------------------
# Each claim is a statement of the paper, measured from the tidy table (and the oracle table) of any
# sweep, with what it presupposes.  Its verdict is PASS, FAIL, or NOT TESTED when the sweep cannot test
# it or its presupposition does not hold (the reason is said).  Checks are bounds every correct pipeline
# obeys (theorems): they catch bugs, not the paper being wrong, and are listed apart.
# docs/claims.md explains each threshold.
PASS, FAIL, NOT_TESTED = "PASS", "FAIL", "NOT TESTED"
PAPER, CHECK = "paper", "check"  # a claim's kind: a statement of the paper, or a pipeline check
EPSILON = 0.1  # the target loss of the scaling claims: the width "needed" reaches it (stsq.critical)
EPSILONS = (0.05, 0.1, 0.2)  # the targets the critical widths are computed at (robustness to eps)
RESOLUTION = 2.0  # a critical width counts in a fit only when bracketed by widths at most this far apart
LEARNED_BELOW = 0.1  # "the model learned at N": its worst seed's loss at N' = N is at most this
ORACLE_FACTOR, ORACLE_SLACK = 1.25, 0.01  # "reaches the oracle": loss <= 1.25 x oracle + 0.01
GENERALIZES_WITHIN = 0.15  # stochastic PE at N' > N: loss <= the oracle at N' + this
REACH_MIN_FACTOR = 2  # length_stochastic: the worst seed's reach (stsq.reach) is at least this x N
FIXED_FAILS_ABOVE = 0.3  # fixed PE off its training length: loss above this (predicting 0 scores 1)
TREND_SLOPE_MIN = 0.2  # d log loss(N'max) / d log loss(N) over training, stochastic PE (docs/claims.md)
COS_V_MIN = 0.9  # cos(V, [I, 0]) at the end of training, stochastic PE
COS_W_MIN = 0.5  # cos(W_pp, I) at the end of training, stochastic PE
FCN_SLOPE_MIN = 0.75  # d log m_eps / d log(N d) of the FCN: the floor says 1
PRODUCT_FACTOR = 2.0  # cells with the same N d need FCN widths within this factor of each other
PRODUCT_EXPONENT_GAP = 0.5  # ... and the fitted exponents of N and d differ by at most this (floor: 1 and 1)
TF_D_EXPONENT_MAX = 0.5  # d log d_e,eps / d log d of the transformer: theory 0, the FCN's 1
TF_SLOPE_MAX = 1.5  # d log d_e,eps / d log(q log N) of the transformer: the theory says 1 (or less)


@dataclass(frozen=True)
class Claim:
    key: str
    statement: str  # the paper's statement, in words
    measured: str  # what is measured, from which rows of the table
    threshold: str  # what PASS means
    why: str  # where the threshold comes from
    presupposes: str = ""  # what must hold for the measurement to test the statement (else NOT TESTED)
    kind: str = PAPER
    # the sweeps of MAKE_SWEEPS whose grid tests it; the report names the first other than its own, so the
    # first trains every arch the claim reads
    tested_by: tuple[str, ...] = ("cpu",)
    value: str = ""  # what a row's number (the table's value column) is: the captions and the claims page name it


LEARNED = f"the stochastic-PE transformer (largest d_e) learned at N: worst seed's loss at N' = N <= {LEARNED_BELOW:g}"
CLAIMS = {c.key: c for c in [
    Claim("learns", "the transformer (stochastic PE) learns STS_q by gradient descent",
          "worst seed's final loss at N' = N, largest d_e",
          f"<= {ORACLE_FACTOR:g} x oracle + {ORACLE_SLACK:g}",
          "theory: GD converges to the ground-truth family, whose best loss is the oracle's; the slack "
          "covers finite training (for q <= 2 the oracle is 0 and the loss keeps falling as W_pp's scale grows)",
          "nothing: the claim is that the model learns, so a model that did not is a FAIL",
          value="the worst seed's loss at N' = N"),
    Claim("wider_d_e", "a wider positional encoding lowers the transformer's loss",
          "mean final loss at the largest vs the smallest d_e, N' = N", "largest < smallest",
          "theory: near-orthogonal encodings need d_e = Theta(q log N); the oracle falls with d_e", LEARNED,
          value="the mean loss at the largest d_e minus at the smallest"),
    Claim("directions", "gradient descent converges to the ground-truth directions (stochastic PE)",
          "worst seed's cos(V, [I, 0]) and cos(W_pp, I) at the end of training, largest d_e",
          f"cos V >= {COS_V_MIN:g} and cos W_pp >= {COS_W_MIN:g}",
          "theory: W_pp -> c I, V -> [I, 0]; Adam's per-coordinate steps leave noise on W_pp's d_e^2 "
          "entries, so its cosine stays below V's (measured, docs/claims.md)", LEARNED,
          value="the lowest cosine of any seed, V's or W_pp's"),
    Claim("length_stochastic", "stochastic positional encodings generalize to unseen lengths",
          "the reach (stsq.reach): the longest N' such that the loss at every scored N'' with N < N'' <= N' is "
          f"within the oracle at N'' + {GENERALIZES_WITHIN:g}; worst seed, largest d_e, with the seeds' range, the "
          "loss and the oracle at each N' (and, as the explanation of what was learned, the model's projection "
          "onto the ground-truth family W_pp = c I, V = v [I, 0])",
          f"worst seed's reach >= {REACH_MIN_FACTOR}N",
          "theory: the ground-truth solution does not depend on N; an absolute bound a non-generalizing model "
          f"fails (fixed PE scores above {FIXED_FAILS_ABOVE:g}, predicting 0 scores 1). How far it reaches is "
          "the number reported: a verdict at every N' the sweep scored would depend on where the sweep stops",
          LEARNED,
          value="the worst seed's reach, N'/N"),
    Claim("length_reach", "the reach of stochastic positional encodings grows with d_e and along training",
          "the worst seed's reach (stsq.reach) of the final models at the smallest and the largest d_e that "
          "learned at N; at the largest d_e, at the first checkpoint where it had learned at N and at the last",
          "larger at the largest d_e than at the smallest, and at the last checkpoint than at the first (equal "
          "counts only where both are at the longest N' scored)",
          "theory: N' near-orthogonal unit vectors need d_e ~ q log N', so the width allows a reach exponential "
          "in d_e / q (N^(d_e / d_e,eps), reported beside it); along training the attention's scale c grows and "
          "its leakage (N' - q) e^(-c) at N' falls",
          LEARNED + " at two d_e or more; two checkpoints scored at N' > N after it learned",
          value="the final models' reach at the largest d_e over the reach at the smallest"),
    Claim("length_training", "as training drives the in-distribution loss down, the loss at unseen lengths "
          "goes down with it (stochastic PE)",
          "worst seed's log-log slope of the loss at the longest N' against the loss at N, over the checkpoints "
          "(the fixed-PE model's slope beside it)",
          f">= {TREND_SLOPE_MIN:g}",
          "theory: with W_pp = c I the off-target attention decays like (N' - q) e^(-c) at every length, so "
          "both losses fall together (slope 1 once that leakage dominates; early on the loss at N also holds "
          "V's error, measured 0.4-0.6); a model that does not generalize keeps its long-N' loss (fixed PE: "
          "|slope| < 0.002)", LEARNED + "; at least 3 checkpoints scored at N'",
          value="the worst seed's slope"),
    Claim("length_fixed", "a positional table, drawn once or learned, fails at unseen lengths (the paper's "
          "fixed PE; a learned table's rows beyond N are never trained either)",
          "per arch expected to fail beyond N (tf_fixed, tf_learned): best seed's loss at every N' > N, largest d_e",
          f"> {FIXED_FAILS_ABOVE:g} at every N' > N",
          "paper: fixed PE hinders length generalization; rows N+1..N' of its table were never trained",
          f"the model fits at N: worst seed's loss at N' = N <= {LEARNED_BELOW:g} (else its failure at "
          "N' says nothing about length)",
          tested_by=("encodings", "cpu"),  # the encodings sweep first: it trains both tables, the cpu sweep one
          value="the best seed's lowest loss at an N' > N"),
    Claim("length_randomized", "randomized positions (a sorted random subset of L positions per sample) "
          "generalize to every unseen length up to L (Ruoss et al. 2023)",
          "per arch drawing its positions from L rows (tf_randomized): worst seed's loss at every N with "
          "N < N' <= L, largest d_e, against the oracle at N' (N' > L: not applicable, the model has no position "
          "there)",
          f"<= oracle at N' + {GENERALIZES_WITHIN:g} at every N < N' <= L",
          "Ruoss et al.: every relative arrangement of positions up to L is seen in training; the same absolute "
          "bound as length_stochastic (the ground-truth family works on any near-orthogonal positions)",
          f"the model learned at N: worst seed's loss at N' = N <= {LEARNED_BELOW:g}; an N' with N < N' <= L",
          tested_by=("encodings",),
          value=f"the worst seed's largest loss minus its bound, oracle + {GENERALIZES_WITHIN:g}, over N < N' <= L"),
    Claim("fcn_scaling", "the width an FCN needs grows at least like N d",
          f"slope of log m_eps against log(N d), m_eps the critical width at loss {EPSILON:g} (stsq.critical), "
          "fitted per seed over the resolved points; beside it the slopes at every eps on the same points, the "
          "slope the grid can resolve, and m_eps / m*(eps) at each N d with the slope of that ratio (the part of "
          "the growth the sample budget, not the width floor, explains)",
          f"worst seed >= {FCN_SLOPE_MIN:g}",
          "theory: Omega(N d); the exact floor needs m*(eps) ~ (1 - eps) N d, slope 1 at every eps. The rival: a "
          f"need growing slower than N d (slope < {FCN_SLOPE_MIN:g}). A slope above 1 is the samples binding "
          "(m_eps / m*(eps) rising with N d); fcn_budget measures it at 4x the steps",
          "at least two values of N d with a resolved critical width (not censored, bracketed within "
          f"x{RESOLUTION:g})",
          value="the worst seed's slope"),
    Claim("fcn_product", "what the FCN needs depends on the product N d",
          "geometric-mean critical width of each (N, d) sharing one value of N d; the exponents of N and d "
          "fitted jointly beside it",
          f"largest / smallest <= {PRODUCT_FACTOR:g} at every shared N d, and (where both vary) the exponents of "
          f"N and d within {PRODUCT_EXPONENT_GAP:g} of each other (worst seed)",
          f"theory: the floor depends on N and d almost only through N d (m*(eps) ~ (1 - eps) N d); a factor "
          f"{PRODUCT_FACTOR:g} is the grid's resolution near the transition; a need that depends on N or d "
          "alone has exponents 1 apart",
          "a value of N d reached by two (N, d) with resolved critical widths",
          value="the largest ratio of two (N, d)'s widths at one N d"),
    Claim("fcn_budget", "the FCN's need is a width need: more samples lower it toward the exact floor, never "
          "below it (ours, from the floor)",
          f"geometric-mean m_eps at loss {EPSILON:g} at each (N, d) for each training budget (steps)",
          "the larger budget's m_eps <= the smaller's x 1.25, and the width at which it reached eps >= m*(eps)",
          "the floor holds whatever the training; the sample budget only adds to it (1.25: the seeds' spread)",
          "two budgets with resolved critical widths at one (N, d)",
          tested_by=("budget",),
          value="the largest ratio of the larger budget's m_eps to the smaller's"),
    Claim("tf_d_free", "the width a transformer needs does not grow with d",
          f"exponent of d in a joint fit of log d_e,eps against log(q log N) and log d (loss {EPSILON:g}); the "
          "rival d_e,eps ~ q log N d^0.25, fitted with the theory's q log N below the largest d, against the "
          "need measured at the largest d (stsq.rivals)",
          f"worst seed <= {TF_D_EXPONENT_MAX:g}, and the rival d^0.25 rejected: outside the seeds' range at every "
          "held-out (q, N), the theory closer",
          "theory: the positional width is Theta(q log N), whatever d; the FCN's exponent of d is 1. d^0.25 is the "
          "nearest law the statement denies that a sweep over d x4 can resolve (1.41x)",
          "two values of d (x4 apart or more, so that d^0.25 predicts a need 1.25x or more above d^0) and two of N "
          "with resolved critical widths",
          tested_by=("separation",),
          value="the largest seed's exponent of d"),
    Claim("tf_scaling", "the width a transformer needs grows like q log N or slower, at q >= 3 like q log^2 N: "
          "the summed query's cross-terms, still O~(q log N)",
          f"per q, the slope of log d_e,eps against the log of that q's form, q log N or q log^2 N (loss "
          f"{EPSILON:g}), per seed, over the resolved points; the rival d_e,eps ~ q sqrt(N), and the form, each "
          "fitted below the largest N, against the need measured at the largest N (stsq.rivals)",
          f"worst seed <= {TF_SLOPE_MAX:g}, and the rival q sqrt(N) rejected: outside the seeds' range at every "
          "held-out d, the theory closer",
          "theory: embedding width O~(d + q log N); near-orthogonal encodings need d_e = Theta(q log N), and at "
          "q >= 3 the uneven cross-terms inside y one more log N. sqrt(N) is the smallest power law the statement "
          "denies (over N = 4 .. 16 log N and sqrt(N) both double: a logarithm looks like N^(1/ln N) locally); "
          "any N^a with a >= 0.5 predicts at least its need",
          "at least two values of N with resolved critical widths, none censored above; N wide enough that the "
          "form and q sqrt(N) predict needs 1.25x apart or more at the largest N (q log N from N = 8: N = 128), "
          "the rival above the form (q log^2 N outgrows sqrt(N) up to N ~ 55: at q >= 3 a CPU's N cannot)",
          tested_by=("separation",),
          value="the worst seed's slope against its q's form"),
    Claim("fcn_floor", "no FCN beats the exact width floor",
          "every seed's final loss minus the floor at its width m, at the widths m < N d where the floor is positive",
          f">= -{SAMPLING_Z:g} standard errors of the loss's estimate",
          "exact bound (docs/paper.md): a first layer of width m sees m projections of vec(X); a check of the "
          "pipeline, not a test of the paper: a model that learned nothing obeys it. The floor is an expectation, "
          "the loss a mean over n_eval samples: below it by sampling error is no violation. At m >= N d the floor "
          "is 0 and no loss can violate it",
          "an FCN width below N d", kind=CHECK,
          value="the smallest loss minus the floor, over seeds and widths"),
    Claim("fcn_need_floor", "no FCN needs less width than the exact floor allows",
          "every critical width whose grid has a width below the floor's m*(eps): the smallest grid width at which "
          "the model reached eps, against m*(eps) (the interpolated m_eps beside it)", ">= m*(eps)",
          "exact bound: a check of the pipeline. Only a measured width is evidence; the log-log interpolation "
          "between two grid widths may dip below m*(eps) where the loss curve bends. Where every grid width is "
          "above m*(eps), no model can violate it",
          "a grid width below m*(eps)", kind=CHECK,
          value="the smallest ratio of the width that reached eps to m*(eps)"),
]}
CLAIM_COLUMNS = ["claim", "kind", "statement", "q", "N", "d", "cell", "measured", "value", "threshold", "verdict"]
