/* Compiles every generated typed header (protoc-gen-skiff, Language=C) and links every generated
 * message: names that do not match protoc-c's fail here. Built by make check. */
#include "skiff/accounts/v1/accounts.skiff.h"
#include "skiff/bids/v1/bids.skiff.h"
#include "skiff/bucketlist/v1/bucketlist.skiff.h"
#include "skiff/chat/v1/chat.skiff.h"
#include "skiff/health/v1/health.skiff.h"
#include "skiff/listings/v1/listings.skiff.h"
#include "skiff/lostfound/v1/lostfound.skiff.h"
#include "skiff/testing/v1/test.skiff.h"

int main(void) { return 0; }
