/*
 * Compares every constant of include/mcapi.h with the value expected.def gives it. check.sh
 * turns expected.def into expected.inc, one PIN(expression, value, source) per line, and
 * builds this file against Ferry's header. Prints each mismatch with both values; exits
 * non-zero when there is one.
 */
#include <stdio.h>

#include <mcapi.h>

static int mismatches = 0;
static int pinned = 0;

static void pin(const char *name, unsigned long have, unsigned long want, const char *source)
{
    pinned++;
    if (have != want) {
        printf("mismatch: %s is %lu in mcapi.h, expected %lu (%s)\n", name, have, want, source);
        mismatches++;
    }
}

#define PIN(expr, want, source) pin(#expr, (unsigned long)(expr), (unsigned long)(want##UL), source);

int main(void)
{
#include "expected.inc"
    if (mismatches == 0)
        printf("%d values as expected\n", pinned);
    return mismatches == 0 ? 0 : 1;
}
