// pq.mjs - reading what parqd published, for the daemon tests: the files
// under an output directory, their PAR1 magic, their `parqd.spool` seq
// ranges, and the records of the default schema's Variant column `event`
// in one canonical text form that source NDJSON lines are compared with.
//
// Canonical form: objects with sorted keys, numbers as normalised exact
// decimals ("1.50e1" -> "15", "0.10" -> "0.1"), strings JSON-escaped.
// Source lines are parsed with the exact-number parser of the interop
// tests (logs_json.mjs), never with JSON.parse (which rounds). The "loose"
// form is the same with every number rounded to a double: two records
// equal only loosely differ in number representation alone (issue 7:
// Variant number types).
//
// Records are read with DuckDB as CAST(event AS JSON), in a child process
// (a DuckDB crash must not take the test down with it); when that fails the
// Variant values are read directly (DuckDBVariantValue, as the interop log
// check does) and the failure is reported by the caller.
import { ruleOf } from '../interop/numrule.mjs';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { JNum, VNum, VOther, parseJsonLine, normDec, formatDec } from '../interop/logs_json.mjs';

const require = createRequire(new URL('../interop/package.json', import.meta.url));
const { DuckDBInstance } = require('@duckdb/node-api');
const HERE = path.dirname(fileURLToPath(import.meta.url));

let con = null;
export async function duck() {
  if (!con) con = await (await DuckDBInstance.create(':memory:')).connect();
  return con;
}

export async function query(sql, params) {
  const c = await duck();
  const r = params ? await c.runAndReadAll(sql, params) : await c.runAndReadAll(sql);
  return r.getRowObjectsJson();
}

export const sqlStr = s => `'${String(s).replace(/'/g, "''")}'`;
export const sqlList = files => `[${files.map(sqlStr).join(', ')}]`;

/* Published files under dir (hidden names are temporaries), sorted. */
export function listParquet(dir) {
  const out = [];
  const walk = d => {
    let ents;
    try { ents = fs.readdirSync(d, { withFileTypes: true }); } catch { return; }
    for (const e of ents) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && !e.name.startsWith('.') && e.name.endsWith('.parquet')) out.push(p);
    }
  };
  walk(dir);
  return out.sort();
}

export function tempFiles(dir) {
  const out = [];
  const walk = d => {
    let ents;
    try { ents = fs.readdirSync(d, { withFileTypes: true }); } catch { return; }
    for (const e of ents) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.startsWith('.') && e.name.endsWith('.tmp')) out.push(p);
    }
  };
  walk(dir);
  return out;
}

/* "PAR1" at both ends, and room for a footer length between. */
export function magicOk(file) {
  const st = fs.statSync(file);
  if (st.size < 12) return false;
  const fd = fs.openSync(file, 'r');
  const head = Buffer.alloc(4), tail = Buffer.alloc(4);
  fs.readSync(fd, head, 0, 4, 0);
  fs.readSync(fd, tail, 0, 4, st.size - 4);
  fs.closeSync(fd);
  return head.toString('latin1') === 'PAR1' && tail.toString('latin1') === 'PAR1';
}

/* Per file: rows (DuckDB opening the file on its own) or an error, and
 * its parqd.spool range. */
export async function fileInfo(files) {
  const out = [];
  for (const f of files) {
    const info = { file: f, rows: null, error: null, range: null, rangeText: null };
    try {
      const [r] = await query(`SELECT count(*) AS n FROM read_parquet(${sqlStr(f)}, hive_partitioning = false)`);
      info.rows = Number(r.n);
      const kv = await query(`SELECT decode(key) AS k, decode(value) AS v FROM parquet_kv_metadata(${sqlStr(f)})`);
      const sp = kv.find(x => x.k === 'parqd.spool');
      if (sp) {
        info.rangeText = sp.v;
        const m = /^(\d+)-(\d+)$/.exec(sp.v);
        if (m) info.range = [BigInt(m[1]), BigInt(m[2])];
      }
    } catch (e) {
      info.error = e.message;
    }
    out.push(info);
  }
  return out;
}

/* Checks that the ranges are disjoint and cover [first, ...) without a
 * gap. A gap between files is allowed only for seqs that went to the dead
 * letters (a file's range starts at its first row): up to gapBudget seqs
 * in all. Returns {ok, end, gaps, why}. */
