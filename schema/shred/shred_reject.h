/* shred_reject.h - why the shredder rejected a record, as a code
 * (shred.h: sh_last_reject). Its own header so that the shredder's state
 * (shred_state.h) and its API (shred.h) both use it without including
 * each other. */
#ifndef PQ_SHRED_REJECT_H
#define PQ_SHRED_REJECT_H

/* Why the last sh_shred_line returned SH_REJECTED (sh_last_reject): a
 * stable code for whoever counts rejects (the `reason` label in /metrics),
 * while err.msg is for people and may be reworded freely. */
typedef enum sh_reject {
    SH_REJECT_NONE = 0,          /* the last record was not rejected */
    SH_REJECT_EMPTY,             /* an empty line */
    SH_REJECT_INVALID_JSON,      /* not parseable as JSON */
    SH_REJECT_NOT_OBJECT,        /* JSON, but not an object, and no rest column */
    SH_REJECT_NO_FIT,            /* a value does not fit its column, no rest column */
    SH_REJECT_MISSING_REQUIRED,  /* a required column is missing or of a wrong type */
} sh_reject;

#endif
