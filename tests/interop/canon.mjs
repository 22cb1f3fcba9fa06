// canon.mjs - column types and canonical values of the interop expectation
// format (README.md, "Expectation files"), and their exact comparison.
//
// Every value goes through one internal form per column type:
//   integers, date, time, timestamp, int96  -> BigInt (in the column's unit)
//   bool -> boolean; float/double/float16 -> number
//   decimal -> BigInt unscaled (scale from the type)
//   string/enum/json/uuid -> string; binary/fixed/bson/geometry/geography -> lowercase hex
//   interval -> {months, days, millis} numbers; list -> array; map -> array of [k, v];
//   struct -> object; null -> null.
// Readers convert what they return into this form (reader_*.mjs); a value a
// reader returns that has no such form becomes a Mismatch, which never equals
// anything and prints as its description.

export class Mismatch {
  constructor(desc) { this.desc = desc; }
}

const INT_TYPES = {
  int8: [8, true], int16: [16, true], int32: [32, true], int64: [64, true],
  uint8: [8, false], uint16: [16, false], uint32: [32, false], uint64: [64, false],
};
const TIME_UNITS = { time_ms: 'ms', time_us: 'us', time_ns: 'ns', timestamp_ms: 'ms', timestamp_us: 'us', timestamp_ns: 'ns' };
const BYTES_TYPES = new Set(['binary', 'fixed', 'bson', 'geometry', 'geography']);
const STRING_TYPES = new Set(['string', 'enum', 'json']);
const SCALAR_TYPES = new Set([
  'bool', ...Object.keys(INT_TYPES), 'float', 'double', 'float16', 'decimal',
  'string', 'enum', 'json', 'uuid', ...BYTES_TYPES, 'date', ...Object.keys(TIME_UNITS),
  'int96', 'interval', 'unknown',
]);

export function isInt(t) { return t.type in INT_TYPES; }
export function intInfo(t) { return INT_TYPES[t.type]; }
export function isIntLike(t) {
  return t.type in INT_TYPES || t.type === 'date' || t.type in TIME_UNITS || t.type === 'int96';
}
export function unitOf(t) { return t.type === 'int96' ? 'ns' : TIME_UNITS[t.type]; }
export function isBytes(t) { return BYTES_TYPES.has(t.type); }
export function isStringy(t) { return STRING_TYPES.has(t.type); }
export function isFloat(t) { return t.type === 'float' || t.type === 'double' || t.type === 'float16'; }

/* Validates a column/field type description from an expectation file and
 * returns it with nested types validated. Throws with the path on error. */
export function parseType(spec, where) {
  if (!spec || typeof spec !== 'object') throw new Error(`${where}: type must be an object`);
  const t = { ...spec };
  if (SCALAR_TYPES.has(t.type)) {
    if (t.type === 'decimal' && !(Number.isInteger(t.scale) && Number.isInteger(t.precision)))
      throw new Error(`${where}: decimal needs integer "precision" and "scale"`);
    return t;
  }
  if (t.type === 'list') {
    t.element = parseType(spec.element, `${where}.element`);
  } else if (t.type === 'map') {
    t.key = parseType(spec.key, `${where}.key`);
    t.value = parseType(spec.value, `${where}.value`);
  } else if (t.type === 'struct') {
    if (!Array.isArray(spec.fields) || spec.fields.length === 0)
      throw new Error(`${where}: struct needs a non-empty "fields" array`);
    t.fields = spec.fields.map((f, i) => {
      if (typeof f.name !== 'string') throw new Error(`${where}.fields[${i}]: field needs a "name"`);
      return parseType(f, `${where}.${f.name}`);
    });
  } else {
    throw new Error(`${where}: unknown type ${JSON.stringify(spec.type)}`);
  }
  return t;
}

