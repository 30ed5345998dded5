"""Settings for every test under the repository (tests/, libs/, services/).

Hypothesis fails an example that takes over 200 ms by default (its `deadline`). Under CI load a
plain property such as "canonical is a fixed point" crossed it (libs/mcb-common
test_blockstate.py, on a 2-core machine running the services' e2e tests beside it): a test
about correctness failed on time. Speed targets live in bench/, so no property here has one.
"""

from hypothesis import settings

settings.register_profile("mcb", deadline=None)
settings.load_profile("mcb")
