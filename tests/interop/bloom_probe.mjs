// bloom_probe.mjs - parqd's bloom filters (tests/tools/bloom_gen) probed by
// hyparquet (every value) and DuckDB 1.5.6 (a seeded sample).
//
//   node tests/interop/bloom_probe.mjs DIR [--budget-ms N] [--max-sample N]
//
// DIR holds bloom_gen's files and manifest.json. The 1,000,000 present and
// 1,000,000 absent values per column are regenerated here from the
// derivation in bloom_gen.c (splitmix64 finalizer over seed ^ 2i / 2i+1).
//
// hyparquet (hyparquet/src/bloom.js: readBloomFilter, hashParquetValue,
// sbbfContains): each chunk's filter is read at ColumnMetaData's
// bloom_filter_offset; ALL present values must be in their row group's
// filter (no false negatives) and ALL absent values are probed against every
// chunk's filter: FPR = false positives / probes, per file and column, must
// be at most 1.5 x the configured fpp; the false-positive count of every
// chunk must equal the C checker's (bloom_gen, manifest), so two independent
// readers agree exactly.
//
// DuckDB: parquet_bloom_probe(file, column, literal) costs about 1-3 ms per
// call and takes literals only, so 1M probes per column would take most of
// an hour; DuckDB probes a seeded random sample instead (sized to fit the
// time budget, default 40 s for all files), and every answer (per row group:
// excluded or not) must equal hyparquet's answer for the same value: no
// false negatives, and the sample FPR within a binomial tolerance of the
// fpp. The measured ms per call is printed.
//
// Prints PASS/FAIL lines, then `N passed, M failed`; exit 1 on any FAIL.
import fs from 'node:fs';
import path from 'node:path';
import { parquetMetadata } from 'hyparquet';
import { readBloomFilter, sbbfContains, hashParquetValue } from 'hyparquet/src/bloom.js';
import { DuckDBInstance } from '@duckdb/node-api';
import { bloomValues } from './bloom_values.mjs';

const argv = process.argv.slice(2);
const dir = argv[0];
const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  return i >= 0 ? Number(argv[i + 1]) : dflt;
};
const budgetMs = opt('--budget-ms', 40000);
const maxSample = opt('--max-sample', 5000);
const seed = Number(process.env.BLOOM_SEED ?? 20260101) >>> 0;
if (!dir) {
  console.error('usage: bloom_probe.mjs DIR [--budget-ms N] [--max-sample N]');
  process.exit(2);
}
const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
const N = manifest.n;
let passed = 0, failed = 0;
const pass = (what) => { passed++; console.log(`PASS ${what}`); };
const fail = (what, why) => { failed++; console.log(`FAIL ${what}: ${why}`); };

// ---- the values (bloom_gen.c's derivation) ----------------------------------

const { intValue, strValue, valueOf } = bloomValues(manifest);

// ---- hyparquet: every value -------------------------------------------------

const t0 = performance.now();
/* Hashes of all present/absent values per column, with hyparquet's
 * hashParquetValue (the PLAIN bytes, xxHash64 seed 0); same for all files. */
const hashes = {};
function hashesFor(col, element) {
  if (!hashes[col]) {
    const present = new Array(N), absent = new Array(N);
    for (let i = 0; i < N; i++) {
      present[i] = hashParquetValue(valueOf(col, i, false), element);
      absent[i] = hashParquetValue(valueOf(col, i, true), element);
    }
    if (present[0] === undefined) throw new Error(`hashParquetValue cannot hash column ${col}`);
    hashes[col] = { present, absent };
  }
  return hashes[col];
}

/* Per file: {col: {rowGroups: [{first, rows, blocks}], element}} */
function readFilters(file) {
  const bytes = fs.readFileSync(file);
  const ab = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const md = parquetMetadata(ab);
  const view = new DataView(ab);
  const out = {};
  let first = 0;
  for (const rg of md.row_groups) {
    for (const cc of rg.columns) {
      const name = cc.meta_data.path_in_schema.join('.');
      const element = md.schema.find((e) => e.name === name);
      out[name] ??= { element, rowGroups: [] };
      const off = cc.meta_data.bloom_filter_offset;
      if (off === undefined) throw new Error(`${name}: no bloom_filter_offset`);
      const bf = readBloomFilter({ view, offset: Number(off) });
      if (!bf) throw new Error(`${name}: hyparquet cannot use the bloom filter`);
      out[name].rowGroups.push({ first, rows: Number(rg.num_rows), blocks: bf.blocks, numBytes: bf.numBytes });
    }
    first += Number(rg.num_rows);
  }
  return out;
}

const results = []; // per file: {f, filters}
for (const f of manifest.files) {
  const file = path.join(dir, f.file);
  let filters;
  try {
    filters = readFilters(file);
  } catch (e) {
    fail(`hyparquet ${f.file}`, e.message);
    continue;
  }
  results.push({ f, file, filters });
  for (const col of ['s', 'v']) {
    const { element, rowGroups } = filters[col];
    const h = hashesFor(col, element);
    let misses = 0, fps = 0, probes = 0, worst = 0, mismatch = '';
    rowGroups.forEach((rg, g) => {
      for (let i = rg.first; i < rg.first + rg.rows; i++) if (!sbbfContains(rg.blocks, h.present[i])) misses++;
      let fp = 0;
      for (let i = 0; i < N; i++) if (sbbfContains(rg.blocks, h.absent[i])) fp++;
      fps += fp;
      probes += N;
      worst = Math.max(worst, fp / N);
      const c = f.chunks.find((x) => x.rg === g && x.column === col);
      if (!c || c.c_false_positives !== fp || c.num_bytes !== rg.numBytes)
        mismatch ||= `rg ${g}: hyparquet ${fp} false positives in ${rg.numBytes} bytes, C checker ${c?.c_false_positives} in ${c?.num_bytes}`;
    });
    const rate = fps / probes;
    const what = `hyparquet ${f.file} column ${col} (fpp ${f.fpp}, ${rowGroups.length} row groups)`;
    if (misses) fail(what, `${misses} false negatives among ${N} present values`);
    else if (mismatch) fail(what, `disagrees with the C checker: ${mismatch}`);
    else if (rate > 1.5 * f.fpp) fail(what, `FPR ${rate.toFixed(5)} > 1.5 x fpp ${f.fpp}`);
    else pass(`${what}: all ${N} present values found; FPR ${rate.toFixed(5)} (${(rate / f.fpp).toFixed(2)}x fpp, worst chunk ${worst.toFixed(5)}) over ${probes} absent probes; false-positive counts equal the C checker's in every chunk`);
  }
}
const hyparquetSec = (performance.now() - t0) / 1000;