/* Type features, for the known-limitations table: "type:decimal", ... */
export function typeFeatures(t, out = new Set()) {
  out.add(`type:${t.type}`);
  if ((t.type === 'timestamp_ns' || t.type === 'time_ns') && t.utc) out.add(`type:${t.type}_utc`);
  if (t.type === 'decimal') out.add(`type:decimal_${t.physical || 'any'}`);
  if (t.element) typeFeatures(t.element, out);
  if (t.key) { typeFeatures(t.key, out); typeFeatures(t.value, out); }
  if (t.fields) for (const f of t.fields) typeFeatures(f, out);
  return out;
}

function parseFloatish(v, where) {
  if (typeof v === 'number') return v;
  if (v === 'NaN') return NaN;
  if (v === 'Infinity') return Infinity;
  if (v === '-Infinity') return -Infinity;
  throw new Error(`${where}: bad float ${JSON.stringify(v)}`);
}

function parseBigInt(v, where) {
  if (typeof v === 'string' && /^-?[0-9]+$/.test(v)) return BigInt(v);
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  throw new Error(`${where}: bad integer ${JSON.stringify(v)} (use a decimal string)`);
}

/* "-12.34" with scale 2 -> -1234n. Fewer fraction digits than the scale are
 * padded; more is an error (the value would not be representable). */
export function parseDecimal(s, scale, where) {
  if (typeof s !== 'string') s = String(s);
  const m = /^(-?)([0-9]+)(?:\.([0-9]*))?$/.exec(s);
  if (!m) throw new Error(`${where}: bad decimal ${JSON.stringify(s)}`);
  const frac = m[3] || '';
  if (frac.length > scale) throw new Error(`${where}: decimal ${s} has more than ${scale} fraction digits`);
  const u = BigInt(m[2] + frac.padEnd(scale, '0'));
  return m[1] ? -u : u;
}

export function formatDecimal(u, scale) {
  const neg = u < 0n;
  let d = (neg ? -u : u).toString();
  if (scale > 0) {
    d = d.padStart(scale + 1, '0');
    d = d.slice(0, d.length - scale) + '.' + d.slice(d.length - scale);
  }
  return (neg ? '-' : '') + d;
}

const HEX_RE = /^([0-9a-f]{2})*$/;

/* Expectation JSON value -> internal form. */
export function expectedValue(t, v, where) {
  if (v === null) return null;
  if (t.type === 'unknown') throw new Error(`${where}: an UNKNOWN column holds only null`);
  if (isIntLike(t)) return parseBigInt(v, where);
  switch (t.type) {
    case 'bool':
      if (typeof v !== 'boolean') throw new Error(`${where}: bad bool`);
      return v;
    case 'float': return Math.fround(parseFloatish(v, where));
    case 'double': case 'float16': return parseFloatish(v, where);
    case 'decimal': return parseDecimal(v, t.scale, where);
    case 'string': case 'enum': case 'json':
      if (typeof v !== 'string') throw new Error(`${where}: bad string`);
      return v;
    case 'uuid':
      if (typeof v !== 'string' || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(v))
        throw new Error(`${where}: bad uuid ${JSON.stringify(v)} (canonical lowercase)`);
      return v;
    case 'interval':
      for (const k of ['months', 'days', 'millis'])
        if (!Number.isInteger(v[k]) || v[k] < 0 || v[k] > 0xffffffff) throw new Error(`${where}: bad interval.${k}`);
      return { months: v.months, days: v.days, millis: v.millis };
    case 'list':
      if (!Array.isArray(v)) throw new Error(`${where}: list value must be an array`);
      return v.map((e, i) => expectedValue(t.element, e, `${where}[${i}]`));
    case 'map':
      if (!Array.isArray(v)) throw new Error(`${where}: map value must be an array of [key, value]`);
      return v.map((kv, i) => {
        if (!Array.isArray(kv) || kv.length !== 2) throw new Error(`${where}[${i}]: map entry must be [key, value]`);
        if (kv[0] === null) throw new Error(`${where}[${i}]: map key is null`);
        return [expectedValue(t.key, kv[0], `${where}{key ${i}}`), expectedValue(t.value, kv[1], `${where}{value ${i}}`)];
      });
    case 'struct': {
      if (typeof v !== 'object' || Array.isArray(v)) throw new Error(`${where}: struct value must be an object`);
      const o = {};
      for (const f of t.fields) {
        if (!(f.name in v)) throw new Error(`${where}: struct value lacks field ${f.name}`);
        o[f.name] = expectedValue(f, v[f.name], `${where}.${f.name}`);
      }
      return o;
    }
  }
  if (isBytes(t)) {
    if (!v || typeof v.hex !== 'string' || !HEX_RE.test(v.hex)) throw new Error(`${where}: bytes must be {"hex": "..."} lowercase`);
    return v.hex;
  }
  throw new Error(`${where}: no canonical form for ${t.type}`);
}

