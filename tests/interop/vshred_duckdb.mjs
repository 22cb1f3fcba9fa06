// vshred_duckdb.mjs - reads parqd's shredded Variant files for the
// parquet-testing shredded_variant cases (written by tests/tools/vshred_cases)
// back with DuckDB and compares every row with the expected Variant.
//
//   node tests/interop/vshred_duckdb.mjs DIR
//
// DIR holds case-NNN.parquet and case-NNN.expect.json ({"rows": [{"id",
// "json": canonical JSON of the expected Variant (variant_read.h), "types":
// the same tree with Variant type names}]}). DuckDB's answer is
// `var::JSON`, compared with the canonical JSON semantically, guided by the
// type tree: exact numerics as decimal text, doubles as numbers, floats at
// float precision, timestamps as instants (DuckDB prints "YYYY-MM-DD
// HH:MM:SS.ffffff+00"), binaries as bytes (DuckDB prints \xHH). DuckDB has
// no nanosecond TIMESTAMP WITH TIME ZONE: it reads TIMESTAMP(NANOS, utc)
// as TIMESTAMP_MICROS_TZ, so those values are compared at microseconds
// (truncated toward zero, as DuckDB does) and counted in the summary.
// Prints PASS/FAIL per file, then `N passed, M failed, K skipped`; exit 1
// on any failure.
import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

// ---- JSON with numbers kept as text ------------------------------------

function parseJson(text) {
  let i = 0;
  const ws = () => { while (i < text.length && ' \t\r\n'.includes(text[i])) i++; };
  const fail = (why) => { throw new Error(`JSON at ${i}: ${why} in ${text.slice(0, 80)}`); };
  function value() {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const o = new Map();
      ws();
      if (text[i] === '}') { i++; return o; }
      for (;;) {
        ws();
        const k = str();
        ws();
        if (text[i++] !== ':') fail('expected :');
        o.set(k, value());
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i++] !== '}') fail('expected }');
        return o;
      }
    }
    if (c === '[') {
      i++;
      const a = [];
      ws();
      if (text[i] === ']') { i++; return a; }
      for (;;) {
        a.push(value());
        ws();
        if (text[i] === ',') { i++; continue; }
        if (text[i++] !== ']') fail('expected ]');
        return a;
      }
    }
    if (c === '"') return str();
    for (const [lit, v] of [['true', true], ['false', false], ['null', null]])
      if (text.startsWith(lit, i)) { i += lit.length; return v; }
    const m = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (!m) fail('unexpected character');
    i += m[0].length;
    return { num: m[0] };
  }
  function str() {
    if (text[i] !== '"') fail('expected a string');
    let j = i + 1;
    while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
    const s = JSON.parse(text.slice(i, j + 1));
    i = j + 1;
    return s;
  }
  const v = value();
  ws();
  if (i !== text.length) fail('trailing text');
  return v;
}

// ---- semantic comparison -------------------------------------------------

// Exact decimal text: no '+', no trailing fraction zeros, no "-0".
function normDecimal(s) {
  let [int, frac = ''] = s.replace(/^\+/, '').split('.');
  frac = frac.replace(/0+$/, '');
  let neg = int.startsWith('-');
  int = int.replace(/^-/, '').replace(/^0+(?=\d)/, '');
  if (int === '0' && frac === '') neg = false;
  return (neg ? '-' : '') + int + (frac ? '.' + frac : '');
}

// A timestamp as epoch nanoseconds (BigInt) and whether it carries an offset.
function parseTs(s) {
  const m = /^(-?\d{4,})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}(?::?\d{2})?)?$/.exec(s);
  if (!m) return null;
  const [, y, mo, d, h, mi, se, frac = '', tz] = m;
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(se));
  let off = 0n;
  if (tz && tz !== 'Z') {
    const sign = tz[0] === '-' ? -1n : 1n;
    const hh = BigInt(tz.slice(1, 3)), mm = BigInt(tz.replace(':', '').slice(3, 5) || '0');
    off = sign * (hh * 3600n + mm * 60n) * 1000000000n;
  }
  const ns = BigInt(ms) * 1000000n + BigInt(frac.padEnd(9, '0') || '0') - off;
  return { ns, tz: tz !== undefined };
}

// DuckDB's blob text: printable ASCII as is, everything else \xHH.
function duckBlob(s) {
  const out = [];
  for (let i = 0; i < s.length;) {
    if (s[i] === '\\' && s[i + 1] === 'x') { out.push(parseInt(s.slice(i + 2, i + 4), 16)); i += 4; }
    else out.push(s.charCodeAt(i++));
  }
  return Buffer.from(out);
}