export function checkRanges(infos, first = 1n, gapBudget = 0n) {
  const rs = infos.map(i => i.range ? { f: i.file, a: i.range[0], b: i.range[1] } : null);
  const missing = infos.filter((i, k) => !rs[k]);
  if (missing.length)
    return { ok: false, why: `${missing.length} files without a valid parqd.spool (e.g. ${path.basename(missing[0].file)}: ${JSON.stringify(missing[0].rangeText)})` };
  const sorted = rs.slice().sort((x, y) => (x.a < y.a ? -1 : x.a > y.a ? 1 : 0));
  let next = first, gaps = 0n;
  for (const r of sorted) {
    if (r.b <= r.a) return { ok: false, why: `${path.basename(r.f)}: empty or reversed range ${r.a}-${r.b}` };
    if (r.a < next) return { ok: false, why: `${path.basename(r.f)}: range ${r.a}-${r.b} overlaps the one before (ends at ${next})` };
    if (r.a > next) {
      gaps += r.a - next;
      if (gaps > gapBudget)
        return { ok: false, why: `gap: seqs ${next}..${r.a - 1n} are in no file (next file ${path.basename(r.f)} starts at ${r.a}; ${gapBudget} rejected seqs could explain gaps)` };
    }
    next = r.b;
  }
  return { ok: true, end: next, gaps };
}

/* ---- canonical text ------------------------------------------------------- */

function numCanon(u, s) {
  const [nu, ns] = normDec(u, s);
  return formatDec(nu, ns);
}

function doubleCanon(x) {
  if (!Number.isFinite(x)) return `"<${x}>"`;
  const j = new JNum(String(x)); // shortest round-trip text, maybe with an exponent
  return numCanon(j.u, j.s);
}

function looseNum(text) { return doubleCanon(Number(text)); }

/* Source value (logs_json.mjs parse) or Variant value (VV) -> text. */
export function canon(v, loose = false) {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'string') return JSON.stringify(v);
  if (v instanceof JNum) {
    /* The rule's "lossy" numbers (|x| < 1 with more digits than a double
     * keeps: no exact type readers accept) are stored as the correctly
     * rounded double, as documented; compare them as that double. */
    if (loose || ruleOf(v).kind === 'lossy') return looseNum(v.text);
    return numCanon(v.u, v.s);
  }
  if (v instanceof VNum) {
    if (v.kind === 'int' || v.kind === 'dec') {
      const t = numCanon(v.a, v.scale);
      return loose ? looseNum(t) : t;
    }
    return doubleCanon(v.a);
  }
  if (v instanceof VOther) return `"<${v.desc}>"`;
  if (Array.isArray(v)) return '[' + v.map(x => canon(x, loose)).join(',') + ']';
  if (v instanceof Map) {
    const ks = [...v.keys()].sort();
    return '{' + ks.map(k => JSON.stringify(k) + ':' + canon(v.get(k), loose)).join(',') + '}';
  }
  if (v && v.msg) return `"<unreadable: ${v.msg}>"`;
  return `"<${String(v)}>"`;
}

/* NDJSON files -> [{text, canon, loose}] for every non-blank line. */
export function sourceRecords(files) {
  const out = [];
  for (const f of files) {
    const buf = fs.readFileSync(f);
    let start = 0;
    for (let i = 0; i <= buf.length; i++) {
      if (i === buf.length || buf[i] === 0x0a) {
        if (i > start) {
          const bytes = buf.subarray(start, i);
          const v = parseJsonLine(bytes);
          out.push({ text: bytes.toString('utf8'), canon: canon(v), loose: canon(v, true) });
        }
        start = i + 1;
      }
    }
  }
  return out;
}

/* ---- reading `event` -------------------------------------------------------- */

/* DuckDB 1.5 prints a DECIMAL(p,p) inside CAST(... AS JSON) without its
 * leading zero ({"a":.5}): not JSON. Puts the zero back (outside strings
 * only) and counts the repairs in `fixed.count`. */
export const fixed = { count: 0 };
export function fixDuckJson(t) {
  if (!t.includes('.')) return t;
  let out = '', inStr = false, prev = '';
  for (let i = 0; i < t.length; i++) {
    const c = t[i];
    if (inStr) {
      out += c;
      if (c === '\\') { out += t[++i]; continue; }
      if (c === '"') inStr = false;
      continue;
    }
    if (c === '"') inStr = true;
    else if (c === '.' && (prev === ':' || prev === ',' || prev === '[' || prev === '-')) { out += '0'; fixed.count++; }
    out += c;
    if (c !== ' ') prev = c;
  }
  return out;
}

