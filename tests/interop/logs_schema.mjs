// logs_schema.mjs - what a parqd schema (conf/schemas/*.yaml, DESIGN.md
// "Schema (YAML)") says a source record must become, computed here
// independently of parqd: the YAML is read with js-yaml (failsafe schema,
// so every scalar stays a string, as libyaml hands them to parqd), `from`
// paths are resolved here, and every typed value is converted here with
// exact integer math (BigInt).
//
// Expected values use canon.mjs's internal form: integers and timestamps
// BigInt (timestamps in the column's unit), double number, string, bool,
// list array, struct object; Variant columns hold the source JSON value
// (logs_json.mjs), `undefined` meaning SQL NULL.
//
// Rules (DESIGN.md "Schema", "Bad input and lost data"):
//   - missing key or JSON null -> null in a typed column; in a Variant
//     column a JSON null is a Variant null and a missing key SQL NULL;
//   - a value "fits" a typed column when its JSON type matches: bool <-
//     true/false; intN/uintN <- a number with an integer value in range;
//     float/double <- a finite number (correctly rounded, as JS parses);
//     string <- a string; timestamp <- an RFC 3339 string (also with a
//     space for 'T' and without an offset: wall-clock time, as the Windows
//     sample writes it) or a number of epoch seconds, exact in the unit;
//     list<T> <- an array of fitting elements; struct <- an object whose
//     every key is one of the fields and whose fields fit; variant <- anything;
//   - a value that does not fit leaves the typed column null and stays in
//     `rest` (the "*" column); a value that fits must not be in `rest`.
import fs from 'node:fs';
import yaml from 'js-yaml';
import { JNum, escapePtr } from './logs_json.mjs';

const INT_RANGE = {
  int8: [-(2n ** 7n), 2n ** 7n - 1n], int16: [-(2n ** 15n), 2n ** 15n - 1n],
  int32: [-(2n ** 31n), 2n ** 31n - 1n], int64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint8: [0n, 2n ** 8n - 1n], uint16: [0n, 2n ** 16n - 1n], uint32: [0n, 2n ** 32n - 1n], uint64: [0n, 2n ** 64n - 1n],
};
const UNIT_PER_S = { ms: 1000n, us: 1000000n, ns: 1000000000n };

function yamlBool(v, where) {
  if (v === undefined) return undefined;
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw new Error(`${where}: expected true or false, got ${JSON.stringify(v)}`);
}

/* YAML column/field mapping -> type model:
 *   {kind: 'scalar', canon: {type, utc?}} | {kind: 'list', element} |
 *   {kind: 'struct', fields: [{name, from, type}]} | {kind: 'variant', shred} */
function parseType(spec, typeStr, where) {
  const t = String(typeStr ?? '').trim();
  const lm = /^list\s*<\s*(.+)\s*>$/.exec(t);
  if (lm) return { kind: 'list', element: parseType(spec, lm[1], `${where}<element>`) };
  if (t === 'struct') {
    if (!Array.isArray(spec.fields) || !spec.fields.length) throw new Error(`${where}: struct without fields`);
    return { kind: 'struct', fields: spec.fields.map(f => parseColumn(f, `${where}.${f.name}`)) };
  }
  if (t === 'variant') return { kind: 'variant', shred: spec.shred };
  if (t in INT_RANGE || t === 'bool' || t === 'float' || t === 'double' || t === 'string')
    return { kind: 'scalar', canon: { type: t } };
  if (t === 'timestamp') {
    if (!(spec.unit in UNIT_PER_S)) throw new Error(`${where}: timestamp unit ${JSON.stringify(spec.unit)}: this test needs an explicit unit ms/us/ns`);
    const utc = yamlBool(spec.utc, `${where}.utc`);
    if (utc === undefined) throw new Error(`${where}: timestamp without utc: this test needs it explicit`);
    return { kind: 'scalar', canon: { type: `timestamp_${spec.unit}`, utc }, unit: spec.unit };
  }
  throw new Error(`${where}: type ${JSON.stringify(t)} is not supported by this test (logs_schema.mjs)`);
}

function parseColumn(spec, where) {
  if (!spec || typeof spec.name !== 'string') throw new Error(`${where}: column without a name`);
  const col = {
    name: spec.name,
    from: spec.from ?? spec.name,
    required: yamlBool(spec.required, `${where}.required`) || false,
  };
  if (spec.ingest_time !== undefined) col.ingestTime = true;
  col.type = parseType(spec, spec.type, where);
  return col;
}

