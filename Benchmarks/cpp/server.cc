// The C++ gRPC anchor's server: TestService.UnaryCall and StreamingOutputCall on grpc++'s async API, one
// completion queue polled by one thread (the reference implementation's cheapest shape). Prints the line
// run.sh waits for: "listening target=grpc-cpp port=N pid=P".
//
//   bench-cpp-server [--port N]   (0, the default: any free port on 127.0.0.1)
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "skiff/testing/v1/test.grpc.pb.h"

using skiff::testing::v1::SimpleRequest;
using skiff::testing::v1::SimpleResponse;
using skiff::testing::v1::StreamingOutputCallRequest;
using skiff::testing::v1::StreamingOutputCallResponse;
using skiff::testing::v1::TestService;

namespace {

class Handler {
 public:
  virtual ~Handler() = default;
  // Called with the result of the operation this handler's tag was last given to.
  virtual void Proceed(bool ok) = 0;
};

// One UnaryCall: wait for a request, answer with response_size zero bytes (and the peer, as the Swift servers do).
class UnaryCall final : public Handler {
 public:
  UnaryCall(TestService::AsyncService* service, grpc::ServerCompletionQueue* cq)
      : service_(service), cq_(cq), responder_(&ctx_) {
    service_->RequestUnaryCall(&ctx_, &request_, &responder_, cq_, cq_, this);
  }

  void Proceed(bool ok) override {
    if (finishing_ || !ok) {  // answered, or the server is shutting down
      delete this;
      return;
    }
    new UnaryCall(service_, cq_);
    finishing_ = true;
    if (request_.response_size() < 0) {
      responder_.FinishWithError(
          grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "response size must not be negative"), this);
      return;
    }
    SimpleResponse response;
    response.mutable_payload()->mutable_body()->assign(static_cast<size_t>(request_.response_size()), '\0');
    response.set_peer_metadata(ctx_.peer());
    responder_.Finish(response, grpc::Status::OK, this);
  }

 private:
  TestService::AsyncService* service_;
  grpc::ServerCompletionQueue* cq_;
  grpc::ServerContext ctx_;
  SimpleRequest request_;
  grpc::ServerAsyncResponseWriter<SimpleResponse> responder_;
  bool finishing_ = false;
};

// One StreamingOutputCall: one response per ResponseParameters, each written after the previous write completed
// (the async API allows one outstanding write per stream), then the status.
class StreamingOutputCall final : public Handler {
 public:
  StreamingOutputCall(TestService::AsyncService* service, grpc::ServerCompletionQueue* cq)
      : service_(service), cq_(cq), writer_(&ctx_) {
    service_->RequestStreamingOutputCall(&ctx_, &request_, &writer_, cq_, cq_, this);
  }

  void Proceed(bool ok) override {
    switch (state_) {
      case State::kRequested:
        if (!ok) {
          delete this;
          return;
        }
        new StreamingOutputCall(service_, cq_);
        state_ = State::kWriting;
        WriteNext();
        return;
      case State::kWriting:
        if (!ok) {  // the client went away
          delete this;
          return;
        }
        WriteNext();
        return;
      case State::kFinishing:
        delete this;
        return;
    }
  }

 private:
  enum class State { kRequested, kWriting, kFinishing };

  void WriteNext() {
    if (next_ >= request_.response_parameters_size()) {
      state_ = State::kFinishing;
      writer_.Finish(grpc::Status::OK, this);
      return;
    }
    int32_t size = request_.response_parameters(next_++).size();
    if (size < 0) {
      state_ = State::kFinishing;
      writer_.Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "response size must not be negative"), this);
      return;
    }
    response_.mutable_payload()->mutable_body()->assign(static_cast<size_t>(size), '\0');
    writer_.Write(response_, this);
  }

  TestService::AsyncService* service_;
  grpc::ServerCompletionQueue* cq_;
  grpc::ServerContext ctx_;
  StreamingOutputCallRequest request_;
  StreamingOutputCallResponse response_;
  grpc::ServerAsyncWriter<StreamingOutputCallResponse> writer_;
  State state_ = State::kRequested;
  int next_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  int port = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--port") == 0 && i + 1 < argc) {
      port = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--port N]\n", argv[0]);
      return 2;
    }
  }
  TestService::AsyncService service;
  grpc::ServerBuilder builder;
  int selected = 0;
  builder.AddListeningPort("127.0.0.1:" + std::to_string(port), grpc::InsecureServerCredentials(), &selected);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::ServerCompletionQueue> cq = builder.AddCompletionQueue();
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || selected == 0) {
    std::fprintf(stderr, "could not listen on 127.0.0.1:%d\n", port);
    return 1;
  }
  new UnaryCall(&service, cq.get());
  new StreamingOutputCall(&service, cq.get());
  std::printf("listening target=grpc-cpp port=%d pid=%d\n", selected, static_cast<int>(getpid()));
  std::fflush(stdout);
  // The one completion-queue thread; the process ends on SIGTERM (run.sh's stop).
  void* tag;
  bool ok;
  while (cq->Next(&tag, &ok)) {
    static_cast<Handler*>(tag)->Proceed(ok);
  }
  return 0;
}