/* Internal value -> short display text. */
export function show(t, v) {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  if (v instanceof Mismatch) return v.desc;
  if (t.type === 'decimal' && typeof v === 'bigint') return JSON.stringify(formatDecimal(v, t.scale));
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Object.is(v, -0) ? '-0' : String(v);
  if (isBytes(t) && typeof v === 'string') return `{hex:${v.length > 80 ? v.slice(0, 80) + '...' : v}}`;
  if (typeof v === 'string') return JSON.stringify(v.length > 120 ? v.slice(0, 120) + '...' : v);
  if (t.type === 'list' && Array.isArray(v)) return '[' + v.map(e => show(t.element, e)).join(',') + ']';
  if (t.type === 'map' && Array.isArray(v))
    return '{' + v.map(kv => Array.isArray(kv) ? `${show(t.key, kv[0])}:${show(t.value, kv[1])}` : String(kv)).join(',') + '}';
  if (t.type === 'struct' && typeof v === 'object')
    return '{' + t.fields.map(f => `${f.name}:${show(f, v[f.name])}`).join(',') + '}';
  if (t.type === 'interval' && typeof v === 'object') return `{months:${v.months},days:${v.days},millis:${v.millis}}`;
  try { return JSON.stringify(v, (k, x) => typeof x === 'bigint' ? x.toString() : x); } catch { return String(v); }
}

/* Exact comparison. Returns null when equal, else {path, exp, got} of the
 * first difference. opts.negZero: the reader preserves -0.0, so -0 != +0. */
export function compare(t, exp, got, path, opts) {
  const diff = () => ({ path, exp: show(t, exp), got: show(t, got) });
  if (got instanceof Mismatch) return diff();
  if (exp === null || got === null) return exp === got ? null : diff();
  if (isFloat(t)) {
    if (typeof got !== 'number') return diff();
    if (Number.isNaN(exp)) return Number.isNaN(got) ? null : diff();
    if (opts.negZero) return Object.is(exp, got) ? null : diff();
    return exp === got ? null : diff();
  }
  switch (t.type) {
    case 'list': {
      if (!Array.isArray(got)) return diff();
      if (got.length !== exp.length) return { path, exp: `${exp.length} elements ${show(t, exp)}`, got: `${got.length} elements ${show(t, got)}` };
      for (let i = 0; i < exp.length; i++) {
        const d = compare(t.element, exp[i], got[i], `${path}[${i}]`, opts);
        if (d) return d;
      }
      return null;
    }
    case 'map': {
      if (!Array.isArray(got)) return diff();
      if (got.length !== exp.length) return { path, exp: `${exp.length} entries ${show(t, exp)}`, got: `${got.length} entries ${show(t, got)}` };
      for (let i = 0; i < exp.length; i++) {
        if (!Array.isArray(got[i])) return diff();
        const d = compare(t.key, exp[i][0], got[i][0], `${path}{key ${i}}`, opts) ||
          compare(t.value, exp[i][1], got[i][1], `${path}{value ${i}}`, opts);
        if (d) return d;
      }
      return null;
    }
    case 'struct': {
      if (typeof got !== 'object' || Array.isArray(got)) return diff();
      for (const f of t.fields) {
        if (!(f.name in got)) return { path: `${path}.${f.name}`, exp: show(f, exp[f.name]), got: '(field missing)' };
        const d = compare(f, exp[f.name], got[f.name], `${path}.${f.name}`, opts);
        if (d) return d;
      }
      return null;
    }
    case 'interval':
      if (typeof got !== 'object' || got.months !== exp.months || got.days !== exp.days || got.millis !== exp.millis) return diff();
      return null;
  }
  return exp === got && typeof exp === typeof got ? null : diff();
}

