// logs_duckjson.mjs - the `duckdb-json` check of the log interop test
// (logs.mjs): every Variant in a parqd file read through DuckDB's own
// Variant functions, the way a user queries it, and compared with the
// source JSON:
//   CAST(v AS JSON)   for every Variant column (top level, inside structs,
//                     inside lists via list_transform, element by element),
//                     every row: the text
//                     must parse as JSON (numbers kept as text) and equal
//                     the source value, numbers by exact decimal value as
//                     numrule.mjs says (logs_json.mjs compareJV);
//   variant_extract   for every scalar path of the source values (object
//   variant_typeof    keys, 1-based array indexes) under each top-level or
//                     struct Variant: the type must be the one the number
//                     rule gives (INT8..INT64 narrowest, DECIMAL(p, s) with
//                     s < p and s the text's scale, DOUBLE; a shredded
//                     path may report its typed_value type), VARCHAR,
//                     BOOL_TRUE/BOOL_FALSE or VARIANT_NULL, and CAST(... AS JSON) of
//                     the extracted value must equal the source again.
// DuckDB 1.5.6 crashes (SIGFPE) on a Variant decimal with scale above its
// precision and prints one with scale = precision as ".5": logs.mjs runs
// this in a child process, so a crash fails the case instead of the run.
import { DuckDBInstance, DuckDBListValue } from '@duckdb/node-api';
import { JNum, compareJV, parseJsonText, showJ, shredElement, shredField, shredIsExact } from './logs_json.mjs';
import { ruleOf } from './numrule.mjs';

const BATCH = 40;          /* paths per query (two expressions each) */

let con = null;
async function connect() {
  if (!con) con = await (await DuckDBInstance.create(':memory:')).connect();
  return con;
}

const q = (name) => `"${name.replaceAll('"', '""')}"`;
const lit = (s) => `'${s.replaceAll("'", "''")}'`;

/* Variant locations of the schema: {label, sql(base), exp(lineCols), shred,
 * inList}. Lists use list_transform, so their Variant comes back as one
 * JSON array per row. */
function variantLocations(columns) {
  const out = [];
  const walk = (type, label, sql, get, inList) => {
    if (type.kind === 'variant') {
      out.push({ label, shred: type.shred, auto: type.auto, inList, sql, get });
    } else if (type.kind === 'struct') {
      for (const f of type.fields)
        walk(f.type, `${label}.${f.name}`, `struct_extract(${sql}, ${lit(f.name)})`,
          (v) => { const s = get(v); return s === null || s === undefined ? undefined : s[f.name]; }, inList);
    } else if (type.kind === 'list' && !inList) {
      const el = type.element;
      if (el.kind !== 'variant') return; // lists of structs with Variants: not in the schemas
      out.push({
        label: `${label}[]`, shred: el.shred, inList: true,
        // one JSON text per element: to_json of the list would re-parse
        // the elements and round long decimals to doubles
        sql: `list_transform(${sql}, x -> CAST(x AS JSON)::VARCHAR)`,
        get: (v) => { const a = get(v); return a === null || a === undefined ? undefined : a; },
      });
    }
  };
  for (const c of columns) {
    if (c.ingestTime) continue;
    walk(c.type, c.name, q(c.name), (cols) => cols[c.name], false);
  }
  return out;
}

async function queryRows(files, exprs) {
  const db = await connect();
  const rows = [];
  for (const f of files) {
    const r = await db.runAndReadAll(`SELECT ${exprs.map((e, i) => `${e} AS c${i}`).join(', ')} FROM read_parquet(${lit(f)})`);
    const conv = (v) => v === null || v === undefined ? null
      : v instanceof DuckDBListValue ? v.items.map(conv) : String(v);
    for (const row of r.getRows()) rows.push(row.map(conv));
  }
  return rows;
}

/* Scalar paths of a JSON value: arrays of keys (string) / indexes (number). */
function scalarPaths(v, prefix, out) {
  if (v instanceof Map) {
    for (const [k, x] of v) scalarPaths(x, [...prefix, k], out);
  } else if (Array.isArray(v)) {
    v.forEach((x, i) => scalarPaths(x, [...prefix, i], out));
  } else if (prefix.length) {
    out.set(JSON.stringify(prefix), prefix);
  }
}