/* conf/schemas/X.yaml -> [{name, from, required, type}] */
export function loadSchema(file) {
  const doc = yaml.load(fs.readFileSync(file, 'utf8'), { schema: yaml.FAILSAFE_SCHEMA, filename: file });
  if (!doc || !Array.isArray(doc.columns)) throw new Error(`${file}: no columns list`);
  return doc.columns.map((c, i) => parseColumn(c, `${file}: columns[${i}] ${c?.name ?? ''}`));
}

/* DESIGN.md: no schema -> one Variant column `event` with the whole record,
 * and the ingestion time in `_ingest_ts`. */
export function defaultSchema() {
  return [
    { name: 'event', from: '$record', type: { kind: 'variant' } },
    { name: '_ingest_ts', from: '$ingest', type: { kind: 'scalar', canon: { type: 'timestamp_us', utc: true } }, ingestTime: true },
  ];
}

/* ---- paths ------------------------------------------------------------- */

/* `from` -> list of keys: "/a~1b/c" (RFC 6901) or "a.b" (dotted). */
export function pathKeys(from) {
  if (from.startsWith('/')) return from.slice(1).split('/').map(s => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  return from.split('.');
}

export function resolve(obj, keys) {
  let v = obj;
  for (const k of keys) {
    if (!(v instanceof Map) || !v.has(k)) return { present: false };
    v = v.get(k);
  }
  return { present: true, value: v };
}

/* deep copy of a Map tree without the value at `keys` */
function without(obj, keys) {
  if (!(obj instanceof Map) || !obj.has(keys[0])) return obj;
  const o = new Map(obj);
  if (keys.length === 1) o.delete(keys[0]);
  else o.set(keys[0], without(obj.get(keys[0]), keys.slice(1)));
  return o;
}

/* ---- conversion -------------------------------------------------------- */

const DAYS_BEFORE = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
function isLeap(y) { return (y % 4n === 0n && y % 100n !== 0n) || y % 400n === 0n; }
function floorDiv(a, b) { const q = a / b; return (a % b !== 0n && (a < 0n) !== (b < 0n)) ? q - 1n : q; }
/* days since 1970-01-01 of a proleptic Gregorian date (exact, any year) */
export function daysFromCivil(y, m, d) {
  const yy = BigInt(y) - 1n;
  const leapDays = floorDiv(yy, 4n) - floorDiv(yy, 100n) + floorDiv(yy, 400n);
  let days = yy * 365n + leapDays + BigInt(DAYS_BEFORE[m - 1] + d - 1);
  if (m > 2 && isLeap(BigInt(y))) days += 1n;
  return days - 719162n; // days from 0001-01-01 to 1970-01-01
}

const TS_RE = /^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?([Zz]|[+-][0-9]{2}:[0-9]{2})?$/;

/* timestamp text -> count of `unit` since the epoch, or {error} */
export function parseTimestamp(s, unit) {
  const m = TS_RE.exec(s);
  if (!m) return { error: 'not an RFC 3339 timestamp' };
  const [y, mo, d, h, mi, se] = m.slice(1, 7).map(Number);
  const mdays = [31, isLeap(BigInt(y)) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 || se > 59) return { error: 'date/time field out of range' };
  const per = UNIT_PER_S[unit];
  const digits = per.toString().length - 1;
  const frac = m[7] || '';
  if (frac.length > digits && /[1-9]/.test(frac.slice(digits))) return { error: `more precision than ${unit}` };
  let secs = daysFromCivil(y, mo, d) * 86400n + BigInt(h * 3600 + mi * 60 + se);
  if (m[8] && m[8] !== 'Z' && m[8] !== 'z') {
    const sign = m[8][0] === '-' ? -1n : 1n;
    const oh = Number(m[8].slice(1, 3)), om = Number(m[8].slice(4, 6));
    if (oh > 23 || om > 59) return { error: 'offset out of range' };
    secs -= sign * BigInt(oh * 3600 + om * 60);
  }
  return { value: secs * per + BigInt((frac.slice(0, digits) || '0').padEnd(digits, '0')) };
}

/* Expected typed value of `type` for a source value; returns
 * {fits: true, exp} or {fits: false, why}. present=false: key missing. */
export function expectTyped(type, present, v) {
  if (type.kind === 'variant') return { fits: true, exp: present ? v : undefined };
  if (!present || v === null) return { fits: true, exp: null };
  switch (type.kind) {
    case 'list': {
      if (!Array.isArray(v)) return { fits: false, why: 'not an array' };
      const out = [];
      for (let i = 0; i < v.length; i++) {
        const r = expectTyped(type.element, true, v[i]);
        if (!r.fits) return { fits: false, why: `element ${i}: ${r.why}` };
        out.push(r.exp === undefined ? null : r.exp);
      }
      return { fits: true, exp: out };
    }
    case 'struct': {
      if (!(v instanceof Map)) return { fits: false, why: 'not an object' };
      const taken = new Set();
      const o = {};
      for (const f of type.fields) {
        const keys = pathKeys(f.from);
        const r0 = resolve(v, keys);
        taken.add(keys[0]);
        const r = expectTyped(f.type, r0.present, r0.value);
        if (!r.fits) return { fits: false, why: `field ${f.name}: ${r.why}` };
        o[f.name] = r.exp;
      }
      for (const k of v.keys()) if (!taken.has(k)) return { fits: false, why: `key ${JSON.stringify(k)} is not a field` };
      return { fits: true, exp: o };
    }
  }
  const t = type.canon.type;
  if (t === 'bool') return typeof v === 'boolean' ? { fits: true, exp: v } : { fits: false, why: 'not a boolean' };
  if (t === 'string') return typeof v === 'string' ? { fits: true, exp: v } : { fits: false, why: 'not a string' };
  if (t in INT_RANGE) {
    if (!(v instanceof JNum)) return { fits: false, why: 'not a number' };
    const b = v.bigint();
    if (b === null) return { fits: false, why: 'not an integer' };
    const [lo, hi] = INT_RANGE[t];
    if (b < lo || b > hi) return { fits: false, why: `out of ${t} range` };
    return { fits: true, exp: b };
  }
  if (t === 'double' || t === 'float') {
    if (!(v instanceof JNum)) return { fits: false, why: 'not a number' };
    const d = t === 'float' ? Math.fround(Number(v.text)) : Number(v.text);
    if (!Number.isFinite(d)) return { fits: false, why: `out of ${t} range` };
    return { fits: true, exp: d };
  }
  if (t.startsWith('timestamp_')) {
    const unit = type.unit;
    if (typeof v === 'string') {
      const r = parseTimestamp(v, unit);
      return r.error ? { fits: false, why: r.error } : { fits: true, exp: r.value };
    }
    if (v instanceof JNum) {
      // epoch seconds (Zeek's default): exact in the unit or it does not fit
      let [u, s] = [v.u, v.s];
      const scaled = u * UNIT_PER_S[unit];
      const div = 10n ** BigInt(s);
      if (scaled % div !== 0n) return { fits: false, why: `epoch seconds ${v.text} not exact in ${unit}` };
      return { fits: true, exp: scaled / div };
    }
    return { fits: false, why: 'not a string or number' };
  }
  return { fits: false, why: `test cannot convert to ${t}` };
}

/* Everything the file must hold for one source record under `columns`:
 * {cols: {name: expected}, unfit: [text], reject: reason | null}. A record
 * is rejected when a required column is missing or null, or a value does
 * not fit and there is no "*" column to keep it. */
export function expectRecord(columns, rec) {
  const cols = {};
  const star = columns.find(c => c.from === '*');
  let rest = rec;
  const unfit = [];
  let reject = null;
  if (!(rec instanceof Map)) return { cols, unfit, reject: 'record is not a JSON object' };
  for (const c of columns) {
    if (c.from === '*' || c.ingestTime) continue;
    if (c.from === '$record') { cols[c.name] = rec; continue; }
    const keys = pathKeys(c.from);
    const r0 = resolve(rec, keys);
    if (c.required && (!r0.present || (r0.value === null && c.type.kind !== 'variant')))
      reject = reject || `required column ${c.name} (${c.from}) is ${r0.present ? 'null' : 'missing'}`;
    const r = expectTyped(c.type, r0.present, r0.value);
    if (r.fits) {
      cols[c.name] = r.exp;
      if (r0.present) rest = without(rest, keys);
    } else {
      cols[c.name] = null;
      unfit.push(`${c.name} <- ${c.from}: ${r.why}`);
      if (!star) reject = reject || `${c.name} <- ${c.from}: ${r.why}, and no "*" column`;
    }
  }
  if (star) cols[star.name] = rest;
  return { cols, unfit, reject };
}

export { escapePtr };
