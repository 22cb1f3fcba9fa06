#!/usr/bin/env node
// logs.mjs - real-log interop check (issue acceptance: every log set in
// testdata/logs, converted by `parqd convert` with its hand-written schema
// and with the default schema, reads back in DuckDB, parquet-wasm and
// hyparquet with every value equal to the source JSON).
//
//   node logs.mjs MANIFEST.tsv [--readers duckdb,parquet-wasm,hyparquet,duckdb-json,c-decoder]
//                 [--only SUBSTR] [--timeout S] [--mutate N] [--seed S] [--c-decoder PATH]
//                 [--native-strict]   (hyparquet's own VARIANT decoding must agree too)
//
// MANIFEST.tsv (written by tests/scripts/test_logs_interop.sh), one case a
// line, tab-separated:
//   name  source.ndjson  schema.yaml|-  exit  out_base  dead_letter  t0_us  t1_us
// out_base.parquet is the output, or out_base-000001.parquet ... when the
// writer rotated; dead_letter may not exist (no rejects); t0/t1 bracket the
// conversion (the default schema's _ingest_ts must fall inside).
//
// For each case:
//   convert  exit status vs the dead-letter file (0 <=> no rejects, 2 <=>
//            some), every rejected line one that must be rejected (invalid
//            JSON, required column missing, value fitting no column) and
//            the other way round; reports values kept in `rest` because they
//            did not fit their typed column;
//   READER   row count = lines - rejects; the file's top-level columns are
//            exactly the schema's; row i = i-th non-rejected line: every
//            typed column equal to the value computed from the source by
//            logs_schema.mjs, every Variant equal to the source JSON (key
//            order aside, numbers by exact value and of the type parqd's
//            number rule gives them, numrule.mjs), `rest` holding exactly
//            the fields no typed column took;
//   duckdb-json  every Variant through DuckDB's CAST(v AS JSON),
//            variant_extract and variant_typeof (logs_duckjson.mjs);
//   c-decoder  every unshredded top-level Variant through parqd's test
//            decoder (logs_cdecoder.mjs), with --c-decoder PATH.
// One line per (case, check): PASS / FAIL with the first difference and a
// count of differences per column / SKIP with reader, feature and reason;
// last line "N passed, M failed, K skipped"; exit 1 on any FAIL.
// Each reader runs in its own child process (a crash or hang fails only
// the case it was on).
import fs from 'node:fs';
import path from 'node:path';
import { runIsolated } from './isolate.mjs';
import { fileURLToPath } from 'node:url';
import { compare as compareCanon, show as showCanon, Mismatch } from './canon.mjs';
import { JNum, compareJV, parseJsonLine, splitLines, showJ } from './logs_json.mjs';
import { loadSchema, defaultSchema, expectRecord } from './logs_schema.mjs';
import { applyAutoShred } from './logs_auto.mjs';

const SELF = fileURLToPath(import.meta.url);
// duckdb-json: DuckDB's own Variant functions (CAST AS JSON, variant_extract,
// variant_typeof) on every Variant column, see logs_duckjson.mjs;
// c-decoder: parqd's test decoder (tests/tools/variant_dump, given with
// --c-decoder PATH; not run without it), see logs_cdecoder.mjs.
const ALL_READERS = ['duckdb', 'parquet-wasm', 'hyparquet', 'duckdb-json', 'c-decoder'];
const DEFAULT_READERS = ['duckdb', 'parquet-wasm', 'hyparquet', 'duckdb-json'];

/* Reader features this harness knows a reader cannot read, each found by
 * trying: {reader, feature, reason, expect (regexp on the failure)}. A
 * FAIL becomes a SKIP only when the message matches. None so far: all three
 * read every file of the log matrix. (Lossy, not skipped: DuckDB's top-level
 * Variant null, see compareCol; hyparquet's own VARIANT decoding is only a
 * note, see logs_readers.mjs.) */
const KNOWN_LIMITS = [];

function usage(msg) {
  if (msg) console.error(`logs.mjs: ${msg}`);
  console.error('usage: node logs.mjs MANIFEST.tsv [--readers duckdb,parquet-wasm,hyparquet,duckdb-json,c-decoder] [--only SUBSTR] [--timeout SECONDS] [--mutate N] [--seed S] [--c-decoder PATH] [--native-strict]');
  process.exit(2);
}

