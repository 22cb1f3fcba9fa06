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
// Besides the whole value: variant_typeof of the row and, for every path
// inside it (object keys, 1-based array indexes), variant_typeof and
// CAST(variant_extract(...) AS JSON), against the type tree (a decimal's
// scale must be the value's and below its precision: DuckDB crashes on
// scale > precision and prints ".5" at equality). The files are read in a
// child process, so a DuckDB crash fails the file it was on, not the run.
// Prints PASS/FAIL per file, then `N passed, M failed, K skipped; ...`;
// exit 1 on any failure.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
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

// ---- variant_typeof / variant_extract -----------------------------------------

// DuckDB 1.5.6's variant_typeof names for the Variant types of the type
// trees (booleans and decimals are decided by the value).
const DUCK_TYPE = {
  int8: 'INT8', int16: 'INT16', int32: 'INT32', int64: 'INT64', float: 'FLOAT', double: 'DOUBLE',
  date: 'DATE', time_us: 'TIME_MICROS', timestamptz_us: 'TIMESTAMP_MICROS_TZ',
  timestampntz_us: 'TIMESTAMP_MICROS', timestampntz_ns: 'TIMESTAMP_NANOS',
  timestamptz_ns: 'TIMESTAMP_MICROS_TZ', // no nanosecond TIMESTAMP WITH TIME ZONE
  string: 'VARCHAR', uuid: 'UUID', binary: 'BLOB', null: 'VARIANT_NULL',
};

function typeofProblem(type, value, got) {
  if (type instanceof Map) return got.startsWith('OBJECT') ? null : 'expected OBJECT(...)';
  if (Array.isArray(type)) return got.startsWith('ARRAY') ? null : 'expected ARRAY(...)';
  if (type === 'boolean') return got === (value ? 'BOOL_TRUE' : 'BOOL_FALSE') ? null : `expected BOOL_${value ? 'TRUE' : 'FALSE'}`;
  if (/^decimal/.test(type)) {
    const m = /^DECIMAL\((\d+), (\d+)\)$/.exec(got);
    const scale = (value.num.split('.')[1] || '').length;
    if (!m || Number(m[2]) !== scale) return `expected DECIMAL(p, ${scale})`;
    if (Number(m[2]) > 0 && Number(m[2]) >= Number(m[1])) return 'scale not below precision: DuckDB prints ".5" or crashes';
    return null;
  }
  return got === DUCK_TYPE[type] ? null : `expected ${DUCK_TYPE[type] || '?'}`;
}

// Every path (object keys, 1-based array indexes) of an expected value,
// with its value and type.
function pathsOf(value, type, prefix, out) {
  if (prefix.length) out.push({ path: prefix, value, type });
  if (type instanceof Map) for (const [k, t] of type) pathsOf(value.get(k), t, [...prefix, k], out);
  else if (Array.isArray(type)) type.forEach((t, i) => pathsOf(value[i], t, [...prefix, i + 1], out));
  return out;
}

// ---- one file -------------------------------------------------------------

async function checkFile(con, dir, f, ctx) {
  const expectPath = path.join(dir, f.replace('.parquet', '.expect.json'));
  const expect = JSON.parse(fs.readFileSync(expectPath, 'utf8'));
  const file = path.join(dir, f).replaceAll("'", "''");
  const r = await con.runAndReadAll(
    `SELECT id, var::JSON::VARCHAR AS j, variant_typeof(var) AS t FROM read_parquet('${file}') ORDER BY id`);
  const rows = r.getRowObjectsJson();
  if (rows.length !== expect.rows.length) return { test: expect.test, problem: `${rows.length} rows, expected ${expect.rows.length}` };
  for (let i = 0; i < rows.length; i++) {
    const e = expect.rows[i], g = rows[i];
    if (Number(g.id) !== e.id) return { test: expect.test, problem: `row ${i}: id ${g.id}, expected ${e.id}` };
    if (e.json === null || g.j === null) {
      if (e.json !== g.j) return { test: expect.test, problem: `row ${i}: expected ${e.json}, got ${g.j}` };
      continue;
    }
    const types = parseJson(JSON.stringify(e.types));
    const want = parseJson(e.json);
    let problem = compare(want, parseJson(g.j), types, `row ${i}`, ctx);
    if (problem) return { test: expect.test, problem };
    const tp = typeofProblem(types, want, g.t);
    if (tp) return { test: expect.test, problem: `row ${i}: variant_typeof ${g.t}: ${tp}` };
    ctx.typed++;
    // every path inside: variant_extract, its type and its JSON
    const paths = pathsOf(want, types, [], []);
    if (!paths.length) continue;
    const exprs = paths.map(({ path: p }) => {
      let x = 'var';
      for (const k of p) x = `variant_extract(${x}, ${typeof k === 'string' ? `'${k.replaceAll("'", "''")}'` : `${k}::UINTEGER`})`;
      return `variant_typeof(${x}), ${x}::JSON::VARCHAR`;
    });
    const x = await con.runAndReadAll(
      `SELECT ${exprs.join(', ')} FROM read_parquet('${file}') WHERE id = ${Number(e.id)}`);
    const cells = x.getRows()[0];
    for (let k = 0; k < paths.length; k++) {
      const { path: p, value, type } = paths[k];
      const where = `row ${i} ${p.join('/')}`;
      const t = String(cells[2 * k]);
      const tp2 = typeofProblem(type, value, t);
      if (tp2) return { test: expect.test, problem: `${where}: variant_typeof(variant_extract) ${t}: ${tp2}` };
      problem = compare(value, parseJson(String(cells[2 * k + 1])), type, where, ctx);
      if (problem) return { test: expect.test, problem: `${problem} (variant_extract)` };
      ctx.extracted++;
    }
  }
  return { test: expect.test, problem: null };
}

