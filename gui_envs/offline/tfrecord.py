"""TFRecord files of ``tf.train.Example`` records, read and written without TensorFlow.

AndroidControl is published as GZIP-compressed TFRecord files (``android_control-?????-of-00020``; see
google-research/android_control/README.md). A TFRecord file is a sequence of records, each framed as::

    uint64 length (little endian) | uint32 masked CRC-32C of length | data | uint32 masked CRC-32C of data

and each ``data`` is a serialised ``tf.train.Example``: ``features`` (field 1) holds a map from feature name to
``Feature``, which is one of ``bytes_list`` (1), ``float_list`` (2) or ``int64_list`` (3), each a repeated
field 1. Only this much of the protobuf wire format is decoded here.

Reading checks the CRC of each length (8 bytes), which catches a truncated or misframed file; the CRC of the
data is checked only with ``verify_data=True``, since a pure-Python CRC over megabytes of screenshots is slow.
"""

from __future__ import annotations

import gzip
import struct
from collections.abc import Iterator
from pathlib import Path

Feature = list[bytes] | list[float] | list[int]

_CRC_TABLE: list[int] = []
for _n in range(256):
    _c = _n
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1  # Castagnoli polynomial, reflected
    _CRC_TABLE.append(_c)


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli) of ``data``.

    >>> hex(crc32c(b"123456789"))
    '0xe3069283'
    """
    crc = 0xFFFFFFFF
    for b in data:
        crc = _CRC_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc(data: bytes) -> int:
    """TFRecord's masked CRC: rotate right by 15 bits and add a constant (mod 2**32)."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


class TFRecordError(ValueError):
    """The file is not a well-framed TFRecord file, or a record is not a ``tf.train.Example``."""


def _open(path: Path) -> bytes:
    raw = path.read_bytes()
    return gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw


def read_records(path: Path, verify_data: bool = False) -> Iterator[bytes]:
    """Each record's data in ``path`` (GZIP-compressed or not)."""
    buf, i, n = _open(path), 0, 0
    while i < len(buf):
        if i + 12 > len(buf):
            raise TFRecordError(f"record {n}: truncated header at byte {i}")
        header = buf[i : i + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", buf[i + 8 : i + 12])
        if masked_crc(header) != length_crc:
            raise TFRecordError(f"record {n}: length CRC mismatch at byte {i}")
        start, end = i + 12, i + 12 + length
        if end + 4 > len(buf):
            raise TFRecordError(f"record {n}: truncated data ({length} bytes announced)")
        data = buf[start:end]
        if verify_data and masked_crc(data) != struct.unpack("<I", buf[end : end + 4])[0]:
            raise TFRecordError(f"record {n}: data CRC mismatch")
        yield data
        i, n = end + 4, n + 1


def write_records(path: Path, records: list[bytes], compress: bool = True) -> None:
    """Write ``records`` as a TFRecord file (GZIP-compressed, as AndroidControl ships, unless told not)."""
    out = bytearray()
    for data in records:
        header = struct.pack("<Q", len(data))
        out += header + struct.pack("<I", masked_crc(header)) + data + struct.pack("<I", masked_crc(data))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(bytes(out)) if compress else bytes(out))


# ----- protobuf wire format (only what tf.train.Example needs) -----------------------------------------------


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        if i >= len(buf):
            raise TFRecordError("truncated varint")
        b = buf[i]
        value |= (b & 0x7F) << shift
        i += 1
        if not b & 0x80:
            return value, i
        shift += 7
        if shift > 63:
            raise TFRecordError("varint too long")


def _fields(buf: bytes) -> Iterator[tuple[int, int, bytes | int]]:
    """(field number, wire type, value) of each field: LEN values as bytes, VARINT and I32 as ints."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(buf, i)
            yield number, wire, value
        elif wire == 2:
            size, i = _varint(buf, i)
            if i + size > len(buf):
                raise TFRecordError("truncated length-delimited field")
            yield number, wire, buf[i : i + size]
            i += size
        elif wire == 5:
            yield number, wire, struct.unpack("<I", buf[i : i + 4])[0]
            i += 4
        elif wire == 1:
            yield number, wire, struct.unpack("<Q", buf[i : i + 8])[0]
            i += 8
        else:
            raise TFRecordError(f"unsupported wire type {wire}")


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _feature(buf: bytes) -> Feature:
    for kind, _, body in _fields(buf):
        assert isinstance(body, bytes)
        if kind == 1:
            return [v for n, w, v in _fields(body) if n == 1 and w == 2]  # type: ignore[misc]
        if kind == 2:
            floats: list[float] = []
            for n, w, v in _fields(body):
                if n == 1 and w == 2:  # packed
                    floats += struct.unpack(f"<{len(v) // 4}f", v)  # type: ignore[arg-type]
                elif n == 1 and w == 5:
                    floats.append(struct.unpack("<f", struct.pack("<I", v))[0])  # type: ignore[arg-type]
            return floats
        if kind == 3:
            ints: list[int] = []
            for n, w, v in _fields(body):
                if n == 1 and w == 2:  # packed
                    j = 0
                    while j < len(v):  # type: ignore[arg-type]
                        x, j = _varint(v, j)  # type: ignore[arg-type]
                        ints.append(_signed(x))
                elif n == 1 and w == 0:
                    ints.append(_signed(v))  # type: ignore[arg-type]
            return ints
    return []


def parse_example(data: bytes) -> dict[str, Feature]:
    """A serialised ``tf.train.Example`` as ``{name: values}``."""
    out: dict[str, Feature] = {}
    for n, w, features in _fields(data):
        if n != 1 or w != 2:
            continue
        for m, v, entry in _fields(features):  # type: ignore[arg-type]
            if m != 1 or v != 2:
                continue
            name, value = "", b""
            for k, _, part in _fields(entry):  # type: ignore[arg-type]
                if k == 1:
                    name = part.decode("utf-8")  # type: ignore[union-attr]
                elif k == 2:
                    value = part  # type: ignore[assignment]
            out[name] = _feature(value)
    return out


def _key(number: int, wire: int) -> bytes:
    return _encode_varint(number << 3 | wire)


def _encode_varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        out.append(b | 0x80 if value else b)
        if not value:
            return bytes(out)


def _len_field(number: int, body: bytes) -> bytes:
    return _key(number, 2) + _encode_varint(len(body)) + body


def encode_example(features: dict[str, Feature]) -> bytes:
    """Serialise ``{name: values}`` as a ``tf.train.Example`` (bytes, float or int64 lists by value type)."""
    entries = b""
    for name, values in features.items():
        if all(isinstance(v, bytes) for v in values):
            feature = _len_field(1, b"".join(_len_field(1, v) for v in values))  # type: ignore[arg-type]
        elif all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            feature = _len_field(3, _len_field(1, b"".join(_encode_varint(v) for v in values)))  # type: ignore[arg-type]
        else:
            feature = _len_field(2, _len_field(1, struct.pack(f"<{len(values)}f", *values)))
        entries += _len_field(1, _len_field(1, name.encode("utf-8")) + _len_field(2, feature))
    return _len_field(1, entries)