function readManifest(file) {
  const cases = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim() || line.startsWith('#')) continue;
    const f = line.split('\t');
    if (f.length < 8) throw new Error(`${file}: bad line ${JSON.stringify(line)}`);
    cases.push({
      name: f[0], source: f[1], schema: f[2] === '-' ? null : f[2], exit: Number(f[3]),
      outBase: f[4], deadLetter: f[5], t0: BigInt(f[6]), t1: BigInt(f[7]),
    });
  }
  return cases;
}

function outputFiles(c) {
  const dir = path.dirname(c.outBase), base = path.basename(c.outBase);
  let names;
  try { names = fs.readdirSync(dir); } catch { return []; }
  const one = names.filter(n => n === `${base}.parquet`);
  const many = names.filter(n => n.startsWith(`${base}-`) && /^-[0-9]{6}\.parquet$/.test(n.slice(base.length))).sort();
  return [...one, ...many].map(n => path.join(dir, n));
}

/* Source lines, dead letters and what every line must become. */
function loadCase(c) {
  const columns = c.schema ? loadSchema(c.schema) : defaultSchema();
  const buf = fs.readFileSync(c.source);
  const lines = splitLines(buf).map(l => {
    let rec, parseError = null;
    try { rec = parseJsonLine(l.bytes); } catch (e) { parseError = e.message; }
    const er = parseError ? { reject: `invalid JSON: ${parseError}`, cols: {}, unfit: [] } : expectRecord(columns, rec);
    return { lineno: l.lineno, rec, ...er };
  });
  const rejected = new Map();
  let dlError = null;
  if (fs.existsSync(c.deadLetter)) {
    const srcAbs = fs.realpathSync(c.source);
    for (const [i, l] of fs.readFileSync(c.deadLetter, 'utf8').split('\n').entries()) {
      if (!l) continue;
      try {
        const d = JSON.parse(l);
        const m = /^file:(.*):([0-9]+)$/.exec(d.source || '');
        if (!m || (m[1] !== srcAbs && m[1] !== c.source)) { dlError = dlError || `dead letter ${i + 1}: source ${JSON.stringify(d.source)} is not ${srcAbs}:LINE`; continue; }
        rejected.set(Number(m[2]), d.reason);
      } catch (e) {
        dlError = dlError || `dead letter ${i + 1}: not JSON (${e.message})`;
      }
    }
  }
  const kept = lines.filter(l => !rejected.has(l.lineno));
  return { columns, lines, rejected, kept, dlError };
}

/* ---- comparison --------------------------------------------------------- */

function showGot(type, v) {
  if (v === undefined) return 'SQL NULL';
  if (v && v.msg && v.constructor?.name === 'VErr') return v.toString();
  if (type.kind === 'variant') return showJ(v);
  if (type.kind === 'scalar') return showCanon(type.canon, v);
  try { return JSON.stringify(v, (k, x) => typeof x === 'bigint' ? String(x) : x instanceof Map ? Object.fromEntries(x) : x); } catch { return String(v); }
}