/* Applies fn(type, value) -> value to every value of type `match` inside a
 * (possibly nested) internal value: used for lossy reader comparisons. */
export function mapValues(t, v, match, fn) {
  if (v === null || v instanceof Mismatch) return v;
  if (match(t)) return fn(t, v);
  if (t.type === 'list' && Array.isArray(v)) return v.map(e => mapValues(t.element, e, match, fn));
  if (t.type === 'map' && Array.isArray(v)) return v.map(([k, x]) => [mapValues(t.key, k, match, fn), mapValues(t.value, x, match, fn)]);
  if (t.type === 'struct' && typeof v === 'object') {
    const o = {};
    for (const f of t.fields) o[f.name] = mapValues(f, v[f.name], match, fn);
    return o;
  }
  return v;
}

const UNIT_SCALE = { s: 1n, ms: 1000n, us: 1000000n, ns: 1000000000n };

/* Converts an integer count of `from` units to the column's unit `to`;
 * conversions to a coarser unit must be exact, else a Mismatch. */
export function convertUnit(v, from, to) {
  const f = UNIT_SCALE[from], g = UNIT_SCALE[to];
  if (f === g) return v;
  if (g > f) return v * (g / f);
  const d = f / g;
  if (v % d !== 0n) return new Mismatch(`${v} ${from} (not a whole number of ${to})`);
  return v / d;
}

export function bytesToHex(b) {
  let s = '';
  for (let i = 0; i < b.length; i++) s += (b[i] < 16 ? '0' : '') + b[i].toString(16);
  return s;
}

const utf8Fatal = new TextDecoder('utf-8', { fatal: true });
export function decodeUtf8(b) {
  try { return utf8Fatal.decode(b); } catch { return new Mismatch(`invalid UTF-8 bytes {hex:${bytesToHex(b)}}`); }
}

/* IEEE half (little-endian 2 bytes or 16-bit pattern) -> number, exact. */
export function halfToNumber(bits) {
  const sign = bits & 0x8000 ? -1 : 1;
  const exp = (bits >> 10) & 0x1f, frac = bits & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 0x1f) return frac ? NaN : sign * Infinity;
  return sign * (1024 + frac) * 2 ** (exp - 25);
}

/* 16 bytes -> canonical uuid text. */
export function bytesToUuid(b) {
  const h = bytesToHex(b);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/* Big-endian two's complement bytes -> BigInt. */
export function beTwosToBigInt(b) {
  if (b.length === 0) return 0n;
  let v = 0n;
  for (const x of b) v = (v << 8n) | BigInt(x);
  if (b[0] & 0x80) v -= 1n << BigInt(8 * b.length);
  return v;
}

/* Reads an expectation file's JSON (already parsed) into {columns, rows, skip, features}. */
export function loadExpectation(json, where) {
  if (!json || !Array.isArray(json.columns) || !Array.isArray(json.rows))
    throw new Error(`${where}: needs "columns" and "rows" arrays`);
  const columns = json.columns.map((c, i) => {
    if (typeof c.name !== 'string') throw new Error(`${where}: columns[${i}] needs a "name"`);
    return parseType(c, `${where}: column ${c.name}`);
  });
  const rows = json.rows.map((r, i) => {
    if (!Array.isArray(r) || r.length !== columns.length)
      throw new Error(`${where}: rows[${i}] must be an array of ${columns.length} values`);
    return r.map((v, j) => expectedValue(columns[j], v, `${where}: row ${i} column ${columns[j].name}`));
  });
  const skip = json.skip || {};
  const features = new Set(json.features || []);
  for (const c of columns) typeFeatures(c, features);
  return { columns, rows, skip, features, note: json.note };
}