// Returns null when equal, else a description; ctx.micros counts values
// compared at DuckDB's microsecond precision.
function compare(exp, got, type, where, ctx) {
  if (type instanceof Map) {
    if (!(got instanceof Map) || !(exp instanceof Map)) return `${where}: expected an object`;
    const ek = [...exp.keys()].sort(), gk = [...got.keys()].sort();
    if (ek.join('\0') !== gk.join('\0')) return `${where}: keys [${ek}] vs [${gk}]`;
    for (const k of ek) {
      const r = compare(exp.get(k), got.get(k), type.get(k), `${where}.${k}`, ctx);
      if (r) return r;
    }
    return null;
  }
  if (Array.isArray(type)) {
    if (!Array.isArray(got) || got.length !== exp.length) return `${where}: expected ${exp.length} elements`;
    for (let i = 0; i < exp.length; i++) {
      const r = compare(exp[i], got[i], type[i], `${where}[${i}]`, ctx);
      if (r) return r;
    }
    return null;
  }
  const show = (v) => (v && v.num !== undefined ? v.num : JSON.stringify(v));
  const diff = `${where} (${type}): expected ${show(exp)}, got ${show(got)}`;
  switch (type) {
    case 'null': return got === null ? null : diff;
    case 'boolean': return got === exp ? null : diff;
    case 'int8': case 'int16': case 'int32': case 'int64':
    case 'decimal4': case 'decimal8': case 'decimal16':
      return got && got.num !== undefined && normDecimal(got.num) === normDecimal(exp.num) ? null : diff;
    case 'double':
      return got && got.num !== undefined && Number(got.num) === Number(exp.num) ? null : diff;
    case 'float':
      return got && got.num !== undefined && Math.fround(Number(got.num)) === Math.fround(Number(exp.num)) ? null : diff;
    case 'binary':
      return typeof got === 'string' && duckBlob(got).equals(Buffer.from(exp, 'base64')) ? null : diff;
    case 'uuid':
      return typeof got === 'string' && got.toLowerCase() === exp.toLowerCase() ? null : diff;
    case 'timestamptz_us': case 'timestampntz_us': case 'timestampntz_ns': case 'timestamptz_ns': {
      const e = parseTs(exp), g = typeof got === 'string' ? parseTs(got) : null;
      if (!e || !g || e.tz !== g.tz) return diff;
      if (type === 'timestamptz_ns') {
        ctx.micros++;
        return e.ns / 1000n === g.ns / 1000n ? null : diff; // BigInt division truncates
      }
      return e.ns === g.ns ? null : diff;
    }
    default: // string, date, time_us
      return got === exp ? null : diff;
  }
}

// ---- main -------------------------------------------------------------------

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node vshred_duckdb.mjs DIR');
  process.exit(2);
}
const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
try { await con.run("SET TimeZone = 'UTC'"); } catch { /* no ICU: already UTC */ }

let passed = 0, failed = 0, skipped = 0;
const ctx = { micros: 0 };
const files = fs.readdirSync(dir).filter((f) => /^case-\d+\.parquet$/.test(f)).sort();
for (const f of files) {
  const expectPath = path.join(dir, f.replace('.parquet', '.expect.json'));
  if (!fs.existsSync(expectPath)) { console.log(`SKIP ${f}: no expectation file`); skipped++; continue; }
  const expect = JSON.parse(fs.readFileSync(expectPath, 'utf8'));
  let problem = null;
  try {
    const file = path.join(dir, f).replaceAll("'", "''");
    const r = await con.runAndReadAll(
      `SELECT id, var::JSON::VARCHAR AS j FROM read_parquet('${file}') ORDER BY id`);
    const rows = r.getRowObjectsJson();
    if (rows.length !== expect.rows.length) problem = `${rows.length} rows, expected ${expect.rows.length}`;
    for (let i = 0; !problem && i < rows.length; i++) {
      const e = expect.rows[i], g = rows[i];
      if (Number(g.id) !== e.id) problem = `row ${i}: id ${g.id}, expected ${e.id}`;
      else if (e.json === null || g.j === null) {
        if (e.json !== g.j) problem = `row ${i}: expected ${e.json}, got ${g.j}`;
      } else {
        const types = parseJson(JSON.stringify(e.types));
        problem = compare(parseJson(e.json), parseJson(g.j), types, `row ${i}`, ctx);
      }
    }
  } catch (err) {
    problem = `DuckDB: ${String(err.message).split('\n')[0]}`;
  }
  if (problem) { console.log(`FAIL ${f} (${expect.test}): ${problem}`); failed++; }
  else { console.log(`PASS ${f} (${expect.test})`); passed++; }
}
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped` +
  (ctx.micros ? `; ${ctx.micros} timestamptz_ns values compared at microseconds ` +
    '(DuckDB reads TIMESTAMP(NANOS,utc) as TIMESTAMP_MICROS_TZ)' : ''));
process.exit(failed ? 1 : 0);