/* expected vs got for one column value; null or {path, exp, got} */
function compareCol(type, exp, got, p, isStar, o = {}) {
  if (got && got.constructor?.name === 'VErr') return { path: p, exp: type.kind === 'variant' ? showJ(exp) : '(value)', got: got.toString() };
  switch (type.kind) {
    case 'variant': {
      if (exp === undefined) return got === undefined ? null : { path: p, exp: 'SQL NULL (key missing)', got: showJ(got) };
      if (got === undefined) {
        if (isStar && exp instanceof Map && exp.size === 0) return null; // nothing left for rest: {} or NULL
        if (exp === null && o.reader === 'duckdb') {
          // DuckDB 1.5.6 returns a top-level Variant null as SQL NULL (also
          // for values it builds itself: 'null'::JSON::VARIANT IS NULL is
          // true), so the two cannot be told apart through DuckDB.
          if (o.stats) o.stats.duckNull = (o.stats.duckNull || 0) + 1;
          return null;
        }
        return { path: p, exp: showJ(exp), got: 'SQL NULL' };
      }
      const d = compareJV(exp, got, '', { shred: type.shred, stats: o.stats, col: p });
      return d ? { path: `${p}${d.path === '/' ? '' : d.path}`, exp: d.exp, got: d.got } : null;
    }
    case 'scalar': {
      if (got === undefined) got = null;
      return compareCanon(type.canon, exp, got, p, { negZero: true });
    }
    case 'list': {
      if (exp === null || got === null || got === undefined) return exp === (got ?? null) ? null : { path: p, exp: exp === null ? 'null' : `[${exp.length} elements]`, got: got == null ? 'null' : showGot(type, got) };
      if (!Array.isArray(got)) return { path: p, exp: `[${exp.length} elements]`, got: showGot(type, got) };
      if (got.length !== exp.length) return { path: p, exp: `${exp.length} elements`, got: `${got.length} elements` };
      for (let i = 0; i < exp.length; i++) {
        const d = compareCol(type.element, exp[i], got[i], `${p}[${i}]`, false, o);
        if (d) return d;
      }
      return null;
    }
    case 'struct': {
      if (exp === null || got === null || got === undefined) {
        if (exp === (got ?? null)) return null;
        return { path: p, exp: exp === null ? 'null' : '(struct)', got: got == null ? 'null' : showGot(type, got) };
      }
      if (got instanceof Mismatch) return { path: p, exp: '(struct)', got: got.desc };
      for (const f of type.fields) {
        if (!(f.name in got)) return { path: `${p}.${f.name}`, exp: showGot(f.type, exp[f.name]), got: '(field missing)' };
        const d = compareCol(f.type, exp[f.name], got[f.name], `${p}.${f.name}`, false, o);
        if (d) return d;
      }
      return null;
    }
  }
  return { path: p, exp: '?', got: 'unknown type kind' };
}

async function checkReader(reader, c, opts) {
  const files = outputFiles(c);
  if (!files.length) return { status: 'FAIL', msg: `no output file ${c.outBase}.parquet (convert exit ${c.exit})` };
  const exp = loadCase(c);
  let auto;
  try { auto = applyAutoShred(files, exp.columns); } catch (e) { return { status: 'FAIL', msg: `footer: ${e.message}` }; }
  if (auto.problem) return { status: 'FAIL', msg: auto.problem };
  /* the default schema's files must really use the shredded layout */
  if (c.name.endsWith('-default') && auto.shredded === 0)
    return { status: 'FAIL', msg: `default schema: event is not shredded (${auto.notes.join('; ')})` };
  if (reader === 'duckdb-json') {
    const { checkDuckJson } = await import('./logs_duckjson.mjs');
    return checkDuckJson(files, exp, exp.columns.find(x => x.from === '*')?.name);
  }
  if (reader === 'c-decoder') {
    const { checkCDecoder } = await import('./logs_cdecoder.mjs');
    return checkCDecoder(opts.cDecoder, files, exp, exp.columns.find(x => x.from === '*')?.name);
  }
  const { READERS } = await import('./logs_readers.mjs');
  let res;
  try {
    res = await READERS[reader](files, exp.columns);
  } catch (e) {
    const msg = String(e && e.message || e).split('\n')[0];
    const lim = KNOWN_LIMITS.find(l => l.reader === reader && l.expect.test(msg));
    if (lim) return { status: 'SKIP', msg: `${reader} cannot read ${lim.feature}: ${lim.reason} (${msg})` };
    return { status: 'FAIL', msg: `read failed: ${msg}` };
  }
  const notes = [...res.notes, ...auto.notes];
  if (opts.nativeStrict && res.nativeProblem)
    return { status: 'FAIL', msg: `hyparquet's own VARIANT decoding ${res.nativeProblem} (--native-strict)` };
  const fileNote = files.length > 1 ? `${files.length} files` : '';
  if (res.nrows !== exp.kept.length)
    return { status: 'FAIL', msg: `${res.nrows} rows, expected ${exp.kept.length} (${exp.lines.length} lines - ${exp.rejected.size} rejected)` };
  for (const [name, vals] of Object.entries(res.columns))
    if (vals.length !== res.nrows) return { status: 'FAIL', msg: `column ${name}: ${vals.length} values for ${res.nrows} rows` };
  const want = exp.columns.map(x => x.name);
  const missing = want.filter(n => !res.names.includes(n)), extra = res.names.filter(n => !want.includes(n));
  if (missing.length || extra.length)
    return { status: 'FAIL', msg: `top-level columns differ from the schema: ${missing.length ? 'missing ' + missing.join(',') : ''}${extra.length ? ' extra ' + extra.join(',') : ''}` };

  const star = exp.columns.find(x => x.from === '*')?.name;
  const cmpOpts = { reader, stats: {} };
  let first = null;
  const diffs = new Map();
  let values = 0;
  for (let r = 0; r < exp.kept.length; r++) {
    const line = exp.kept[r];
    for (const col of exp.columns) {
      const got = res.columns[col.name][r];
      let d;
      if (col.ingestTime) {
        d = typeof got === 'bigint' && got >= c.t0 && got <= c.t1 ? null
          : { path: col.name, exp: `ingest time in [${c.t0}, ${c.t1}] us`, got: showGot(col.type, got) };
      } else {
        d = compareCol(col.type, line.cols[col.name], got, col.name, col.name === star, cmpOpts);
      }
      values++;
      if (d) {
        diffs.set(col.name, (diffs.get(col.name) || 0) + 1);
        if (!first) first = `row ${r} (line ${line.lineno}) column ${d.path}: expected ${d.exp}, got ${d.got}`;
      }
    }
  }
  if (cmpOpts.stats.duckNull)
    notes.push(`lossy: DuckDB reads a top-level Variant null as SQL NULL (${cmpOpts.stats.duckNull} JSON nulls compared as NULL)`);
  notes.push(numberNote(cmpOpts.stats));
  if (first) {
    const per = [...diffs].map(([k, n]) => `${k}:${n}`).join(' ');
    return { status: 'FAIL', msg: [`${first} [rows differing per column: ${per}]`, ...notes].join('; ') };
  }
  if (opts.mutate) {
    const m = mutationCheck(exp, res, star, cmpOpts, opts.mutate, opts.seed);
    if (m.escaped) return { status: 'FAIL', msg: `comparison missed a changed expectation (seed ${opts.seed}): ${m.escaped}` };
    notes.push(`${m.caught}/${m.tried} mutations caught`);
  }
  const summary = `${exp.kept.length} rows x ${exp.columns.length} columns${fileNote ? ', ' + fileNote : ''}`;
  return { status: 'PASS', msg: [summary, ...notes].join('; ') };
}

