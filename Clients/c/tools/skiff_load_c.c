/*
 * skiff-load-c: the C client's load driver, a closed loop like `bench load`'s (Benchmarks,
 * runClosedLoop) with `--concurrency` calls in flight on one channel, kept by `--threads` threads
 * (1 by default): each starts its share of the calls, then takes them in the order they were
 * started (finishing the oldest, starting the next), so a thread sleeps only when its oldest call is
 * not answered yet. Calls that end inside the measured window count; latencies are those of calls
 * that also started in it (every sample, sorted, nearest rank), measured from start to the moment
 * the thread took the answer. Prints one JSON line with the fields `bench load` prints, plus the
 * client's own CPU per call over the measured window.
 *
 *   skiff-load-c --port N [--host H] [--mode unary|stream] [--concurrency 16] [--threads 1]
 *                [--batch 1] [--duration 5] [--warmup 1] [--server-pid PID] [--label L] [--target skiff-c]
 *
 * --batch 1 (the default) opens the channel with batch_writes: the requests a thread makes leave
 * in one write when it waits for an answer.
 *
 * Workload (the benchmark's): UnaryCall with a 250-byte response; StreamingOutputCall with 100
 * responses of 250 bytes.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "skiff/testing/v1/test.skiff.h"

enum { PAYLOAD = 250, MESSAGES = 100 };

typedef struct options {
    const char *host;
    int port, concurrency, threads, server_pid;
    bool stream, batch;
    double duration, warmup;
    const char *label, *target;
} options;

typedef struct slot {
    skiff_channel *channel;
    const options *o;
    int in_flight;
    int64_t measure_from, end;
    long calls, messages, errors;
    int64_t *latencies;
    size_t count, capacity;
} slot;

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static double cpu_seconds(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec / 1e6 + (double)usage.ru_stime.tv_sec +
           (double)usage.ru_stime.tv_usec / 1e6;
}

/* Starts one call of the workload (its request sent). */
static skiff_call *start_call(skiff_channel *channel, bool stream) {
    static Skiff__Testing__V1__ResponseParameters parameters = {PROTOBUF_C_MESSAGE_INIT(
                                                                    &skiff__testing__v1__response_parameters__descriptor),
        PAYLOAD, 0};
    static Skiff__Testing__V1__ResponseParameters *list[MESSAGES];
    if (!stream) {
        Skiff__Testing__V1__SimpleRequest request = SKIFF__TESTING__V1__SIMPLE_REQUEST__INIT;
        request.response_size = PAYLOAD;
        skiff_call *call = skiff_call_start(channel, SKIFF_TESTING_V1_TEST_SERVICE_UNARY_CALL_PATH, NULL);
        if (call) (void)skiff_call_send_message(call, &request.base, true);
        return call;
    }
    for (int i = 0; i < MESSAGES; i++) list[i] = &parameters;
    Skiff__Testing__V1__StreamingOutputCallRequest request = SKIFF__TESTING__V1__STREAMING_OUTPUT_CALL_REQUEST__INIT;
    request.response_parameters = list;
    request.n_response_parameters = MESSAGES;
    return skiff_testing_v1_test_service_streaming_output_call_start(channel, &request, NULL);
}

/* Takes a call's answer and finishes it: the number of response messages, or -1 on failure. */
static int complete_call(skiff_call *call, bool stream) {
    if (!call) return -1;
    int count = 0;
    if (!stream) {
        Skiff__Testing__V1__SimpleResponse *response = NULL;
        if (skiff_call_receive_message(call, &skiff__testing__v1__simple_response__descriptor,
                (ProtobufCMessage **)&response) == 1) {
            count = response->payload && response->payload->body.len == PAYLOAD;
            skiff__testing__v1__simple_response__free_unpacked(response, NULL);
        }
        return skiff_call_finish(call, NULL) == SKIFF_STATUS_OK && count == 1 ? 1 : -1;
    }
    Skiff__Testing__V1__StreamingOutputCallResponse *message = NULL;
    while (skiff_testing_v1_test_service_streaming_output_call_receive(call, &message) == 1) {
        count += message->payload && message->payload->body.len == PAYLOAD;
        skiff__testing__v1__streaming_output_call_response__free_unpacked(message, NULL);
    }
    return skiff_call_finish(call, NULL) == SKIFF_STATUS_OK && count == MESSAGES ? count : -1;
}

