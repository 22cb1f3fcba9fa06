// limits.mjs - what each reader is known not to read, or to read only
// approximately. Every entry was established by trying (selftest.mjs and the
// parqd matrix), not by reading feature lists; `how` says how.
//
// kind 'skip':  the (file, reader) pair is SKIPped when the file has
//               `feature` AND the reader's failure message matches `expect`.
//               A different failure is still a FAIL; a pass is a PASS with a
//               note that the entry may be stale.
// kind 'lossy': the reader returns an approximation; the expected value is
//               put through `fn` (the same approximation, computed exactly)
//               before comparing, and the PASS line names the entry.
//
// Features: type:<type> for every column/field type in the expectation
// (type:decimal_<physical>, type:timestamp_ns_utc too), codec:<CODEC> and
// encoding:<ENCODING> and encoding:<ENCODING>:<PHYSICAL TYPE> from the file's footer, page:<PAGE_TYPE> from its
// encoding stats, plus the expectation's own "features".
import { isInt, isStringy } from './canon.mjs';

export const LIMITS = [
  {
    reader: 'hyparquet', feature: 'type:interval', kind: 'skip',
    reason: 'hyparquet does not decode INTERVAL (throws)',
    expect: /parquet interval not supported/,
    how: 'selftest: DuckDB-written INTERVAL column; hyparquet 1.31.5 throws "parquet interval not supported" (src/convert.js)',
  },
  {
    reader: 'hyparquet', feature: 'type:bson', kind: 'skip',
    reason: 'hyparquet does not decode BSON (throws)',
    expect: /parquet bson not supported/,
    how: 'parqd matrix: BSON column; hyparquet 1.31.5 throws "parquet bson not supported" (src/convert.js)',
  },
  {
    reader: 'hyparquet', feature: 'type:decimal', kind: 'lossy',
    reason: 'hyparquet returns DECIMAL as a JS number: Number(unscaled) * 10 ** -scale',
    how: 'selftest: DECIMAL(38,10) values differ past 2^53; src/convert.js computes exactly that double',
    match: t => t.type === 'decimal',
    fn: (t, u) => Number(u) * 10 ** -t.scale,
  },
  {
    reader: 'hyparquet', feature: 'type:map', kind: 'lossy',
    reason: 'hyparquet returns MAP as a JS object: keys become property names, so key order follows JS rules and duplicate keys collapse',
    how: 'selftest: map<int32,...> keys come back as strings, integer-like keys sorted',
    match: t => t.type === 'map' && (isInt(t.key) || isStringy(t.key)),
    fn: (t, entries) => {
      const o = {};
      for (const [k, v] of entries) o[String(k)] = v;
      return Object.entries(o).map(([k, v]) => [isInt(t.key) ? BigInt(k) : k, v]);
    },
  },
  {
    reader: 'duckdb', feature: 'type:bson', kind: 'skip',
    reason: 'DuckDB rejects the BSON ConvertedType',
    expect: /Unsupported converted type \(20\)/,
    how: 'parqd matrix (types_bson): DuckDB 1.5.6 fails with "IO Error: Unsupported converted type (20)"',
  },
  ...['INT32', 'INT64', 'FIXED_LEN_BYTE_ARRAY'].map(phys => ({
    reader: 'duckdb', feature: `encoding:BYTE_STREAM_SPLIT:${phys}`, kind: 'skip',
    reason: `DuckDB decodes BYTE_STREAM_SPLIT only for FLOAT and DOUBLE, not ${phys}`,
    expect: /BYTE_STREAM_SPLIT encoding is only supported for FLOAT or DOUBLE/,
    how: 'parqd matrix (enc_byte_stream_split_int_flba_*): DuckDB 1.5.6 fails with "BYTE_STREAM_SPLIT encoding is only supported for FLOAT or DOUBLE data"',
  })),
  {
    reader: 'duckdb', feature: 'type:int96', kind: 'lossy',
    reason: 'DuckDB reads INT96 as TIMESTAMP in microseconds (nanoseconds of the day truncated, i.e. floor)',
    how: 'parqd matrix (types_int96): Julian day 2440587 + 1 ns reads as -86400000000 us',
    match: t => t.type === 'int96',
    fn: (t, v) => v - (((v % 1000n) + 1000n) % 1000n),
  },
  {
    reader: 'duckdb', feature: 'type:interval', kind: 'lossy',
    reason: 'DuckDB holds INTERVAL months and days as signed 32-bit: values above 2^31-1 read negative',
    how: 'parqd matrix (types_interval_u32max): months = days = 4294967295 read as -1',
    match: t => t.type === 'interval',
    fn: (t, v) => ({ months: v.months | 0, days: v.days | 0, millis: v.millis }),
  },
  {
    reader: 'duckdb', feature: 'type:timestamp_ns_utc', kind: 'lossy',
    reason: 'DuckDB reads TIMESTAMP(NANOS, isAdjustedToUTC=true) as TIMESTAMP WITH TIME ZONE, in microseconds truncated toward zero',
    how: 'selftest: arrow-rs-written TIMESTAMP(NANOS,true); -1 ns reads as 0 us, 9223372036854775806 ns as 9223372036854775 us',
    match: t => t.type === 'timestamp_ns' && t.utc === true,
    fn: (t, v) => v / 1000n * 1000n,
  },
  {
    reader: 'duckdb', feature: 'type:time_ns_utc', kind: 'lossy',
    reason: 'DuckDB reads TIME(NANOS, isAdjustedToUTC=true) as TIME WITH TIME ZONE, in microseconds (truncated)',
    how: 'parqd matrix (types_date_time_timestamp): 86399999999999 ns reads as 86399999999 us',
    match: t => t.type === 'time_ns' && t.utc === true,
    fn: (t, v) => v / 1000n * 1000n,
  },
  {
    reader: 'parquet-wasm', feature: 'type:interval', kind: 'lossy',
    reason: 'arrow-rs reads INTERVAL as Arrow Interval<DAY_TIME>, which has no months field; days and millis are still compared',
    how: 'selftest: DuckDB-written INTERVAL \'1 month 2 days 3 seconds\' reads as {days:2, millis:3000}',
    match: t => t.type === 'interval',
    fn: (t, v) => ({ months: 'dropped', days: v.days, millis: v.millis }),
  },
];

/* Limits of `reader` that apply to a file with feature set `features`. */
export function limitsFor(reader, features) {
  return LIMITS.filter(l => l.reader === reader && features.has(l.feature));
}
