// The C++ gRPC anchor's client: the same closed loop as `bench load` (Bench.swift's runClosedLoop) on grpc++'s
// async API: one channel (one HTTP/2 connection), one completion queue polled by one thread, `--concurrency`
// calls in flight, each slot starting its next call when the previous one completes. Calls that end inside the
// measured window count; the latencies are those of calls that also started in it (every sample, sorted, nearest
// rank). Prints one JSON line with the fields `bench load` prints, the server's peak RSS (VmHWM) included.
//
//   bench-cpp-client --port N [--mode unary|stream] [--concurrency 16] [--duration 5] [--warmup 1]
//                    [--server-pid PID] [--label L] [--target grpc-cpp]
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "skiff/testing/v1/test.grpc.pb.h"

using skiff::testing::v1::SimpleRequest;
using skiff::testing::v1::SimpleResponse;
using skiff::testing::v1::StreamingOutputCallRequest;
using skiff::testing::v1::StreamingOutputCallResponse;
using skiff::testing::v1::TestService;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int32_t kPayloadSize = 250;   // Workload.payloadSize
constexpr int kMessagesPerCall = 100;  // Workload.messagesPerCall

struct Options {
  int port = 0;
  bool stream = false;
  int concurrency = 16;
  double duration = 5;
  double warmup = 1;
  int server_pid = 0;
  std::string label;
  std::string target = "grpc-cpp";
};

struct Result {
  long calls = 0;
  long messages = 0;
  long errors = 0;
  std::vector<int64_t> latencies;  // nanoseconds
};

struct Loop {
  TestService::Stub* stub;
  grpc::CompletionQueue* cq;
  SimpleRequest unary_request;
  StreamingOutputCallRequest stream_request;
  Clock::time_point measure_from;
  Clock::time_point end;
  Result result;
  int active = 0;
};

// One of the `concurrency` slots: makes calls back to back.
class Slot {
 public:
  explicit Slot(Loop* loop, bool stream) : loop_(loop), stream_(stream) {}

  // Starts the next call, or returns false once the window has ended.
  bool Start() {
    start_ = Clock::now();
    if (start_ >= loop_->end) return false;
    // The readers live in the call's arena, which the context owns: drop them first.
    unary_.reset();
    reader_.reset();
    context_ = std::make_unique<grpc::ClientContext>();
    messages_ = 0;
    bad_ = false;
    if (stream_) {
      state_ = State::kStarting;
      reader_ = loop_->stub->PrepareAsyncStreamingOutputCall(context_.get(), loop_->stream_request, loop_->cq);
      reader_->StartCall(this);
    } else {
      state_ = State::kFinishing;
      response_.Clear();
      unary_ = loop_->stub->PrepareAsyncUnaryCall(context_.get(), loop_->unary_request, loop_->cq);
      unary_->StartCall();
      unary_->Finish(&response_, &status_, this);
    }
    return true;
  }

  // One completion of this slot's tag; returns false when the slot has stopped.
  bool Proceed(bool ok) {
    switch (state_) {
      case State::kStarting:
        if (!ok) {
          state_ = State::kFinishing;
          reader_->Finish(&status_, this);
          return true;
        }
        state_ = State::kReading;
        reader_->Read(&stream_response_, this);
        return true;
      case State::kReading:
        if (ok) {
          if (stream_response_.payload().body().size() != static_cast<size_t>(kPayloadSize)) bad_ = true;
          ++messages_;
          reader_->Read(&stream_response_, this);
        } else {
          state_ = State::kFinishing;
          reader_->Finish(&status_, this);
        }
        return true;
      case State::kFinishing:
        if (!stream_) {
          messages_ = 1;
          if (response_.payload().body().size() != static_cast<size_t>(kPayloadSize)) bad_ = true;
        }
        Record(ok && status_.ok() && !bad_);
        return Start();
    }
    return false;
  }

 private:
  enum class State { kStarting, kReading, kFinishing };

  void Record(bool succeeded) {
    Clock::time_point t1 = Clock::now();
    if (t1 < loop_->measure_from || t1 > loop_->end) return;
    Result& r = loop_->result;
    if (!succeeded) {
      ++r.errors;
      return;
    }
    ++r.calls;
    r.messages += messages_;
    if (start_ >= loop_->measure_from) {
      r.latencies.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - start_).count());
    }
  }

  Loop* loop_;
  bool stream_;
  State state_ = State::kFinishing;
  Clock::time_point start_;
  std::unique_ptr<grpc::ClientContext> context_;
  grpc::Status status_;
  SimpleResponse response_;
  StreamingOutputCallResponse stream_response_;
  std::unique_ptr<grpc::ClientAsyncResponseReader<SimpleResponse>> unary_;
  std::unique_ptr<grpc::ClientAsyncReader<StreamingOutputCallResponse>> reader_;
  long messages_ = 0;
  bool bad_ = false;
};

