/* The C tests' checks: each CHECK counts, a failed one is reported with its line and counted;
 * main prints both counts and exits non-zero on any failure. Safe from several threads. */
#ifndef SKIFF_TESTS_CHECK_H
#define SKIFF_TESTS_CHECK_H

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "skiff/frame.h"

static atomic_int checks;
static atomic_int failures;

#define CHECK(condition)                                                                  \
    do {                                                                                  \
        atomic_fetch_add(&checks, 1);                                                     \
        if (!(condition)) {                                                               \
            atomic_fetch_add(&failures, 1);                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #condition); \
        }                                                                                 \
    } while (0)

/* A NUL-terminated string's bytes (without the NUL), short for the tests. */
static inline skiff_bytes text(const char *s) { return skiff_bytes_of_string(s); }

#endif
