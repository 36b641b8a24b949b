"""Whose input shaped a run: what a memory entry's stamp and a proposal's items record.

The run's context decides it (``context.decide_trust``); memory only keeps it, so the enum lives
here, where both can import it.
"""

from __future__ import annotations

import enum


class Trust(enum.StrEnum):
    TRUSTED = "trusted"  # the run's input comes from people with write access
    UNTRUSTED = "untrusted"  # a fork, or a person without write access, shaped the input
