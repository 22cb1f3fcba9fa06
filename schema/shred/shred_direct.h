/* shred_direct.h - the schema-directed parse of object members
 * (shred_direct.c): members whose key is the predicted one and whose
 * value is a scalar for a plain scalar column go straight from the line
 * into the column's leaf, scalar members of Variant and rest values
 * straight into their builders, and a shredded Variant's object of known
 * keys and string values into its leaves, without the parser's per-token
 * events. shred.c
 * installs it as its json_handler.member; the record walk (shred.c,
 * shred_value.c) never calls it. Runs on the thread that shreds the
 * record. */
#ifndef PQ_SHRED_DIRECT_H
#define PQ_SHRED_DIRECT_H

#include "shred_state.h"

/* json_handler.member for the record parser: at is a key's opening quote
 * inside the object of the top frame. Reads that member and the members
 * after it while each is predicted and plain (any key in a Variant or
 * rest value), sets *next past the last value read, and returns 0. A predicted key whose value it does not take
 * (a container, a null, an escape, a wrong type, a repeat) it reads as
 * on_key / shv_typed_key would, and leaves the value to the parser
 * (*next at the value, *value_next). Any other key declines (*next
 * untouched, nothing changed). < 0: a writer error (the row is lost; the
 * caller stops the parse as the general path would). */
int shd_member(sh_shredder *s, const char *at, const char *end, const char **next,
               bool *value_next);

/* Builds s->field_keys for s->spec (the shredder's setup): 0 or
 * PQ_ENOMEM. sh_shredder_destroy frees it. */
int shd_setup(sh_shredder *s);

#endif
