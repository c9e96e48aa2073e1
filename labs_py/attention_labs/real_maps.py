"""The former name of :mod:`attention_labs.maps` (the attention-map format, its writer and its
readers), kept so that lessons, notebooks and readers' code that import ``real_maps`` still
work. New code imports ``attention_labs.maps``."""

from .maps import *  # noqa: F403
from .maps import __all__  # noqa: F401