/* How many Variant numbers were compared, and the ones the number rule
 * stores as the nearest double (schema/variant/vnumber.c, rule 4). */
export function numberNote(st) {
  const n = st.numbers || 0;
  if (!st.lossy) return `${n} Variant numbers, all exact`;
  return `${n} Variant numbers, ${n - st.lossy} exact, ${st.lossy} the nearest double by rule 4 (no exact type readers accept), e.g. ${st.lossyList.join(', ')}`;
}

function checkConvert(c) {
  let exp;
  try { exp = loadCase(c); } catch (e) { return { status: 'FAIL', msg: `cannot load case: ${e.message}` }; }
  const problems = [];
  const files = outputFiles(c);
  if (exp.dlError) problems.push(exp.dlError);
  const must = exp.lines.filter(l => l.reject);
  const wrongReject = [...exp.rejected.keys()].filter(n => !must.some(l => l.lineno === n));
  const missedReject = must.filter(l => !exp.rejected.has(l.lineno));
  if (wrongReject.length) problems.push(`${wrongReject.length} lines rejected that fit the schema, first line ${wrongReject[0]}: ${exp.rejected.get(wrongReject[0])}`);
  if (missedReject.length) problems.push(`${missedReject.length} lines not rejected that must be, first line ${missedReject[0].lineno}: ${missedReject[0].reject}`);
  const wantExit = exp.rejected.size ? 2 : 0;
  if (c.exit !== wantExit) problems.push(`exit ${c.exit}, expected ${wantExit} (${exp.rejected.size} dead letters)`);
  if (!files.length) problems.push('no output file');
  const unfit = new Map();
  for (const l of exp.kept) for (const u of l.unfit) {
    const k = u.split(':')[0];
    if (!unfit.has(k)) unfit.set(k, { n: 0, first: `line ${l.lineno}: ${u}` });
    unfit.get(k).n++;
  }
  const unfitText = unfit.size ? `; values not fitting their typed column (kept in rest): ${[...unfit].map(([k, v]) => `${k} x${v.n} (first ${v.first})`).join(', ')}` : '';
  const base = `exit ${c.exit}, ${exp.lines.length} lines, ${exp.rejected.size} rejected, ${files.length} file${files.length === 1 ? '' : 's'}${unfitText}`;
  if (exp.rejected.size) problems.push(`rejects expected to be 0 for these samples: ${[...exp.rejected].slice(0, 3).map(([n, r]) => `line ${n}: ${r}`).join('; ')}`);
  return problems.length ? { status: 'FAIL', msg: `${problems.join('; ')} (${base})` } : { status: 'PASS', msg: base };
}

