"""One UnaryCall over every HTTP protocol the port serves, for the Swift test to compare with
skiff/1: gRPC (stock grpcio), gRPC-Web and Connect (raw requests, so that the response message's
bytes are the server's own: http.client over HTTP/1.1, pyqwest over HTTP/2 prior knowledge).

Usage: cross_protocol.py --port PORT --protos DIR --size N --code C --message TEXT
Prints, per protocol,
  bytes <protocol> <hex of the response message with its peer_metadata field removed>
  peer <protocol> <peer_metadata>
  status <protocol> <numeric code> <message>
(the last for a call that forces status C with TEXT), one line per check of a protocol's own
framing, and exits 0 only when every check passed.
"""

import argparse
import http.client
import json
import os
import struct
import sys
import tempfile
import urllib.parse

import grpc
from grpc_tools import protoc

# Connect's error codes, by the gRPC number they stand for.
CONNECT_CODES = {
    "canceled": 1, "unknown": 2, "invalid_argument": 3, "deadline_exceeded": 4, "not_found": 5,
    "already_exists": 6, "permission_denied": 7, "resource_exhausted": 8, "failed_precondition": 9,
    "aborted": 10, "out_of_range": 11, "unimplemented": 12, "internal": 13, "unavailable": 14,
    "data_loss": 15, "unauthenticated": 16,
}
# The HTTP status of each Connect code (the protocol's table).
CONNECT_HTTP = {1: 499, 2: 500, 3: 400, 4: 504, 5: 404, 6: 409, 7: 403, 8: 429, 9: 400, 10: 409, 11: 400,
                12: 501, 13: 500, 14: 503, 15: 500, 16: 401}
PATH = "/skiff.testing.v1.TestService/UnaryCall"

failures = []


def check(name, condition, detail=""):
    print(("ok   " if condition else "FAIL ") + name + (f": {detail}" if detail and not condition else ""))
    if not condition:
        failures.append(name)


def generate(protos: str, out: str) -> None:
    status = protoc.main([
        "grpc_tools.protoc", f"-I{protos}", f"--python_out={out}",
        os.path.join(protos, "skiff/testing/v1/test.proto"),
    ])
    if status != 0:
        raise SystemExit(f"protoc failed with {status}")
    sys.path.insert(0, out)