// Nearest-rank percentile in microseconds with one decimal, as LoopResult.percentileMicroseconds.
double Percentile(const std::vector<int64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  long rank = static_cast<long>(std::ceil(p / 100 * static_cast<double>(sorted.size())));
  long index = std::min<long>(static_cast<long>(sorted.size()) - 1, std::max<long>(0, rank - 1));
  return std::round(static_cast<double>(sorted[index]) / 100) / 10;
}

// VmHWM of /proc/PID/status in MB (10^6 bytes), one decimal, as peakRSSMegabytes.
std::optional<double> PeakRSSMegabytes(int pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      double kilobytes = std::strtod(line.c_str() + 6, nullptr);
      return std::round(kilobytes * 1024 / 1e5) / 10;
    }
  }
  return std::nullopt;
}

std::string Number(double v) {
  std::ostringstream out;
  out.precision(15);
  out << v;
  return out.str();
}

std::string Quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

bool ParseOptions(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (i + 1 >= argc) return false;
    std::string value = argv[++i];
    if (flag == "--port") o->port = std::atoi(value.c_str());
    else if (flag == "--mode" && (value == "unary" || value == "stream")) o->stream = value == "stream";
    else if (flag == "--concurrency") o->concurrency = std::atoi(value.c_str());
    else if (flag == "--duration") o->duration = std::atof(value.c_str());
    else if (flag == "--warmup") o->warmup = std::atof(value.c_str());
    else if (flag == "--server-pid") o->server_pid = std::atoi(value.c_str());
    else if (flag == "--label") o->label = value;
    else if (flag == "--target") o->target = value;
    else return false;
  }
  return o->port > 0 && o->concurrency > 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!ParseOptions(argc, argv, &options)) {
    std::fprintf(stderr,
                 "usage: %s --port N [--mode unary|stream] [--concurrency N] [--duration S] [--warmup S] "
                 "[--server-pid PID] [--label L] [--target NAME]\n",
                 argv[0]);
    return 2;
  }
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateChannel("127.0.0.1:" + std::to_string(options.port), grpc::InsecureChannelCredentials());
  if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10))) {
    std::fprintf(stderr, "could not connect to 127.0.0.1:%d\n", options.port);
    return 1;
  }
  std::unique_ptr<TestService::Stub> stub = TestService::NewStub(channel);
  grpc::CompletionQueue cq;
  Loop loop;
  loop.stub = stub.get();
  loop.cq = &cq;
  loop.unary_request.set_response_size(kPayloadSize);
  for (int i = 0; i < kMessagesPerCall; ++i) loop.stream_request.add_response_parameters()->set_size(kPayloadSize);

  {  // One untimed call first, as `bench load` makes.
    grpc::ClientContext context;
    SimpleResponse response;
    grpc::Status status = stub->UnaryCall(&context, loop.unary_request, &response);
    if (!status.ok()) {
      std::fprintf(stderr, "first call failed: %s\n", status.error_message().c_str());
      return 1;
    }
  }

  loop.result.latencies.reserve(1 << 20);
  Clock::time_point start = Clock::now();
  loop.measure_from = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.warmup));
  loop.end = loop.measure_from +
             std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.duration));
  std::vector<std::unique_ptr<Slot>> slots;
  for (int i = 0; i < options.concurrency; ++i) {
    slots.push_back(std::make_unique<Slot>(&loop, options.stream));
    if (slots.back()->Start()) ++loop.active;
  }
  void* tag;
  bool ok;
  while (loop.active > 0 && cq.Next(&tag, &ok)) {
    if (!static_cast<Slot*>(tag)->Proceed(ok)) --loop.active;
  }
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }

  Result& r = loop.result;
  std::sort(r.latencies.begin(), r.latencies.end());
  std::optional<double> rss;
  if (options.server_pid > 0) rss = PeakRSSMegabytes(options.server_pid);
  std::printf(
      "{\"calls\":%ld,\"calls_per_s\":%s,\"concurrency\":%d,\"connections\":1,\"duration_s\":%s,\"errors\":%ld,"
      "\"label\":%s,\"mode\":%s,\"msgs_per_s\":%s,\"p50_us\":%s,\"p90_us\":%s,\"p999_us\":%s,\"p99_us\":%s,"
      "\"server_rss_mb\":%s,\"target\":%s,\"warmup_s\":%s}\n",
      r.calls, Number(std::round(static_cast<double>(r.calls) / options.duration)).c_str(), options.concurrency,
      Number(options.duration).c_str(), r.errors, Quoted(options.label).c_str(),
      Quoted(options.stream ? "stream" : "unary").c_str(),
      Number(std::round(static_cast<double>(r.messages) / options.duration)).c_str(),
      Number(Percentile(r.latencies, 50)).c_str(), Number(Percentile(r.latencies, 90)).c_str(),
      Number(Percentile(r.latencies, 99.9)).c_str(), Number(Percentile(r.latencies, 99)).c_str(),
      rss ? Number(*rss).c_str() : "null", Quoted(options.target).c_str(), Number(options.warmup).c_str());
  std::fflush(stdout);
  return 0;
}
