"""decode_pieces: a value too large to hold, decoded piece by piece, gives the decoder's text of the
whole value. The expected texts come from the standard library on the joined bytes (hex, base64) and
from the decoders themselves on the whole value; Java's UTF-8 is checked in tests/kafka/test_java_utf8.py."""

from __future__ import annotations

import base64

from hypothesis import given
from hypothesis import strategies as st

from kdump.render.decoders import (
    base64_decoder,
    bytes_decoder,
    decode_pieces,
    escaped,
    hex_decoder,
    json_decoder,
    string_decoder,
)

PIECES = st.lists(st.binary(max_size=9), max_size=8)


@given(pieces=PIECES)
def test_hex_and_base64_in_pieces_are_the_whole_values_text(pieces: list[bytes]) -> None:
    whole = b"".join(pieces)
    assert "".join(decode_pieces(hex_decoder, pieces)) == whole.hex()
    assert "".join(decode_pieces(base64_decoder, pieces)) == base64.b64encode(whole).decode("ascii")


@given(pieces=st.lists(st.sampled_from([b"\n", b"\x1b", b"\xc3", b"\xa9", b"\\", b"a", b"\xe2\x80", b"\xa8"]),
                       max_size=12))
def test_escaped_text_in_pieces_is_the_whole_values_escaped_text(pieces: list[bytes]) -> None:
    decoder = escaped(string_decoder)
    assert "".join(decode_pieces(decoder, pieces)) == decoder(b"".join(pieces))


def test_a_decoder_that_needs_the_whole_value_gets_it() -> None:
    pieces = [b'{"a": ', b"[1, 2", b"]}"]
    assert list(decode_pieces(json_decoder, pieces)) == ['{"a":[1,2]}']
    long_decoder = bytes_decoder("LongDecoder")
    assert list(decode_pieces(long_decoder, [b"\x00\x00\x00", b"\x00\x00\x00\x01\x00"])) == ["256"]
