// bloom_duckdb_full.mjs - the full DuckDB half of the bloom acceptance check,
// too slow for every CI run (about 0.3-0.8 ms per parquet_bloom_probe even
// with the metadata cache): probes EVERY present and absent value of one
// bloom_gen file with DuckDB, split over worker processes.
// usage: node bloom_duckdb_full.mjs DIR FILE [WORKERS]
//   prints false negatives and the FPR per column; exit 1 on a false
//   negative or an FPR above 1.5x the file's fpp.
import fs from 'node:fs';
import path from 'node:path';
import { fork } from 'node:child_process';
import { DuckDBInstance } from '@duckdb/node-api';
import { bloomValues } from './bloom_values.mjs';

const [dir, name, workersArg, startArg, endArg, colArg] = process.argv.slice(2);
const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
const file = path.join(dir, name);
const meta = manifest.files.find((f) => f.file === name);
const N = manifest.n;

if (startArg !== undefined) { // worker: one column, indices [start, end)
  const { valueOf } = bloomValues(manifest);
  const con = await (await DuckDBInstance.create(':memory:')).connect();
  await con.run('SET parquet_metadata_cache = true');
  const lit = (v) => (colArg === 's' ? `'${v}'` : `${v}::BIGINT`);
  const chunks = meta.chunks.filter((c) => c.column === colArg).sort((a, b) => a.rg - b.rg);
  const rgFirst = chunks.map((c) => c.first_row), rgRows = chunks.map((c) => c.rows);
  let fn = 0, fp = 0, trials = 0;
  for (const absent of [false, true]) {
    for (let b = +startArg; b < +endArg; b += 100) {
      const ids = [];
      for (let i = b; i < Math.min(b + 100, +endArg); i++) ids.push(i);
      const sql = ids.map((i, k) => `SELECT ${k} AS k, row_group_id, bloom_filter_excludes FROM ` +
        `parquet_bloom_probe('${file}', '${colArg}', ${lit(valueOf(colArg, i, absent))})`).join(' UNION ALL ');
      for (const r of (await con.runAndReadAll(sql)).getRowObjects()) {
        const i = ids[Number(r.k)], g = Number(r.row_group_id), excluded = r.bloom_filter_excludes;
        if (!absent && i >= rgFirst[g] && i < rgFirst[g] + rgRows[g] && excluded !== false) fn++;
        if (absent) { trials++; if (excluded === false) fp++; }
      }
    }
  }
  process.send({ fn, fp, trials });
  process.exit(0);
}

const W = Number(workersArg || 2);
const t0 = Date.now();
let bad = 0;
for (const col of ['s', 'v']) {
  const parts = await Promise.all(Array.from({ length: W }, (_, w) => new Promise((resolve, reject) => {
    const lo = Math.floor((N * w) / W), hi = Math.floor((N * (w + 1)) / W);
    const child = fork(new URL(import.meta.url).pathname, [dir, name, String(W), String(lo), String(hi), col]);
    child.on('message', resolve);
    child.on('exit', (code) => code && reject(new Error(`worker exit ${code}`)));
  })));
  const fn = parts.reduce((a, p) => a + p.fn, 0), fp = parts.reduce((a, p) => a + p.fp, 0);
  const trials = parts.reduce((a, p) => a + p.trials, 0);
  const rate = fp / trials;
  const ok = fn === 0 && rate <= 1.5 * meta.fpp;
  bad += !ok;
  console.log(`${ok ? 'PASS' : 'FAIL'} duckdb ${name} column ${col}: all ${N} present values probed, ` +
    `${fn} false negatives; FPR ${rate.toFixed(5)} over ${trials} row-group probes of ${N} absent values ` +
    `(fpp ${meta.fpp}, ${(rate / meta.fpp).toFixed(2)}x)`);
}
console.log(`${2 - bad} passed, ${bad} failed (${((Date.now() - t0) / 60000).toFixed(1)} min, ${W} workers)`);
process.exit(bad ? 1 : 0);
