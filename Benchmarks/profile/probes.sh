#!/usr/bin/env bash
# Adds (or with `del` removes) the perf uprobes that profile.sh counts. Needs root.
set -euo pipefail
lib=/opt/swift/usr/lib/swift/linux
libc=/lib/x86_64-linux-gnu/libc.so.6
if [[ "${1:-add}" == "del" ]]; then
    perf probe -q -d 'probe_libc:*' -d 'probe_libswiftCore:*' -d 'probe_libswift_Concurrency:*' || true
    exit 0
fi
for f in malloc calloc realloc posix_memalign; do perf probe -q -x "$libc" "$f" || true; done
for f in swift_allocObject swift_retain; do perf probe -q -x "$lib/libswiftCore.so" "$f" || true; done
for f in swift_task_create swift_task_switch swift_task_enqueueGlobal swift_continuation_resume \
    swift_continuation_throwingResume; do
    perf probe -q -x "$lib/libswift_Concurrency.so" "$f" || true
done
perf probe -l