def varint(data: bytes, index: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        byte = data[index]
        index += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, index


def without_field(data: bytes, number: int) -> tuple[bytes, list[bytes]]:
    """The message's bytes with every record of field `number` cut out (the others untouched, in
    their order), and the values of the records cut (length-delimited fields only)."""
    kept, cut, index = bytearray(), [], 0
    while index < len(data):
        start = index
        key, index = varint(data, index)
        wire_type = key & 7
        if wire_type == 0:
            _, index = varint(data, index)
        elif wire_type == 1:
            index += 8
        elif wire_type == 2:
            length, index = varint(data, index)
            index += length
        elif wire_type == 5:
            index += 4
        else:
            raise ValueError(f"wire type {wire_type}")
        if key >> 3 == number:
            _, value_start = varint(data, start)
            _, value_start = varint(data, value_start)
            cut.append(data[value_start:index])
        else:
            kept += data[start:index]
    return bytes(kept), cut


def report(protocol: str, message: bytes) -> None:
    body, peers = without_field(message, 2)
    print(f"bytes {protocol} {body.hex()}")
    print(f"peer {protocol} {b''.join(peers).decode()}")


def frames(body: bytes) -> list[tuple[int, bytes]]:
    """gRPC-Web (and Connect streaming) envelopes: a flag byte, a 4-byte big-endian length."""
    out, index = [], 0
    while index < len(body):
        if len(body) - index < 5:
            raise ValueError(f"{len(body) - index} bytes after the last frame")
        flag, length = struct.unpack(">BI", body[index:index + 5])
        out.append((flag, body[index + 5:index + 5 + length]))
        index += 5 + length
    if index != len(body):
        raise ValueError("a frame runs past the body")
    return out


def grpc_web(protocol: str, status: int, headers: dict, body: bytes, expect_message: bool):
    """Checks a gRPC-Web response; returns (message or None, grpc-status, grpc-message)."""
    check(f"{protocol} HTTP 200", status == 200, str(status))
    check(f"{protocol} content-type", headers.get("content-type", "").startswith("application/grpc-web"),
          str(headers))
    parsed = frames(body)
    messages = [data for flag, data in parsed if flag == 0]
    trailers = [data for flag, data in parsed if flag == 0x80]
    check(f"{protocol} frames", len(messages) == (1 if expect_message else 0) and len(trailers) == 1
          and parsed[-1][0] == 0x80, str([(flag, len(data)) for flag, data in parsed]))
    fields = {}
    for line in trailers[-1].decode("ascii").split("\r\n"):
        if line:
            name, _, value = line.partition(":")
            fields[name.strip()] = value.strip()
    return (messages[0] if messages else None), int(fields.get("grpc-status", "-1")), fields.get("grpc-message", "")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--protos", required=True)
    parser.add_argument("--size", type=int, required=True)
    parser.add_argument("--code", type=int, required=True)
    parser.add_argument("--message", required=True)
    args = parser.parse_args()
    sys.stdout.reconfigure(encoding="utf-8")
    with tempfile.TemporaryDirectory() as out:
        generate(args.protos, out)
        from skiff.testing.v1 import test_pb2 as pb

        request = pb.SimpleRequest(response_size=args.size, payload=pb.Payload(body=b"\x07" * 33)).SerializeToString()
        forced = pb.SimpleRequest(response_size=args.size,
                                  response_status=pb.EchoStatus(code=args.code, message=args.message)
                                  ).SerializeToString()

        # gRPC, with grpcio's own stub (serializers are identity: the bytes are the server's).
        with grpc.insecure_channel(f"127.0.0.1:{args.port}") as channel:
            call = channel.unary_unary(PATH, request_serializer=lambda b: b, response_deserializer=lambda b: b)
            report("grpc", call(request, timeout=10))
            try:
                call(forced, timeout=10)
                print("status grpc 0 ")
            except grpc.RpcError as error:
                print(f"status grpc {error.code().value[0]} {error.details()}")

        def envelope(message: bytes) -> bytes:
            return struct.pack(">BI", 0, len(message)) + message

        # gRPC-Web and Connect over HTTP/1.1 (http.client: nothing between us and the bytes).
        def post(content_type: str, body: bytes):
            connection = http.client.HTTPConnection("127.0.0.1", args.port, timeout=10)
            try:
                connection.request("POST", PATH, body=body,
                                   headers={"content-type": content_type, "x-grpc-web": "1"}
                                   if "grpc-web" in content_type else {"content-type": content_type})
                response = connection.getresponse()
                return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
            finally:
                connection.close()

        # …and over HTTP/2 with prior knowledge (pyqwest, the HTTP client connectrpc uses).
        from pyqwest import HTTPVersion, SyncClient, SyncHTTPTransport
        h2 = SyncClient(SyncHTTPTransport(http_version=HTTPVersion.HTTP2))

        def post_h2(content_type: str, body: bytes):
            response = h2.post(f"http://127.0.0.1:{args.port}{PATH}", headers={"content-type": content_type},
                               content=body)
            return response.status, {k.lower(): v for k, v in response.headers.items()}, bytes(response.content)

        for protocol, send in (("grpc-web-h1", post), ("grpc-web-h2", post_h2)):
            message, status, text = grpc_web(protocol, *send("application/grpc-web+proto", envelope(request)), True)
            check(f"{protocol} OK", status == 0, str(status))
            report(protocol, message or b"")
            _, status, text = grpc_web(protocol + " forced", *send("application/grpc-web+proto", envelope(forced)),
                                       False)
            check(f"{protocol} grpc-message is percent-encoded ASCII", text.isascii() and "%" in text, repr(text))
            print(f"status {protocol} {status} {urllib.parse.unquote(text, encoding='utf-8', errors='strict')}")

        for protocol, send in (("connect-h1", post), ("connect-h2", post_h2)):
            status, headers, body = send("application/proto", request)
            check(f"{protocol} HTTP 200 application/proto",
                  status == 200 and headers.get("content-type") == "application/proto", f"{status} {headers}")
            report(protocol, body)
            status, headers, body = send("application/proto", forced)
            error = json.loads(body)
            code = CONNECT_CODES.get(error.get("code"), -1)
            check(f"{protocol} error is JSON with the code's HTTP status",
                  headers.get("content-type") == "application/json" and status == CONNECT_HTTP.get(code),
                  f"{status} {headers} {body!r}")
            print(f"status {protocol} {code} {error.get('message', '')}")

        print(f"{len(failures)} failures")
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
