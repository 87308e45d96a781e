// The kernel's floor for one call at 1 in flight: a blocking TCP ping-pong over loopback.
// Build: cc -O2 -Wall -Wextra -o pingpong pingpong.c
// Server: ./pingpong serve PORT        client: ./pingpong PORT ROUNDS SIZE [poll]
// The client blocks in recv (or poll, then recv) for each answer, as any client making one call at a
// time must, and reports its CPU (user + system, getrusage) per round trip: what the kernel charges a
// caller for a send, a wake-up and a receive on this machine, with no protocol at all.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static double cpu(void) { struct rusage u; getrusage(RUSAGE_SELF, &u); return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6; }

int main(int argc, char **argv) {
    int one = 1;
    if (argc >= 3 && strcmp(argv[1], "serve") == 0) {
        int l = socket(AF_INET, SOCK_STREAM, 0);
        setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[2])), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        if (bind(l, (void *)&a, sizeof a) || listen(l, 16)) { perror("bind"); return 1; }
        for (;;) {
            int c = accept(l, 0, 0);
            setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            char buf[65536];
            ssize_t n;
            while ((n = recv(c, buf, sizeof buf, 0)) > 0) send(c, buf, n, 0);
            close(c);
        }
    }
    int port = atoi(argv[1]), rounds = atoi(argv[2]), size = atoi(argv[3]), usePoll = argc > 4;
    int s = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (connect(s, (void *)&a, sizeof a)) { perror("connect"); return 1; }
    char out[65536] = {0}, in[65536];
    for (int warm = 0; warm < 2; warm++) {
        double t0 = now(), c0 = cpu();
        for (int i = 0; i < rounds; i++) {
            send(s, out, size, 0);
            int got = 0;
            while (got < size) {
                if (usePoll) { struct pollfd p = {.fd = s, .events = POLLIN}; poll(&p, 1, -1); }
                ssize_t n = recv(s, in, sizeof in, usePoll ? MSG_DONTWAIT : 0);
                if (n <= 0) { perror("recv"); return 1; }
                got += n;
            }
        }
        double t = now() - t0, c = cpu() - c0;
        if (warm) printf("%s %d B: %.0f round trips/s, client CPU %.1f us per round trip\n", usePoll ? "poll+recv" : "recv", size, rounds / t, c / rounds * 1e6);
    }
    return 0;
}
