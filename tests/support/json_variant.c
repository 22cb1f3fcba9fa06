/* json_variant.c - JSON events into a vr_builder (json_variant.h). */
#include "json_variant.h"

#include "variant.h"

static int jv_begin_object(void *u) { return vr_begin_object(u); }
static int jv_end_object(void *u) { return vr_end_object(u); }
static int jv_begin_array(void *u) { return vr_begin_array(u); }
static int jv_end_array(void *u) { return vr_end_array(u); }
static int jv_key(void *u, const char *s, size_t n) { return vr_key(u, s, n); }
static int jv_string(void *u, const char *s, size_t n) { return vr_string(u, s, n); }
static int jv_bool(void *u, bool v) { return vr_bool(u, v); }
static int jv_null(void *u) { return vr_null(u); }
static int jv_number(void *u, const json_number *n) { return vr_json_number(u, n->raw, n->len); }

const json_handler pqt_json_variant = {
    jv_begin_object, jv_key, jv_end_object, jv_begin_array, jv_end_array,
    jv_string, jv_number, jv_bool, jv_null, NULL,
};
