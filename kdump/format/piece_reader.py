"""Compressed input handed out in pieces (the file read a window at a time, or one buffer), read by
the codecs a bounded slice at a time: nothing here joins the pieces into one buffer."""

from __future__ import annotations

from collections.abc import Iterable

Buffer = bytes | bytearray | memoryview

_EMPTY = memoryview(b"")


class PieceReader:
    """Read ``size`` bytes that arrive as ``pieces``. ``left`` counts the bytes not read yet."""

    __slots__ = ("_piece", "_pieces", "_pos", "left", "size")

    def __init__(self, pieces: Iterable[Buffer], size: int) -> None:
        self._pieces = iter(pieces)
        self._piece = _EMPTY
        self._next()
        self._pos = 0
        self.left = size
        self.size = size

    @property
    def position(self) -> int:
        """Bytes read so far."""
        return self.size - self.left

    def read(self, n: int) -> memoryview:
        """Up to ``n`` bytes from the current piece, without copying them; empty only at the end."""
        pos = self._pos
        if pos >= len(self._piece):
            if not self._next():
                return _EMPTY
            pos = 0
        piece = self._piece[pos:pos + n]
        self._pos = pos + len(piece)
        self.left -= len(piece)
        return piece

    def exact(self, n: int) -> Buffer:
        """The next ``n`` bytes (fewer only at the end); joined only when they span pieces."""
        pos = self._pos
        end = pos + n
        if end <= len(self._piece):  # the common case, inline: codecs call this per block
            self._pos = end
            self.left -= n
            return self._piece[pos:end]
        first = self.read(n)
        if len(first) == n or not first:
            return first
        parts = [bytes(first)]
        got = len(first)
        while got < n:
            piece = self.read(n - got)
            if not piece:
                break
            parts.append(bytes(piece))
            got += len(piece)
        return b"".join(parts)

    def skip(self, n: int) -> bool:
        """Pass over ``n`` bytes; False if the input ends first."""
        while n > 0:
            piece = self.read(n)
            if not piece:
                return False
            n -= len(piece)
        return True

    def unread(self, n: int) -> None:
        """Give back the last ``n`` bytes of the last ``read`` (they are still in the current piece)."""
        if n > self._pos:
            raise ValueError("unread: more bytes than the last read gave")
        self._pos -= n
        self.left += n

    def at_end(self) -> bool:
        return self._pos >= len(self._piece) and not self._next()

    def rest(self) -> bytes:
        """All that is left, in one buffer (for a format its library decodes only whole)."""
        parts = []
        while piece := self.read(1 << 30):
            parts.append(piece)
        return b"".join(parts)

    def _next(self) -> bool:
        for piece in self._pieces:
            if len(piece):
                self._piece = memoryview(piece).cast("B")
                self._pos = 0
                return True
        self._piece = _EMPTY
        self._pos = 0
        return False
