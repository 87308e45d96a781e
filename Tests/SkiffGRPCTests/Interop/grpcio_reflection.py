"""gRPC server reflection from stock clients, with no Skiff protos: what grpcurl and Postman do.

grpc.reflection.v1alpha through the stock `grpcio-reflection` client
(ProtoReflectionDescriptorDatabase feeding a protobuf DescriptorPool): list the services, resolve
services, methods, messages and nested types, build request messages dynamically from the served
descriptors and make real dynamic unary calls (Listings' SearchListings, Health's Check). Then
grpc.reflection.v1 explicitly, with stubs that grpcio-tools generates from the upstream definition
(written out here, not taken from Skiff's Protos/): several requests on one stream, errors on the
open stream, valid_host and original_request echoed.

Usage: grpcio_reflection.py --port PORT
"""

import argparse
import os
import sys
import tempfile

import grpc
import grpc_tools
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase
from grpc_tools import protoc

# grpc-proto's grpc/reflection/v1/reflection.proto, field for field (comments left out).
UPSTREAM_V1 = """
syntax = "proto3";
package grpc.reflection.v1;
service ServerReflection {
  rpc ServerReflectionInfo(stream ServerReflectionRequest) returns (stream ServerReflectionResponse);
}
message ServerReflectionRequest {
  string host = 1;
  oneof message_request {
    string file_by_filename = 3;
    string file_containing_symbol = 4;
    ExtensionRequest file_containing_extension = 5;
    string all_extension_numbers_of_type = 6;
    string list_services = 7;
  }
}
message ExtensionRequest {
  string containing_type = 1;
  int32 extension_number = 2;
}
message ServerReflectionResponse {
  string valid_host = 1;
  ServerReflectionRequest original_request = 2;
  oneof message_response {
    FileDescriptorResponse file_descriptor_response = 4;
    ExtensionNumberResponse all_extension_numbers_response = 5;
    ListServiceResponse list_services_response = 6;
    ErrorResponse error_response = 7;
  }
}
message FileDescriptorResponse { repeated bytes file_descriptor_proto = 1; }
message ExtensionNumberResponse {
  string base_type_name = 1;
  repeated int32 extension_number = 2;
}
message ListServiceResponse { repeated ServiceResponse service = 1; }
message ServiceResponse { string name = 1; }
message ErrorResponse {
  int32 error_code = 1;
  string error_message = 2;
}
"""

EXPECTED_SERVICES = {
    "grpc.health.v1.Health",
    "grpc.reflection.v1.ServerReflection",
    "grpc.reflection.v1alpha.ServerReflection",
    "skiff.health.v1.Health",
    "skiff.listings.v1.Listings",
    "skiff.reflection.v1.Reflection",
}


