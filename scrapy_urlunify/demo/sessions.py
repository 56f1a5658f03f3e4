"""The session ids the demo server hands out to views of session-area pages."""

from __future__ import annotations

import hashlib
from collections import Counter

SESSION_ALPHABETS = {
    "jsessionid": "0123456789ABCDEF",  # Tomcat: 32 upper-case hex
    "PHPSESSID": "0123456789abcdefghijklmnopqrstuv",  # PHP: 32 chars of [0-9a-v]
    "sid": "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
}


class SessionMinter:
    """Fresh session ids for views of session-area pages that arrive without one.

    Every such view gets a new id - until ``cap`` ids per style were handed
    out; after that the ids repeat cyclically.  The cap is what guarantees a
    plain crawler (which sees every new id as a new URL) terminates.
    """

    def __init__(self, seed: int, cap: int = 10) -> None:
        self.seed = seed
        self.cap = cap
        self.minted: Counter[str] = Counter()

    def mint(self, style: str) -> str:
        index = self.minted[style] % self.cap
        self.minted[style] += 1
        digest = hashlib.sha256(f"{self.seed}:{style}:{index}".encode()).digest()
        alphabet = SESSION_ALPHABETS[style]
        return "".join(alphabet[b % len(alphabet)] for b in digest[:32])
