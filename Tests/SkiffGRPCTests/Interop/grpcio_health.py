"""The standard gRPC health protocol from the stock `grpcio-health-checking` package (its own copy of
grpc/health/v1/health.proto, not Skiff's): what grpc_health_probe and Kubernetes probes do.

Usage: grpcio_health.py --port PORT
"""

import argparse
import sys

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    failures = 0

    def check(name, condition, detail=""):
        nonlocal failures
        print(("ok   " if condition else "FAIL ") + name + ("" if condition else f": {detail}"))
        failures += 0 if condition else 1

    with grpc.insecure_channel(f"127.0.0.1:{args.port}") as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        serving = health_pb2.HealthCheckResponse.SERVING
        whole = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=10)
        check("the server as a whole is SERVING", whole.status == serving, str(whole))
        listings = stub.Check(health_pb2.HealthCheckRequest(service="skiff.listings.v1.Listings"), timeout=10)
        check("Listings is SERVING", listings.status == serving, str(listings))
        try:
            stub.Check(health_pb2.HealthCheckRequest(service="no.such.Service"), timeout=10)
            check("an unknown service is NOT_FOUND", False, "no error")
        except grpc.RpcError as error:
            check("an unknown service is NOT_FOUND", error.code() == grpc.StatusCode.NOT_FOUND, str(error.code()))
        watch = stub.Watch(health_pb2.HealthCheckRequest(service=""), timeout=10)
        first = next(watch)
        watch.cancel()
        check("Watch starts with the current status", first.status == serving, str(first))
        unknown = stub.Watch(health_pb2.HealthCheckRequest(service="no.such.Service"), timeout=10)
        first = next(unknown)
        unknown.cancel()
        check("Watch of an unknown service says SERVICE_UNKNOWN",
              first.status == health_pb2.HealthCheckResponse.SERVICE_UNKNOWN, str(first))
    print(f"{failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
