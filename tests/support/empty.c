/* empty.c - keeps pqtest_support non-empty before any support module exists. */
typedef int pqtest_support_empty_unit;