function at(v, path) {
  for (const k of path) {
    if (typeof k === 'string') { if (!(v instanceof Map) || !v.has(k)) return undefined; v = v.get(k); }
    else { if (!Array.isArray(v) || k >= v.length) return undefined; v = v[k]; }
  }
  return v;
}

function shredAt(sh, path) {
  for (const k of path) sh = typeof k === 'string' ? shredField(sh, k) : shredElement(sh);
  return sh;
}

/* DuckDB's name for a shred type string, or null. */
function duckTypeOfShred(sh) {
  if (typeof sh !== 'string') return null;
  const t = sh.trim();
  const m = /^int(8|16|32|64)$/.exec(t);
  if (m) return `INT${m[1]}`;
  const d = /^decimal\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)$/.exec(t);
  if (d) return `DECIMAL(${d[1]}, ${d[2]})`;
  return { double: 'DOUBLE', float: 'FLOAT', string: 'VARCHAR', bool: 'BOOLEAN' }[t] || null;
}

/* Is `typ` (variant_typeof) right for the source value v? */
function typeOk(v, typ, sh, auto) {
  if (v === undefined || v === null) return typ === 'VARIANT_NULL' ? null : 'expected VARIANT_NULL';
  if (typeof v === 'boolean') {        /* Variant true/false are types of their own */
    const want = v ? 'BOOL_TRUE' : 'BOOL_FALSE';
    return typ === want || typ === 'BOOLEAN' ? null : `expected ${want}`;
  }
  if (typeof v === 'string') return typ === 'VARCHAR' ? null : 'expected VARCHAR';
  if (v instanceof Map) return typ.startsWith('OBJECT') ? null : 'expected OBJECT';
  if (Array.isArray(v)) return typ.startsWith('ARRAY') ? null : 'expected ARRAY';
  const r = ruleOf(v);
  const dm = /^DECIMAL\((\d+), (\d+)\)$/.exec(typ);
  if (dm && Number(dm[2]) >= Number(dm[1]) && Number(dm[2]) > 0)
    return `scale not below precision: readers print it as ".5" or crash`;
  const shredType = shredIsExact(sh) || (typeof sh === 'string' && sh.trim() === 'double') ? duckTypeOfShred(sh) : null;
  if (shredType && typ === shredType) return null; // stored in the typed_value column
  /* automatic shredding widens integers (VariantShredding.md allows it) */
  const wider = (t) => /^INT(8|16|32|64)$/.test(t) && Number(t.slice(3)) >= Number(r.intType.slice(3));
  if (r.kind === 'int' && auto && wider(typ)) return null;
  if (r.kind === 'int') return typ === r.intType ? null : `expected ${r.intType} (narrowest)`;
  if (r.kind === 'dec') return dm && Number(dm[2]) === r.s ? null : `expected DECIMAL(p, ${r.s})`;
  return typ === 'DOUBLE' ? null : 'expected DOUBLE';
}