// ---- DuckDB: a seeded sample --------------------------------------------------

function mulberry32(a) {
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
const lit = (col, v) => (col === 's' ? `'${v}'` : `${v}::BIGINT`);
async function probeBatch(file, col, vals) {
  // one UNION ALL query per batch; k tags each probe's rows
  const sql = vals.map((v, k) =>
    `SELECT ${k} AS k, row_group_id, bloom_filter_excludes FROM parquet_bloom_probe('${file}', '${col}', ${lit(col, v)})`).join(' UNION ALL ');
  const rows = (await con.runAndReadAll(sql)).getRowObjects();
  const out = vals.map(() => []);
  for (const r of rows) out[Number(r.k)][Number(r.row_group_id)] = r.bloom_filter_excludes;
  return out;
}

// cost of one call and of a probe in a batch, measured on the first file
let msPerCall = 0, msPerBatched = 0;
if (results.length) {
  const { file } = results[0];
  let t = performance.now();
  for (let i = 0; i < 100; i++) await probeBatch(file, 'v', [intValue(i, true)]);
  msPerCall = (performance.now() - t) / 100;
  t = performance.now();
  for (let b = 0; b < 4; b++) await probeBatch(file, 'v', Array.from({ length: 50 }, (_, i) => intValue(100 + 50 * b + i, true)));
  msPerBatched = (performance.now() - t) / 200;
}
const probesAffordable = Math.floor(budgetMs / Math.max(msPerBatched, 0.05));
// per file and column: `sample` present + `sample` absent values
const sample = Math.max(200, Math.min(maxSample, Math.floor(probesAffordable / (results.length * 2 * 2))));
console.log(`DuckDB: parquet_bloom_probe costs ${msPerCall.toFixed(2)} ms per call (one query per probe), ` +
  `${msPerBatched.toFixed(2)} ms per probe in UNION ALL batches of 50; all ${2 * N} values per column would take ` +
  `${(msPerBatched * 2 * N * 2 * results.length / 60000).toFixed(0)} min for these files, ` +
  `so DuckDB probes a seeded sample of ${sample} present + ${sample} absent values per column per file ` +
  `(seed ${seed}; BLOOM_SEED=N to change; time budget ${(budgetMs / 1000).toFixed(0)} s)`);

const td = performance.now();
const rand = mulberry32(seed);
let duckProbes = 0;
for (const { f, file, filters } of results) {
  for (const col of ['s', 'v']) {
    const { rowGroups } = filters[col];
    const h = hashes[col];
    const idx = (k) => Array.from({ length: k }, () => Math.floor(rand() * N));
    const present = idx(sample), absent = idx(sample);
    let fn = 0, fp = 0, trials = 0, disagree = '';
    for (const [kind, list] of [['present', present], ['absent', absent]]) {
      for (let b = 0; b < list.length; b += 50) {
        const chunk = list.slice(b, b + 50);
        const answers = await probeBatch(file, col, chunk.map((i) => valueOf(col, i, kind === 'absent')));
        duckProbes += chunk.length;
        chunk.forEach((i, k) => {
          const hash = kind === 'present' ? h.present[i] : h.absent[i];
          rowGroups.forEach((rg, g) => {
            const excluded = answers[k][g];
            const hyp = !sbbfContains(rg.blocks, hash);
            if (excluded !== hyp)
              disagree ||= `${kind} value ${i} row group ${g}: DuckDB excludes=${excluded}, hyparquet ${hyp}`;
            if (kind === 'present' && i >= rg.first && i < rg.first + rg.rows && excluded !== false) fn++;
            if (kind === 'absent') { trials++; if (excluded === false) fp++; }
          });
        });
      }
    }
    const rate = fp / trials;
    const tol = 1.5 * f.fpp + 3 * Math.sqrt(f.fpp * (1 - f.fpp) / trials);
    const what = `duckdb ${f.file} column ${col}: sample of ${sample} present + ${sample} absent values`;
    if (fn) fail(what, `${fn} false negatives`);
    else if (disagree) fail(what, `disagrees with hyparquet: ${disagree}`);
    else if (rate > tol) fail(what, `sample FPR ${rate.toFixed(5)} above 1.5 x fpp + 3 sigma = ${tol.toFixed(5)}`);
    else pass(`${what}: no false negatives; sample FPR ${rate.toFixed(5)} over ${trials} row-group probes (fpp ${f.fpp}, bound ${tol.toFixed(5)}); every answer equals hyparquet's`);
  }
}
const duckSec = (performance.now() - td) / 1000;
console.log(`DuckDB: ${duckProbes} sampled probes in ${duckSec.toFixed(1)} s (${(duckSec * 1000 / Math.max(duckProbes, 1)).toFixed(2)} ms per probe in UNION ALL batches of 50); hyparquet: every value in ${hyparquetSec.toFixed(1)} s`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
