"""kdump's StringDecoder (the pure Python reference, its C twin ``_v2lines.java_utf8`` and the C line
formatter) against the JDK's own ``new String(bytes, UTF_8)``: zero differences on random and adversarial
bytes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import real_kafka
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kdump.render.decoders import decode_pieces, java_utf8_replace, string_decoder

# Bytes around every boundary of the decoder: ASCII, continuation ranges, C0/C1, the E0/ED/F0/F4
# special cases, out-of-range leads F5-FF.
_EDGE = st.sampled_from([0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0,
                         0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xF7, 0xF8, 0xFE, 0xFF])
ADVERSARIAL = st.lists(_EDGE, max_size=12).map(bytes)
RANDOM = st.binary(max_size=40)
TEXT = st.text(max_size=12).map(lambda t: t.encode("utf-8", "surrogatepass"))  # surrogates included
MIXED = st.lists(st.one_of(ADVERSARIAL, RANDOM, TEXT), max_size=4).map(b"".join)

SETTINGS = settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def java() -> Iterator[real_kafka.JavaUtf8]:
    server = real_kafka.JavaUtf8()
    yield server
    server.close()


def c_string_decoder(data: bytes) -> str:
    """The C formatter's decoding of ``data``, as a key and as a header key (both must agree)."""
    from kdump.render import log_text

    if log_text._c_string_lines is None:
        pytest.skip("the C line formatter is not built")

    def line(key: bytes | None, headers: tuple[tuple[bytes, None], ...]) -> str:
        text = log_text._c_string_lines([(0, 0, key, None, headers, 0, 0, 0)], " CreateTime: ", " keySize: ",
                                        " valueSize: ", True)
        assert text is not None
        return text

    as_key = line(data, ()).split(" headerKeys: [] key: ", 1)[1]
    prefix = "| offset: 0 CreateTime: 0 keySize: -1 valueSize: -1 sequence: 0 headerKeys: ["
    as_header = line(None, ((data, None),))
    assert as_header.startswith(prefix) and as_header.endswith("]")
    assert as_header[len(prefix):-1] == as_key
    return as_key


@SETTINGS
@given(data=st.one_of(ADVERSARIAL, RANDOM, TEXT, MIXED))
def test_python_decoder_matches_java(java: real_kafka.JavaUtf8, data: bytes) -> None:
    expected = java.decode(data)
    assert java_utf8_replace(data) == expected
    assert string_decoder(data) == expected     # C (_v2lines.java_utf8) when built


@SETTINGS
@given(data=st.one_of(ADVERSARIAL, RANDOM, TEXT, MIXED))
def test_c_formatter_matches_java(java: real_kafka.JavaUtf8, data: bytes) -> None:
    assert c_string_decoder(data) == java.decode(data)


@SETTINGS
@given(pieces=st.lists(st.one_of(ADVERSARIAL, RANDOM, TEXT, MIXED), max_size=8))
def test_a_value_decoded_piece_by_piece_matches_java_on_the_whole(java: real_kafka.JavaUtf8,
                                                                   pieces: list[bytes]) -> None:
    # A large value is printed as it is read again, in pieces that end anywhere (inside a character
    # or a malformed sequence); the text must be Java's for the whole value.
    assert "".join(decode_pieces(string_decoder, pieces)) == java.decode(b"".join(pieces))


@pytest.mark.parametrize(("data", "expected"), [
    (b"\xed\xa0\x80", "\ufffd"),             # an encoded surrogate: one U+FFFD (Python's "replace": three)
    (b"a\xe2\x82", "a\ufffd"),               # truncated at the end: one U+FFFD
    (b"\xf0\x9f\x98x", "\ufffdx"),
    (b"\xc0\xaf", "\ufffd\ufffd"),           # overlong: one per byte
])
def test_known_cases(java: real_kafka.JavaUtf8, data: bytes, expected: str) -> None:
    assert java.decode(data) == expected
    assert string_decoder(data) == expected
    assert java_utf8_replace(data) == expected
    assert c_string_decoder(data) == expected