/* ---- mutation check ------------------------------------------------------ */

/* After a PASS: changes the expectation of random (row, column) values and
 * checks that the comparison sees every change, so a reader adapter or a
 * normalization that makes everything compare equal cannot pass silently. */
function rngOf(seed) {
  let x = (seed >>> 0) || 1;
  return (n) => { x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0; return x % n; };
}

function mutateJ(v, rnd) {
  const nodes = [];
  const walk = (x, set) => {
    nodes.push(set);
    if (x instanceof Map) for (const [k, y] of x) walk(y, (nv) => { x.set(k, nv); });
    else if (Array.isArray(x)) x.forEach((y, i) => walk(y, (nv) => { x[i] = nv; }));
  };
  let root = cloneJ(v);
  walk(root, (nv) => { root = nv; });
  // pick a node, find its current value through a second walk
  const k = rnd(nodes.length);
  let cur, n = 0;
  const find = (x) => { if (n++ === k) { cur = x; return true; } if (x instanceof Map) { for (const y of x.values()) if (find(y)) return true; } else if (Array.isArray(x)) { for (const y of x) if (find(y)) return true; } return false; };
  find(root);
  nodes[k](changeJ(cur, rnd));
  return root;
}

function cloneJ(v) {
  if (v instanceof Map) return new Map([...v].map(([k, x]) => [k, cloneJ(x)]));
  if (Array.isArray(v)) return v.map(cloneJ);
  return v;
}

function changeJ(v, rnd) {
  if (v === null || v === undefined) return new JNum('0');
  if (typeof v === 'boolean') return !v;
  if (typeof v === 'string') return v + 'x';
  // a change every number type shows, even a double that keeps 17 digits:
  // the sign (zero becomes 1)
  if (v instanceof JNum) return new JNum(v.u === 0n ? '1' : v.text.startsWith('-') ? v.text.slice(1) : '-' + v.text);
  if (v instanceof Map) {
    if (v.size && rnd(2)) { const m = new Map(v); m.delete([...m.keys()][rnd(m.size)]); return m; }
    const m = new Map(v); m.set('zz_mutant', null); return m;
  }
  if (Array.isArray(v)) return v.length && rnd(2) ? v.slice(0, -1) : [...v, null];
  return new JNum('0');
}

function mutateTyped(type, v, rnd) {
  switch (type.kind) {
    case 'variant': return v === undefined ? new JNum('0') : mutateJ(v, rnd);
    case 'list':
      if (v === null) return [];
      if (!v.length || rnd(3) === 0) return [...v, v.length ? v[0] : null];
      { const i = rnd(v.length); const c = [...v]; c[i] = mutateTyped(type.element, v[i], rnd); return c; }
    case 'struct': {
      if (v === null) return undefined;
      const f = type.fields[rnd(type.fields.length)];
      return { ...v, [f.name]: mutateTyped(f.type, v[f.name], rnd) };
    }
  }
  const t = type.canon.type;
  if (v === null) return t === 'bool' ? false : t === 'string' ? '' : t === 'double' || t === 'float' ? 0.5 : 0n;
  if (typeof v === 'bigint') return v + 1n;
  if (typeof v === 'number') return v === 0 ? 1 : v * 2;
  if (typeof v === 'boolean') return !v;
  if (typeof v === 'string') return v + 'x';
  return undefined;
}

function mutationCheck(exp, res, star, cmpOpts, n, seed) {
  const rnd = rngOf(seed);
  const cols = exp.columns.filter(c => !c.ingestTime);
  let tried = 0, caught = 0;
  for (let k = 0; k < n * 4 && tried < n; k++) {
    const r = rnd(exp.kept.length), col = cols[rnd(cols.length)];
    const orig = exp.kept[r].cols[col.name];
    const m = mutateTyped(col.type, orig, rnd);
    if (m === undefined) continue;
    if (col.name === star && m instanceof Map && m.size === 0 && res.columns[col.name][r] === undefined) continue;
    if (cmpOpts.reader === 'duckdb' && col.type.kind === 'variant' && m === null) continue;
    tried++;
    const d = compareCol(col.type, m, res.columns[col.name][r], col.name, col.name === star, { reader: cmpOpts.reader });
    if (d) caught++;
    else return { tried, caught, escaped: `row ${r} column ${col.name}: expectation changed from ${showJ(orig)} to ${showJ(m)}, still equal` };
  }
  return { tried, caught };
}

