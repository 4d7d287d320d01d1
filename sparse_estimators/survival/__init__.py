"""Survival analysis: Cox proportional-hazards models with exactly ``k`` features.

Usable beside scikit-survival: ``y`` is the structured array
``sksurv.util.Surv.from_arrays(event, time)`` builds, :meth:`score` is
Harrell's concordance index, and the predicted survival and cumulative
hazard functions are step functions of Breslow's baseline, as scikit-survival's
``CoxPHSurvivalAnalysis`` returns them.
"""

from ._cox import (
    AcceleratedIHTCoxPHSurvivalAnalysis,
    IHTCoxPHSurvivalAnalysis,
    IOBSCoxPHSurvivalAnalysis,
    RegularizedIHTCoxPHSurvivalAnalysis,
)
from ._monotone import MonotoneLikelihoodWarning
from ._target import StepFunction, check_survival_target, concordance_index

__all__ = [
    "AcceleratedIHTCoxPHSurvivalAnalysis",
    "IHTCoxPHSurvivalAnalysis",
    "IOBSCoxPHSurvivalAnalysis",
    "MonotoneLikelihoodWarning",
    "RegularizedIHTCoxPHSurvivalAnalysis",
    "StepFunction",
    "check_survival_target",
    "concordance_index",
]