// ---- main: files checked in a child process; a crash fails the file -----

const WORKER = process.argv[2] === '--worker';
const dir = WORKER ? process.argv[3] : process.argv[2];
if (!dir) {
  console.error('usage: node vshred_duckdb.mjs DIR');
  process.exit(2);
}

if (WORKER) {
  const inst = await DuckDBInstance.create(':memory:');
  const con = await inst.connect();
  try { await con.run("SET TimeZone = 'UTC'"); } catch { /* no ICU: already UTC */ }
  for (const f of process.argv[4].split(',')) {
    process.stdout.write(JSON.stringify({ start: f }) + '\n');
    const ctx = { micros: 0, typed: 0, extracted: 0 };
    let res;
    try { res = await checkFile(con, dir, f, ctx); } catch (err) {
      res = { test: '?', problem: `DuckDB: ${String(err.message).split('\n')[0]}` };
    }
    process.stdout.write(JSON.stringify({ file: f, ...res, ...ctx }) + '\n');
  }
  await new Promise((res) => process.stdout.write('', res));
  process.exit(0);
}

const SELF = fileURLToPath(import.meta.url);
const files = fs.readdirSync(dir).filter((f) => /^case-\d+\.parquet$/.test(f)).sort();
const results = new Map();
let pending = files.filter((f) => fs.existsSync(path.join(dir, f.replace('.parquet', '.expect.json'))));
while (pending.length) {
  let current = null;
  const out = spawnSync(process.execPath, [SELF, '--worker', dir, pending.join(',')],
    { encoding: 'utf8', maxBuffer: 1 << 28 });
  for (const line of out.stdout.split('\n')) {
    if (!line) continue;
    const o = JSON.parse(line);
    if (o.start) current = o.start;
    else { results.set(o.file, o); current = null; }
  }
  const rest = pending.filter((f) => !results.has(f));
  if (rest.length) {
    const victim = current || rest[0];
    const tail = (out.stderr || '').trim().split('\n').slice(-1)[0] || '';
    results.set(victim, { test: '?', problem: `DuckDB process died (${out.signal || 'exit ' + out.status})${tail ? ': ' + tail : ''}` });
  }
  pending = rest.filter((f) => f !== (current || rest[0]));
}

let passed = 0, failed = 0, skipped = 0, micros = 0, typed = 0, extracted = 0;
for (const f of files) {
  const r = results.get(f);
  if (!r) { console.log(`SKIP ${f}: no expectation file`); skipped++; continue; }
  micros += r.micros || 0; typed += r.typed || 0; extracted += r.extracted || 0;
  if (r.problem) { console.log(`FAIL ${f} (${r.test}): ${r.problem}`); failed++; }
  else { console.log(`PASS ${f} (${r.test})`); passed++; }
}
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped; ${typed} rows and ${extracted} ` +
  'paths inside them through variant_typeof / variant_extract' +
  (micros ? `; ${micros} timestamptz_ns values compared at microseconds ` +
    '(DuckDB reads TIMESTAMP(NANOS,utc) as TIMESTAMP_MICROS_TZ)' : ''));
process.exit(failed ? 1 : 0);