static int call_once(skiff_channel *channel, bool stream) { return complete_call(start_call(channel, stream), stream); }

/* A thread's share of the calls in flight: a ring of calls in the order they were started. */
static void *run_slot(void *argument) {
    slot *s = argument;
    int n = s->in_flight;
    skiff_call **calls = calloc((size_t)n, sizeof *calls);
    int64_t *started = calloc((size_t)n, sizeof *started);
    if (!calls || !started) abort();
    for (int i = 0; i < n; i++) {
        started[i] = now_ns();
        calls[i] = start_call(s->channel, s->o->stream);
    }
    for (int i = 0, open = n; open > 0; i = (i + 1) % n) {
        if (!calls[i] && started[i] == 0) continue;
        int64_t t0 = started[i];
        int messages = complete_call(calls[i], s->o->stream);
        int64_t t1 = now_ns();
        calls[i] = NULL;
        started[i] = 0;
        if (t1 < s->end) {
            started[i] = now_ns();
            calls[i] = start_call(s->channel, s->o->stream);
        } else {
            open--;
        }
        if (t1 < s->measure_from || t1 > s->end) continue;
        if (messages < 0) {
            s->errors++;
            continue;
        }
        s->calls++;
        s->messages += messages;
        if (t0 < s->measure_from) continue;
        if (s->count == s->capacity) {
            s->capacity = s->capacity ? s->capacity * 2 : 1 << 16;
            s->latencies = realloc(s->latencies, s->capacity * sizeof *s->latencies);
            if (!s->latencies) abort();
        }
        s->latencies[s->count++] = t1 - t0;
    }
    free(calls);
    free(started);
    return NULL;
}

