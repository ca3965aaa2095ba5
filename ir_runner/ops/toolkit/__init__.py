"""The op-author toolkit: helpers every operation module may import (partial values and dims, windows, axes and
indices, numeric policy, broadcasting, conversion rounding, ``std::round``, special functions, C++ ordering,
outputs inference computed handed to kernels). No operation lives here."""