def dynamic_unary(channel, pool, method_name, fields):
    """Calls a unary method known only from reflection, as grpcurl does: request and response
    classes built from the served descriptors, the request filled in by field name."""
    method = pool.FindMethodByName(method_name)
    request_class = message_factory.GetMessageClass(method.input_type)
    response_class = message_factory.GetMessageClass(method.output_type)
    call = channel.unary_unary(
        f"/{method.containing_service.full_name}/{method.name}",
        request_serializer=lambda message: message.SerializeToString(),
        response_deserializer=response_class.FromString,
    )
    return call(request_class(**fields), timeout=10)


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
        # --- v1alpha, the stock grpcio-reflection client -------------------------------------
        database = ProtoReflectionDescriptorDatabase(channel)
        services = set(database.get_services())
        check("v1alpha list_services lists Skiff's services and both reflection services",
              EXPECTED_SERVICES <= services, sorted(services))
        pool = descriptor_pool.DescriptorPool(database)

        listings = pool.FindServiceByName("skiff.listings.v1.Listings")
        check("a service resolves, with its methods",
              "SearchListings" in [method.name for method in listings.methods], listings.full_name)
        method = pool.FindMethodByName("skiff.listings.v1.Listings.SearchListings")
        check("a method resolves, with its input type",
              method.input_type.full_name == "skiff.listings.v1.SearchListingsRequest", method.input_type.full_name)
        listing = pool.FindMessageTypeByName("skiff.listings.v1.Listing")
        check("a message resolves, with a dependency's type (google.protobuf.Timestamp)",
              any(field.message_type is not None and field.message_type.full_name == "google.protobuf.Timestamp"
                  for field in listing.fields), [field.name for field in listing.fields])
        status_enum = pool.FindEnumTypeByName("grpc.health.v1.HealthCheckResponse.ServingStatus")
        check("a nested enum resolves", "SERVING" in status_enum.values_by_name, status_enum.full_name)
        reflection_request = pool.FindMessageTypeByName("grpc.reflection.v1.ServerReflectionRequest")
        check("the reflection service describes itself",
              reflection_request.fields_by_name["list_services"].number == 7, reflection_request.full_name)
        try:
            pool.FindMessageTypeByName("no.such.Message")
            check("an unknown symbol is not found", False, "found")
        except KeyError:
            check("an unknown symbol is not found", True)
        check("all_extension_numbers_of_type of a known message is an empty list",
              list(database.FindAllExtensionNumbers("skiff.listings.v1.Listing")) == [])

        page = dynamic_unary(channel, pool, "skiff.listings.v1.Listings.SearchListings", {"query": "bike"})
        titles = [result.listing.title for result in page.results]
        check("a dynamic SearchListings call built from reflection finds the listing", titles == ["Red bike"], titles)
        health = dynamic_unary(channel, pool, "grpc.health.v1.Health.Check", {"service": ""})
        check("a dynamic grpc.health.v1 Check built from reflection says SERVING",
              health.status == status_enum.values_by_name["SERVING"].number, str(health))

        # --- v1, explicitly ------------------------------------------------------------------
        well_known = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
        with tempfile.TemporaryDirectory() as out:
            # Its own file name, so that its module does not land inside grpcio's `grpc` package.
            with open(os.path.join(out, "upstream_reflection_v1.proto"), "w") as file:
                file.write(UPSTREAM_V1)
            status = protoc.main(["grpc_tools.protoc", f"-I{out}", f"-I{well_known}", f"--python_out={out}",
                                  f"--grpc_python_out={out}", os.path.join(out, "upstream_reflection_v1.proto")])
            if status != 0:
                raise SystemExit(f"protoc failed with {status}")
            sys.path.insert(0, out)
            import upstream_reflection_v1_pb2 as v1
            import upstream_reflection_v1_pb2_grpc as v1_rpc

        requests = [
            v1.ServerReflectionRequest(host="skiff.example", list_services=""),
            v1.ServerReflectionRequest(file_containing_symbol="skiff.listings.v1.Listings.SearchListings"),
            v1.ServerReflectionRequest(file_containing_symbol="no.such.Symbol"),
            v1.ServerReflectionRequest(file_by_filename="google/protobuf/timestamp.proto"),
            v1.ServerReflectionRequest(file_containing_symbol="x" * 2000),
        ]
        responses = list(v1_rpc.ServerReflectionStub(channel).ServerReflectionInfo(iter(requests), timeout=10))
        check("v1 answers every request of one stream, in order", len(responses) == len(requests), len(responses))
        if len(responses) == len(requests):
            listed, by_symbol, unknown, by_name, oversize = responses
            names = {service.name for service in listed.list_services_response.service}
            check("v1 list_services", EXPECTED_SERVICES <= names, sorted(names))
            check("v1 echoes valid_host and original_request",
                  listed.valid_host == "skiff.example" and listed.original_request == requests[0], str(listed))
            files = [descriptor_pb2.FileDescriptorProto.FromString(blob)
                     for blob in by_symbol.file_descriptor_response.file_descriptor_proto]
            check("v1 file_containing_symbol of a method: its file first, then its dependencies",
                  [file.name for file in files][:1] == ["skiff/listings/v1/listings.proto"]
                  and "google/protobuf/timestamp.proto" in [file.name for file in files],
                  [file.name for file in files])
            check("v1 an unknown symbol is a NOT_FOUND error_response, and the stream goes on",
                  unknown.WhichOneof("message_response") == "error_response"
                  and unknown.error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]
                  and unknown.error_response.error_message != "", str(unknown))
            timestamp = [descriptor_pb2.FileDescriptorProto.FromString(blob).name
                         for blob in by_name.file_descriptor_response.file_descriptor_proto]
            check("v1 file_by_filename", timestamp == ["google/protobuf/timestamp.proto"], timestamp)
            check("v1 an over-long symbol is an INVALID_ARGUMENT error_response",
                  oversize.error_response.error_code == grpc.StatusCode.INVALID_ARGUMENT.value[0], str(oversize.error_response))
    print(f"{failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
