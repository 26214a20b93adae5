"""One module per pair of neighbouring spec versions; each translates only between its two versions.

Released specs are frozen, so a finished step never changes; a new spec adds a new step module.
Each module has `FROM`, `TO`, `up(config, ctx)` (FROM -> TO) and `down(config, ctx)` (TO -> FROM).
`ignition.translate` chains them.
"""

from __future__ import annotations

from types import ModuleType

from ignition.translations import (
    v3_0_to_v3_1,
    v3_1_to_v3_2,
    v3_2_to_v3_3,
    v3_3_to_v3_4,
    v3_4_to_v3_5,
    v3_5_to_v3_6,
    v3_6_to_v3_7_experimental,
)

STEPS: tuple[ModuleType, ...] = (v3_0_to_v3_1, v3_1_to_v3_2, v3_2_to_v3_3, v3_3_to_v3_4, v3_4_to_v3_5, v3_5_to_v3_6,
                                 v3_6_to_v3_7_experimental)