/* Runs the check for one case; returns {status, msg}. */
export async function checkDuckJson(files, exp, star) {
  const locs = variantLocations(exp.columns);
  if (!locs.length) return { status: 'PASS', msg: 'no Variant columns' };
  const stats = {};
  let values = 0, extracted = 0, typed = 0;
  const notes = [];
  for (const loc of locs) {
    // 1. CAST(v AS JSON), whole values
    // (IS NULL too: DuckDB 1.5.6 casts a SQL NULL Variant taken out of a
    // struct to the JSON text null, which would hide a missing value)
    const rows = await queryRows(files, [loc.inList ? loc.sql : `CAST(${loc.sql} AS JSON)`,
      `(${loc.sql}) IS NULL`]);
    if (rows.length !== exp.kept.length) return { status: 'FAIL', msg: `${loc.label}: ${rows.length} rows, expected ${exp.kept.length}` };
    for (let r = 0; r < rows.length; r++) {
      const want = loc.get(exp.kept[r].cols);
      const cell = rows[r][1] === 'true' ? null : rows[r][0];
      const text = Array.isArray(cell) ? `[${cell.map(x => x ?? 'null').join(',')}]` : cell;
      const where = `row ${r} (line ${exp.kept[r].lineno}) ${loc.label}`;
      if (text === null) {
        if (want === undefined || want === null) continue; // top-level null: SQL NULL in DuckDB
        if (loc.label === star && want instanceof Map && want.size === 0) continue;
        return { status: 'FAIL', msg: `${where}: expected ${showJ(want)}, got SQL NULL` };
      }
      let got;
      try { got = parseJsonText(text); } catch (e) {
        return { status: 'FAIL', msg: `${where}: CAST(... AS JSON) is not JSON (${e.message}): ${text.slice(0, 200)}` };
      }
      if (want === undefined) return { status: 'FAIL', msg: `${where}: expected SQL NULL, got ${text.slice(0, 120)}` };
      const d = loc.inList
        ? (Array.isArray(want) && Array.isArray(got) && want.length === got.length
          ? want.map((w, i) => compareJV(w, got[i], `/${i}`, { shred: loc.shred, stats, col: loc.label })).find(Boolean) || null
          : { path: '/', exp: showJ(want), got: text.slice(0, 120) })
        : compareJV(want, got, '', { shred: loc.shred, stats, col: loc.label });
      if (d) return { status: 'FAIL', msg: `${where}${d.path === '/' ? '' : d.path}: expected ${d.exp}, got ${d.got} (CAST AS JSON)` };
      values++;
    }
    if (loc.inList) { notes.push(`${loc.label}: variant_extract not run inside lists`); continue; }
    // 2. variant_extract + variant_typeof on every scalar path
    const paths = new Map();
    for (const l of exp.kept) scalarPaths(loc.get(l.cols), [], paths);
    const list = [...paths.values()];
    for (let b = 0; b < list.length; b += BATCH) {
      const batch = list.slice(b, b + BATCH);
      const exprs = [];
      for (const p of batch) {
        let x = loc.sql;
        for (const k of p) x = `variant_extract(${x}, ${typeof k === 'string' ? lit(k) : `${k + 1}::UINTEGER`})`;
        exprs.push(`variant_typeof(${x})`, `CAST(${x} AS JSON)`);
      }
      const res = await queryRows(files, exprs);
      let fail = null;
      for (let r = 0; r < res.length; r++) {
        const root = loc.get(exp.kept[r].cols);
        batch.forEach((p, i) => {
          if (fail) return;
          const typ = res[r][2 * i], text = res[r][2 * i + 1];
          const want = root === undefined ? undefined : at(root, p);
          const where = `row ${r} (line ${exp.kept[r].lineno}) ${loc.label}/${p.join('/')}`;
          if (typ === null) { // the whole Variant is SQL NULL
            if (root === undefined || root === null || (root instanceof Map && root.size === 0)) return;
            fail = `${where}: variant_typeof is NULL, expected ${showJ(want)}`;
            return;
          }
          const sh = shredAt(loc.shred, p);
          const why = typeOk(want, typ, sh, loc.auto);
          if (why) { fail = `${where}: variant_typeof ${typ} for ${showJ(want)}: ${why}`; return; }
          if (want === undefined) return;
          let got;
          try { got = parseJsonText(text); } catch (e) { fail = `${where}: extracted value is not JSON: ${text}`; return; }
          const d = compareJV(want, got, '', { shred: sh });
          if (d) { fail = `${where}${d.path === '/' ? '' : d.path}: expected ${d.exp}, got ${d.got} (variant_extract)`; return; }
          extracted++;
          if (want instanceof JNum) typed++;
        });
        if (fail) return { status: 'FAIL', msg: fail };
      }
    }
  }
  const n = stats.numbers || 0;
  const lossy = stats.lossy ? `, ${n - stats.lossy} exact, ${stats.lossy} the nearest double by rule 4 (e.g. ${stats.lossyList.join(', ')})` : ', all exact';
  return {
    status: 'PASS',
    msg: [`${values} Variant values through CAST(v AS JSON) (${n} numbers${n ? lossy : ''}); ` +
      `${extracted} scalars through variant_extract + variant_typeof (${typed} numbers of the rule's type)`, ...notes].join('; '),
  };
}
