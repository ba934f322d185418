"""The SPDY/3.1 framer kubectl's port-forward tunnel needs: frames split anywhere across messages,
header blocks in one zlib stream per direction primed with the SPDY/3 dictionary, and the frames
the server writes read back as a client would. (kubectl itself is in the API server's tests.)
"""

from __future__ import annotations

import struct
import zlib

from nodes.streaming import spdy


class Client:
    """The client half, as spdystream writes it: its own compressor, its own decompressor."""

    def __init__(self) -> None:
        self.deflate = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS, 9, zlib.Z_DEFAULT_STRATEGY, spdy.DICTIONARY)
        self.inflate = zlib.decompressobj(zdict=spdy.DICTIONARY)

    def syn_stream(self, stream_id: int, headers: dict[str, str]) -> bytes:
        raw = struct.pack("!I", len(headers))
        for name, value in headers.items():
            raw += struct.pack("!I", len(name)) + name.encode() + struct.pack("!I", len(value)) + value.encode()
        block = self.deflate.compress(raw) + self.deflate.flush(zlib.Z_SYNC_FLUSH)
        body = struct.pack("!IIBB", stream_id, 0, 0, 0) + block
        return struct.pack("!HHB", 0x8003, spdy.SYN_STREAM, 0) + len(body).to_bytes(3, "big") + body


def test_the_dictionary_is_spdy3s() -> None:
    assert len(spdy.DICTIONARY) == 1423
    assert spdy.DICTIONARY.startswith(b"\x00\x00\x00\x07options\x00\x00\x00\x04head")
    assert spdy.DICTIONARY.endswith(b"charset=iso-8859-1,utf-,*,enq=0.")


def test_frames_split_across_messages_are_parsed_once_whole() -> None:
    client, server = Client(), spdy.Framer()
    wire = (client.syn_stream(1, {"streamtype": "error", "port": "8080", "requestid": "0"})
            + client.syn_stream(3, {"streamtype": "data", "port": "8080", "requestid": "0"})
            + spdy.data(3, b"hello", fin=True) + spdy.ping(7))

    frames = [f for i in range(0, len(wire), 5) for f in server.feed(wire[i:i + 5])]

    assert [(f.kind, f.stream_id) for f in frames] == [(spdy.SYN_STREAM, 1), (spdy.SYN_STREAM, 3),
                                                       (spdy.DATA, 3), (spdy.PING, 0)]
    assert frames[1].headers == {"streamtype": ["data"], "port": ["8080"], "requestid": ["0"]}
    assert (frames[2].data, frames[2].fin, frames[3].ping_id) == (b"hello", True, 7)


def test_a_syn_reply_reads_back_with_the_clients_decompressor() -> None:
    client, server = Client(), spdy.Framer()

    for stream_id in (1, 3):  # the second block depends on the first: one zlib stream per direction
        frame = server.syn_reply(stream_id)
        assert frame[:4] == b"\x80\x03\x00\x02"
        body = frame[8:]
        assert int.from_bytes(body[:4], "big") == stream_id
        assert client.inflate.decompress(body[4:]) == b"\x00\x00\x00\x00"  # no headers


def test_data_frames_carry_the_fin_flag_and_length() -> None:
    assert spdy.data(5, b"abc", fin=True) == b"\x00\x00\x00\x05\x01\x00\x00\x03abc"
    assert spdy.rst_stream(5, spdy.CANCEL) == b"\x80\x03\x00\x03\x00\x00\x00\x08\x00\x00\x00\x05\x00\x00\x00\x05"
