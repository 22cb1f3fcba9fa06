/* pqfile_int.h - what the parts of the test-side Parquet reader
 * (pqfile*.c) share. Tests use pqfile.h. */
#ifndef PQFILE_INT_H
#define PQFILE_INT_H

#include "pqfile.h"

/* pqfile_levels.c: bits per level for levels up to max_level (Encodings.md). */
int pqf_bit_width(int max_level);

#endif
