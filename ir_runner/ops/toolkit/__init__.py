"""The op-author toolkit: helpers every operation module may import (partial values and dims, windows, axes and
indices, numeric policy, broadcasting, conversion rounding, special functions, C++ ordering). No operation lives
here."""