/* The child: prints CAST(event AS JSON) of every row, one per line. */
async function castDump(listFile) {
  const files = JSON.parse(fs.readFileSync(listFile, 'utf8'));
  const c = await duck();
  const out = fs.openSync(listFile + '.out', 'w');
  for (const f of files) {
    const r = await c.runAndReadAll(`SELECT CAST(event AS JSON)::VARCHAR AS j FROM read_parquet(${sqlStr(f)}, hive_partitioning = false)`);
    for (const row of r.getRows()) fs.writeSync(out, (row[0] === null ? 'null' : row[0]) + '\n');
  }
  fs.closeSync(out);
}

async function variantRead(files) {
  const { READERS } = await import('../interop/logs_readers.mjs');
  const { defaultSchema } = await import('../interop/logs_schema.mjs');
  const cols = defaultSchema().filter(c => c.name === 'event');
  const r = await READERS.duckdb(files, cols);
  return r.columns.event || [];
}

/* Records of `event` in every file: {recs: [{canon, loose, text}], via,
 * castError}. */
export async function readEvents(files, tmpDir) {
  const list = path.join(tmpDir, `cast-${process.pid}-${Date.now()}.json`);
  fs.writeFileSync(list, JSON.stringify(files));
  const r = spawnSync(process.execPath, [path.join(HERE, 'pq.mjs'), '--cast-dump', list],
                      { encoding: 'utf8', maxBuffer: 64 << 20 });
  let castError = null;
  if (r.status === 0) {
    const text = fs.readFileSync(list + '.out', 'utf8');
    fs.rmSync(list, { force: true });
    fs.rmSync(list + '.out', { force: true });
    const lines = text.split('\n');
    lines.pop();
    const recs = lines.map(l => {
      let v;
      try { v = parseJsonLine(Buffer.from(fixDuckJson(l))); } catch (e) { return { text: l, canon: `"<bad JSON from DuckDB: ${e.message}>"`, loose: '' }; }
      return { text: l, canon: canon(v), loose: canon(v, true) };
    });
    const via = 'CAST(event AS JSON)' + (fixed.count ? `; ${fixed.count} numbers printed by DuckDB without their leading zero, repaired` : '');
    return { recs, via };
  }
  castError = r.signal ? `DuckDB died with ${r.signal}` : `exit ${r.status}: ${(r.stderr || '').trim().split('\n').slice(-3).join(' | ')}`;
  fs.rmSync(list, { force: true });
  fs.rmSync(list + '.out', { force: true });
  const vv = await variantRead(files);
  const recs = vv.map(v => ({ text: canon(v), canon: canon(v), loose: canon(v, true) }));
  return { recs, via: 'DuckDB VARIANT values', castError };
}

/* Multiset difference: {missing: [src], extra: [got], looseOnly: n} where
 * looseOnly counts missing/extra pairs equal in the loose form. */
export function compareMultisets(src, got) {
  const count = new Map();
  for (const s of src) count.set(s.canon, (count.get(s.canon) || 0) + 1);
  const extra = [];
  for (const g of got) {
    const n = count.get(g.canon) || 0;
    if (n > 0) count.set(g.canon, n - 1);
    else extra.push(g);
  }
  const missing = [];
  const left = new Map(count);
  for (const s of src) {
    const n = left.get(s.canon) || 0;
    if (n > 0) { missing.push(s); left.set(s.canon, n - 1); }
  }
  const looseCount = new Map();
  for (const m of missing) looseCount.set(m.loose, (looseCount.get(m.loose) || 0) + 1);
  let looseOnly = 0;
  const pairs = [];
  for (const e of extra) {
    const n = looseCount.get(e.loose) || 0;
    if (n > 0) {
      looseCount.set(e.loose, n - 1);
      looseOnly++;
      if (pairs.length < 3) pairs.push([missing.find(m => m.loose === e.loose), e]);
    }
  }
  return { missing, extra, looseOnly, pairs };
}

/* First differing number between two canonical texts, for messages. */
export function numberDiff(a, b) {
  const ta = a.match(/-?\d+(?:\.\d+)?/g) || [], tb = b.match(/-?\d+(?:\.\d+)?/g) || [];
  for (let i = 0; i < Math.max(ta.length, tb.length); i++)
    if (ta[i] !== tb[i]) return `${ta[i]} sent, ${tb[i]} read back`;
  return '';
}

if (process.argv[2] === '--cast-dump') await castDump(process.argv[3]);
