/* shred_value.h - the values of typed columns, for the record walk in
 * shred.c: scalar conversions, LIST/MAP/struct levels, nulls, Variant and
 * json columns (shred_value.c). shred.c calls these; they never call back
 * into shred.c (the frame stack they push on is in shred_state.h). Runs on
 * the thread that shreds the record. */
#ifndef PQ_SHRED_VALUE_H
#define PQ_SHRED_VALUE_H

#include "shred_state.h"

/* shv_put_scalar's answer when the value is not of the column's type:
 * nothing was written, and the general path (shv_typed_value) decides what
 * becomes of it. Positive, so it never collides with a writer error. */
#define SHV_MISMATCH 2

/* Whether values of type t are single tokens that shv_put_scalar takes
 * whole (no container, Variant, json or GeoJSON handling). */
bool shv_is_plain_scalar(const sc_type *t);
/* A scalar event (string, number, bool; not null) into a plain scalar
 * column's leaf: 0 when put, SHV_MISMATCH, or < 0 on a writer error. */
int shv_put_scalar(sh_shredder *s, const sc_type *t, uint16_t rep, int ev, const void *payload);
int shv_typed_value(sh_shredder *s, int column, const sc_type *t, bool nullable, uint16_t rep,
                    int ev, const void *payload);
int shv_typed_key(sh_shredder *s, sh_frame *f, const char *k, size_t len);
int shv_typed_end(sh_shredder *s, sh_frame *f);
int shv_nulls(sh_shredder *s, const sc_type *t, uint16_t rep, uint16_t def);
int shv_write_variant(sh_shredder *s, const sc_type *t, const vr_variant *v, uint16_t rep);
int shv_missing_column(sh_shredder *s, int column);
int shv_scalar_to_variant(vr_builder *b, int ev, const void *payload);
int shv_json_text(pq_buf *out, int ev, const void *payload);
int shv_nested_end(sh_shredder *s, const sh_frame *f);
int shv_geo_end(sh_shredder *s, const sh_frame *f);
int shv_json_key(pq_buf *out, const char *k, size_t len);
int shv_json_end(pq_buf *out, bool object);
void shv_fail_column(sh_shredder *s, int column, const char *why);
/* Opens, in the rest builder, the route objects from the root down to the
 * current one not open yet (shred.c's rest values, shred_direct.c). */
int shv_rest_open_path(sh_shredder *s);

#endif