/* ---- processes ---------------------------------------------------------- */

async function worker(reader, manifest, names, opts) {
  const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
  const want = new Set(names);
  for (const c of readManifest(manifest)) {
    if (!want.has(c.name)) continue;
    out({ start: c.name });
    let r;
    try { r = await checkReader(reader, c, opts); } catch (e) { r = { status: 'FAIL', msg: `harness error: ${e && e.stack ? e.stack.split('\n').slice(0, 3).join(' | ') : e}` }; }
    out({ name: c.name, status: r.status, msg: r.msg });
  }
  await new Promise(res => process.stdout.write('', res));
  process.exit(0);
}

/* Runs one reader's worker over the cases; after a crash or timeout the
 * case it was on fails and a new worker takes the rest. */
function runReader(reader, manifest, names, opts) {
  return runIsolated(names,
    pending => [SELF, '--worker', reader, manifest, pending.join(','), String(opts.mutate),
      String(opts.seed), opts.cDecoder || '', opts.nativeStrict ? '1' : ''],
    'name', opts.timeout);
}

async function main(argv) {
  if (argv[0] === '--worker')
    return worker(argv[1], argv[2], (argv[3] || '').split(','), { mutate: Number(argv[4]) || 0, seed: Number(argv[5]) || 1, cDecoder: argv[6] || null, nativeStrict: argv[7] === '1' });
  const opts = { readers: null, timeout: 300, only: null, mutate: 0, seed: Date.now() % 1000000, cDecoder: null };
  let manifest = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--readers') opts.readers = (argv[++i] || '').split(',').filter(Boolean);
    else if (a === '--only') opts.only = argv[++i];
    else if (a === '--timeout') opts.timeout = Number(argv[++i]);
    else if (a === '--mutate') opts.mutate = Number(argv[++i]);
    else if (a === '--seed') opts.seed = Number(argv[++i]);
    else if (a === '--c-decoder') opts.cDecoder = argv[++i];
    else if (a === '--native-strict') opts.nativeStrict = true;
    else if (a.startsWith('--')) usage(`unknown option ${a}`);
    else if (!manifest) manifest = a;
    else usage('one manifest only');
  }
  if (!manifest) usage();
  opts.readers ||= opts.cDecoder ? [...DEFAULT_READERS, 'c-decoder'] : DEFAULT_READERS;
  for (const r of opts.readers) if (!ALL_READERS.includes(r)) usage(`unknown reader ${r}`);
  if (opts.readers.includes('c-decoder') && !opts.cDecoder) usage('reader c-decoder needs --c-decoder PATH');
  let cases;
  try { cases = readManifest(manifest); } catch (e) { usage(e.message); }
  if (opts.only) cases = cases.filter(c => c.name.includes(opts.only));
  if (!cases.length) {
    console.log(`no cases in ${manifest}`);
    console.log('0 passed, 1 failed, 0 skipped');
    process.exit(1);
  }
  const names = cases.map(c => c.name);
  if (opts.mutate) console.log(`mutation check: ${opts.mutate} per (case, reader), seed ${opts.seed} (--seed to repeat)`);
  const byReader = await Promise.all(opts.readers.map(r => runReader(r, manifest, names, opts)));
  let passed = 0, failed = 0, skipped = 0;
  const count = (s) => { if (s === 'PASS') passed++; else if (s === 'SKIP') skipped++; else failed++; };
  for (const c of cases) {
    const cv = checkConvert(c);
    console.log(`${cv.status.padEnd(4)}  ${c.name}  convert: ${cv.msg}`);
    count(cv.status);
    opts.readers.forEach((r, k) => {
      const res = byReader[k].get(c.name) || { status: 'FAIL', msg: 'no result' };
      console.log(`${res.status.padEnd(4)}  ${c.name}  ${r}${res.msg ? ': ' + res.msg : ''}`);
      count(res.status);
    });
  }
  console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
  process.exit(failed ? 1 : 0);
}

main(process.argv.slice(2)).catch(e => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(2);
});