static int compare(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest rank, in microseconds with one decimal (as bench's percentileMicroseconds). */
static double percentile(const int64_t *sorted, size_t count, double p) {
    if (count == 0) return 0;
    long rank = (long)ceil(p / 100 * (double)count);
    long index = rank - 1 < 0 ? 0 : rank - 1;
    if (index > (long)count - 1) index = (long)count - 1;
    return round((double)sorted[index] / 100) / 10;
}

static double peak_rss_megabytes(int pid) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *file = fopen(path, "r");
    double result = -1;
    while (file && fgets(line, sizeof line, file))
        if (strncmp(line, "VmHWM:", 6) == 0) result = round(strtod(line + 6, NULL) * 1024 / 1e5) / 10;
    if (file) fclose(file);
    return result;
}

int main(int argc, char **argv) {
    options o = {"127.0.0.1", 0, 16, 1, 0, false, true, 5, 1, "", "skiff-c"};
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *flag = argv[i], *value = argv[i + 1];
        if (!strcmp(flag, "--port")) o.port = atoi(value);
        else if (!strcmp(flag, "--host")) o.host = value;
        else if (!strcmp(flag, "--mode")) o.stream = !strcmp(value, "stream");
        else if (!strcmp(flag, "--concurrency")) o.concurrency = atoi(value);
        else if (!strcmp(flag, "--threads")) o.threads = atoi(value);
        else if (!strcmp(flag, "--batch")) o.batch = atoi(value) != 0;
        else if (!strcmp(flag, "--duration")) o.duration = atof(value);
        else if (!strcmp(flag, "--warmup")) o.warmup = atof(value);
        else if (!strcmp(flag, "--server-pid")) o.server_pid = atoi(value);
        else if (!strcmp(flag, "--label")) o.label = value;
        else if (!strcmp(flag, "--target")) o.target = value;
        else o.port = 0;
    }
    if (o.threads > o.concurrency) o.threads = o.concurrency;
    if (argc % 2 != 1 || o.port <= 0 || o.concurrency <= 0 || o.threads <= 0) {
        fprintf(stderr, "usage: %s --port N [--host H] [--mode unary|stream] [--concurrency N] [--threads N] "
                        "[--duration S] [--warmup S] [--server-pid PID] [--label L] [--target NAME]\n", argv[0]);
        return 2;
    }
    skiff_status status = {0};
    skiff_channel_options channel_options;
    skiff_channel_options_defaults(&channel_options);
    channel_options.batch_writes = o.batch; /* requests leave together when the thread waits */
    skiff_channel *channel = skiff_channel_connect(o.host, (uint16_t)o.port, &channel_options, &status);
    if (!channel || call_once(channel, false) < 0) { /* one untimed call first, as bench makes */
        fprintf(stderr, "could not call %s:%d: %s\n", o.host, o.port, status.message ? status.message : "");
        return 1;
    }
    int64_t start = now_ns();
    int64_t measure_from = start + (int64_t)(o.warmup * 1e9), end = measure_from + (int64_t)(o.duration * 1e9);
    slot *slots = calloc((size_t)o.threads, sizeof *slots);
    pthread_t *threads = calloc((size_t)o.threads, sizeof *threads);
    for (int i = 0; i < o.threads; i++) {
        int share = o.concurrency / o.threads + (i < o.concurrency % o.threads);
        slots[i] = (slot){channel, &o, share, measure_from, end, 0, 0, 0, NULL, 0, 0};
        pthread_create(&threads[i], NULL, run_slot, &slots[i]);
    }
    struct timespec until = {(time_t)(measure_from / 1000000000), (long)(measure_from % 1000000000)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL);
    double cpu_from = cpu_seconds();
    until = (struct timespec){(time_t)(end / 1000000000), (long)(end % 1000000000)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL);
    double cpu = cpu_seconds() - cpu_from;
    long calls = 0, messages = 0, errors = 0;
    size_t count = 0;
    for (int i = 0; i < o.threads; i++) {
        pthread_join(threads[i], NULL);
        calls += slots[i].calls, messages += slots[i].messages, errors += slots[i].errors, count += slots[i].count;
    }
    int64_t *all = malloc((count ? count : 1) * sizeof *all);
    size_t at = 0;
    for (int i = 0; i < o.threads; i++) {
        if (slots[i].count) memcpy(all + at, slots[i].latencies, slots[i].count * sizeof *all);
        at += slots[i].count;
        free(slots[i].latencies);
    }
    qsort(all, count, sizeof *all, compare);
    double rss = o.server_pid > 0 ? peak_rss_megabytes(o.server_pid) : -1;
    char rss_text[32] = "null";
    if (rss >= 0) snprintf(rss_text, sizeof rss_text, "%.1f", rss);
    printf("{\"calls\":%ld,\"calls_per_s\":%.0f,\"client_cpu_us_per_call\":%.1f,\"concurrency\":%d,\"connections\":1,"
           "\"duration_s\":%g,\"errors\":%ld,\"label\":\"%s\",\"mode\":\"%s\",\"msgs_per_s\":%.0f,\"p50_us\":%.1f,"
           "\"p90_us\":%.1f,\"p999_us\":%.1f,\"p99_us\":%.1f,\"server_rss_mb\":%s,\"target\":\"%s\",\"warmup_s\":%g}\n",
        calls, round((double)calls / o.duration), calls ? cpu * 1e6 / (double)calls : 0, o.concurrency, o.duration,
        errors, o.label, o.stream ? "stream" : "unary", round((double)messages / o.duration),
        percentile(all, count, 50), percentile(all, count, 90), percentile(all, count, 99.9),
        percentile(all, count, 99), rss_text, o.target, o.warmup);
    free(all);
    free(slots);
    free(threads);
    skiff_channel_close(channel);
    return 0;
}
