// duckdb.mjs - reads a Parquet file with DuckDB (@duckdb/node-api) and turns
// DuckDB's value classes into the canonical internal form (canon.mjs).
import {
  DuckDBInstance, DuckDBBlobValue, DuckDBDateValue, DuckDBDecimalValue, DuckDBGeometryValue,
  DuckDBIntervalValue, DuckDBListValue, DuckDBMapValue, DuckDBStructValue, DuckDBTimeNSValue,
  DuckDBTimeValue, DuckDBTimeTZValue, DuckDBTimestampMillisecondsValue, DuckDBTimestampNanosecondsValue,
  DuckDBTimestampSecondsValue, DuckDBTimestampTZValue, DuckDBTimestampValue, DuckDBUUIDValue,
  DuckDBArrayValue,
} from '@duckdb/node-api';
import {
  Mismatch, bytesToHex, convertUnit, isBytes, isInt, isStringy, unitOf,
} from './canon.mjs';

export const name = 'duckdb';
export const preservesNegZero = true;

let con = null;
async function connection() {
  if (!con) {
    const inst = await DuckDBInstance.create(':memory:');
    con = await inst.connect();
  }
  return con;
}

function className(v) {
  return v === null || v === undefined ? String(v) : (v.constructor?.name || typeof v);
}

function bad(t, v) {
  let s;
  try { s = String(v); } catch { s = '?'; }
  return new Mismatch(`${className(v)} ${s} (read as ${t.type})`);
}

/* DuckDB timestamp classes -> [count, unit, isTZ] */
function timestampParts(v) {
  if (v instanceof DuckDBTimestampTZValue) return [v.micros, 'us', true];
  if (v instanceof DuckDBTimestampValue) return [v.micros, 'us', false];
  if (v instanceof DuckDBTimestampNanosecondsValue) return [v.nanos, 'ns', false];
  if (v instanceof DuckDBTimestampMillisecondsValue) return [v.millis, 'ms', false];
  if (v instanceof DuckDBTimestampSecondsValue) return [v.seconds, 's', false];
  return null;
}

export function normalize(t, v) {
  if (v === null || v === undefined) return null;
  if (isInt(t)) {
    if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
    if (typeof v === 'bigint') return v;
    return bad(t, v);
  }
  switch (t.type) {
    case 'bool': return typeof v === 'boolean' ? v : bad(t, v);
    case 'float': case 'double': case 'float16': return typeof v === 'number' ? v : bad(t, v);
    case 'decimal':
      if (v instanceof DuckDBDecimalValue) {
        if (v.scale !== t.scale) return new Mismatch(`DECIMAL(${v.width},${v.scale}) unscaled ${v.value}`);
        return v.value;
      }
      return bad(t, v);
    case 'uuid':
      if (v instanceof DuckDBUUIDValue) return v.toString();
      return bad(t, v);
    case 'date':
      if (v instanceof DuckDBDateValue) return BigInt(v.days);
      return bad(t, v);
    case 'time_ms': case 'time_us': case 'time_ns': {
      // isAdjustedToUTC=true reads as TIME WITH TIME ZONE (offset 0), false as TIME.
      const tz = v instanceof DuckDBTimeTZValue;
      if (t.utc !== undefined && tz !== t.utc && (tz || v instanceof DuckDBTimeValue || v instanceof DuckDBTimeNSValue))
        return new Mismatch(`${className(v)} ${v} (${tz ? 'UTC-adjusted' : 'local'}; expected ${t.utc ? 'UTC-adjusted' : 'local'})`);
      if (tz) return v.offset === 0 ? convertUnit(v.micros, 'us', unitOf(t)) : bad(t, v);
      if (v instanceof DuckDBTimeValue) return convertUnit(v.micros, 'us', unitOf(t));
      if (v instanceof DuckDBTimeNSValue) return convertUnit(v.nanos, 'ns', unitOf(t));
      return bad(t, v);
    }
    case 'timestamp_ms': case 'timestamp_us': case 'timestamp_ns': case 'int96': {
      const p = timestampParts(v);
      if (!p) return bad(t, v);
      // isAdjustedToUTC=true reads as TIMESTAMP WITH TIME ZONE, false as TIMESTAMP.
      if (t.utc !== undefined && p[2] !== t.utc)
        return new Mismatch(`${className(v)} ${v} (${p[2] ? 'UTC-adjusted' : 'local'}; expected ${t.utc ? 'UTC-adjusted' : 'local'})`);
      return convertUnit(p[0], p[1], unitOf(t));
    }
    case 'interval':
      if (v instanceof DuckDBIntervalValue) {
        const ms = convertUnit(v.micros, 'us', 'ms');
        if (ms instanceof Mismatch) return ms;
        return { months: v.months, days: v.days, millis: Number(ms) };
      }
      return bad(t, v);
    case 'unknown': return bad(t, v);
    case 'list':
      if (v instanceof DuckDBListValue || v instanceof DuckDBArrayValue) return v.items.map(e => normalize(t.element, e));
      return bad(t, v);
    case 'map':
      if (v instanceof DuckDBMapValue) return v.entries.map(e => [normalize(t.key, e.key), normalize(t.value, e.value)]);
      return bad(t, v);
    case 'struct': {
      if (!(v instanceof DuckDBStructValue)) return bad(t, v);
      const o = {};
      for (const f of t.fields) if (f.name in v.entries) o[f.name] = normalize(f, v.entries[f.name]);
      return o;
    }
  }
  if (isStringy(t)) return typeof v === 'string' ? v : bad(t, v);
  if (isBytes(t)) {
    if (v instanceof DuckDBBlobValue || v instanceof DuckDBGeometryValue) return bytesToHex(v.bytes);
    return bad(t, v);
  }
  return bad(t, v);
}

/* Returns {columns: {name: values[]}, nrows, info} */
export async function read(file, columns) {
  const c = await connection();
  const r = await c.runAndReadAll('SELECT * FROM read_parquet(?)', [file]);
  const names = r.columnNames();
  const types = r.columnTypes().map(String);
  const rows = r.getRows();
  const out = {};
  for (const col of columns) {
    const j = names.indexOf(col.name);
    if (j < 0) continue;
    out[col.name] = rows.map(row => normalize(col, row[j]));
  }
  const info = names.map((n, j) => `${n} ${types[j]}`).join(', ');
  return { columns: out, nrows: rows.length, info };
}

/* DuckDB's view of the file's schema and column chunks, for inspection. */
export async function describe(file) {
  const c = await connection();
  const q = async (sql) => (await c.runAndReadAll(sql, [file])).getRowObjectsJson();
  return {
    schema: await q('SELECT * FROM parquet_schema(?)'),
    metadata: await q('SELECT * FROM parquet_metadata(?)'),
    file_metadata: await q('SELECT * FROM parquet_file_metadata(?)'),
  };
}

