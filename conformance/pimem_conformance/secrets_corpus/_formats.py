"""Random values from format templates: `ghp_{n:36}` is `ghp_` and 36 letters or digits.

A template is literal text with fields `{alphabet:length}` or `{alphabet:low,high}` (a length drawn
between them). Alphabets are named by one letter (see ALPHABETS); `{u}` is a UUID.
"""

from __future__ import annotations

import random
import re
import string

__all__ = ["ALPHABETS", "fill", "pick"]

ALPHABETS = {
    "a": string.ascii_lowercase + string.digits,
    "A": string.ascii_uppercase + string.digits,
    "h": "0123456789abcdef",
    "H": "0123456789ABCDEF",
    "n": string.ascii_letters + string.digits,
    "d": string.digits,
    "l": string.ascii_lowercase,
    "L": string.ascii_letters,
    "U": string.ascii_uppercase,
    "w": string.ascii_letters + string.digits + "_-",
    "b": string.ascii_letters + string.digits + "+/",
    "B": string.ascii_uppercase + "234567",
    "g": "abcdefgh0123456789",
    "p": string.ascii_letters + string.digits + "!#%^*-_.~",
    "8": "qpzry9x8gf2tvdw0s3jn54khce6mua7l".upper(),  # bech32, as age keys use it
}
_FIELD = re.compile(r"\{(?:([A-Za-z0-9]):(\d+)(?:,(\d+))?|(u))\}")


def pick(rng: random.Random, alphabet: str, length: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(length))


def _uuid(rng: random.Random) -> str:
    digits = pick(rng, ALPHABETS["h"], 32)
    return f"{digits[:8]}-{digits[8:12]}-4{digits[13:16]}-a{digits[17:20]}-{digits[20:]}"


def fill(rng: random.Random, template: str) -> str:
    """A random value of the template's format."""

    def field(match: re.Match[str]) -> str:
        if match.group(4):
            return _uuid(rng)
        low = int(match.group(2))
        high = int(match.group(3) or low)
        return pick(rng, ALPHABETS[match.group(1)], rng.randint(low, high))

    return _FIELD.sub(field, template)
