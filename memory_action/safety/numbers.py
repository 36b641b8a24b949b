"""Whole numbers read from text someone else wrote (a comment, a header, a service's JSON).

Only ASCII digits count: ``"²".isdigit()`` is true yet ``int("²")`` raises, ``int("٣")`` is 3,
and past 4,300 digits ``int`` raises as well. A number written otherwise is no number (``None``),
never an exception.
"""

from __future__ import annotations

import re

MAX_DIGITS = 19  # every int64 fits


def ascii_int(text: str, *, signed: bool = False, max_digits: int = MAX_DIGITS) -> int | None:
    """``text`` as a whole number when it is nothing but ASCII digits (after a ``-`` if
    ``signed``), at most ``max_digits`` of them; otherwise ``None``."""
    sign = "-?" if signed else ""
    if re.fullmatch(rf"{sign}[0-9]{{1,{max_digits}}}", text) is None:
        return None
    return int(text)
