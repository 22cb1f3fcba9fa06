#!/usr/bin/env node
// read.mjs - interop check: every NAME.parquet in DIR that has a
// NAME.expect.json is read with DuckDB, parquet-wasm and hyparquet and every
// value compared with the expectation (README.md).
//
//   node read.mjs DIR [--readers duckdb,parquet-wasm,hyparquet,duckdb-filter,footer] [--only SUBSTR]
//                     [--meta] [--timeout SECONDS]
//
// One line per (file, reader): PASS, FAIL (first difference) or SKIP (reader,
// feature, reason); then "N passed, M failed, K skipped"; exit 1 on any FAIL.
// The pseudo-reader "footer" (footer.mjs) checks, for files whose expectation
// has a "footer" object, that codec, page type, encodings and row groups are
// what the file is meant to test; "duckdb-filter" (filter.mjs) checks that
// DuckDB's statistics-based pruning counts right.
// Each reader runs in a child process of its own, so a reader that crashes
// or hangs on one file fails that file only.
import fs from 'node:fs';
import path from 'node:path';
import { runIsolated } from './isolate.mjs';
import { fileURLToPath } from 'node:url';

const SELF = fileURLToPath(import.meta.url);

function usage(msg) {
  if (msg) console.error(`read.mjs: ${msg}`);
  console.error('usage: node read.mjs DIR [--readers duckdb,parquet-wasm,hyparquet,duckdb-filter,footer] [--only SUBSTR] [--meta] [--timeout SECONDS]');
  process.exit(2);
}

async function worker(readerName, meta, files) {
  const { checkFile } = await import('./check.mjs');
  const hyparquet = await import('./reader_hyparquet.mjs');
  const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
  if (readerName === 'footer') {
    const { checkFooter } = await import('./footer.mjs');
    for (const file of files) {
      out({ start: file });
      let r;
      try {
        const json = JSON.parse(fs.readFileSync(file.replace(/\.parquet$/, '.expect.json'), 'utf8'));
        r = checkFooter(file, json.footer);
      } catch (e) {
        r = { status: 'FAIL', msg: `bad expectation file: ${String(e.message).split('\n')[0]}` };
      }
      out({ file, status: r.status, msg: r.msg });
    }
    await new Promise(res => process.stdout.write('', res));
    process.exit(0);
  }
  if (readerName === 'duckdb-filter') {
    const { checkFilter } = await import('./filter.mjs');
    for (const file of files) {
      out({ start: file });
      let features = new Set();
      try { features = hyparquet.fileFeatures(file); } catch { /* the readers report it */ }
      const r = await checkFilter(file, features);
      out({ file, status: r.status, msg: r.msg });
    }
    await new Promise(res => process.stdout.write('', res));
    process.exit(0);
  }
  for (const file of files) {
    out({ start: file });
    let features = new Set(), note = '';
    try {
      features = hyparquet.fileFeatures(file);
    } catch (e) {
      note = `(footer not parsed for codec/encoding features: ${String(e.message).split('\n')[0]})`;
    }
    const r = await checkFile(readerName, file, features);
    if (note) r.msg = r.msg ? `${r.msg} ${note}` : note;
    if (meta && readerName === 'duckdb') {
      try {
        const duckdb = await import('./reader_duckdb.mjs');
        const d = await duckdb.describe(file);
        fs.writeFileSync(file.replace(/\.parquet$/, '.duckdb-meta.json'), JSON.stringify(d, null, 1));
      } catch (e) {
        r.msg = `${r.msg ? r.msg + ' ' : ''}(parquet_metadata failed: ${String(e.message).split('\n')[0]})`;
      }
    }
    out({ file, status: r.status, msg: r.msg });
  }
  await new Promise(res => process.stdout.write('', res));
  process.exit(0);
}

/* Runs one reader over all files in child processes; restarts after a crash
 * or timeout. Resolves to Map file -> {status, msg}. */
function runReader(readerName, files, opts) {
  return runIsolated(files,
    pending => [SELF, '--worker', readerName, ...(opts.meta ? ['--meta'] : []), ...pending],
    'file', opts.timeout);
}

async function main(argv) {
  if (argv[0] === '--worker') {
    const reader = argv[1];
    const meta = argv[2] === '--meta';
    return worker(reader, meta, argv.slice(meta ? 3 : 2));
  }
  const { READER_NAMES } = await import('./check.mjs');
  const ALL = [...READER_NAMES, 'duckdb-filter', 'footer'];
  const opts = { readers: ALL, meta: false, timeout: 300, only: null };
  let dir = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--readers') opts.readers = (argv[++i] || '').split(',').filter(Boolean);
    else if (a === '--only') opts.only = argv[++i];
    else if (a === '--meta') opts.meta = true;
    else if (a === '--timeout') opts.timeout = Number(argv[++i]);
    else if (a.startsWith('--')) usage(`unknown option ${a}`);
    else if (dir === null) dir = a;
    else usage('one directory only');
  }
  if (!dir) usage();
  for (const r of opts.readers) if (!ALL.includes(r)) usage(`unknown reader ${r} (know ${ALL.join(', ')})`);
  if (!(opts.timeout > 0)) usage('bad --timeout');

  let names;
  try { names = fs.readdirSync(dir).sort(); } catch (e) { usage(`cannot read ${dir}: ${e.message}`); }
  if (opts.only) names = names.filter(n => n.includes(opts.only));
  const files = [];
  let failed = 0, passed = 0, skipped = 0;
  for (const n of names) {
    if (n.endsWith('.parquet')) {
      if (names.includes(n.replace(/\.parquet$/, '.expect.json'))) files.push(path.join(dir, n));
      else console.log(`NOTE  ${n}: no ${n.replace(/\.parquet$/, '.expect.json')}, not checked`);
    } else if (n.endsWith('.expect.json') && !names.includes(n.replace(/\.expect\.json$/, '.parquet'))) {
      console.log(`FAIL  ${n}: expectation without ${n.replace(/\.expect\.json$/, '.parquet')}`);
      failed++;
    }
  }
  if (files.length === 0) {
    console.log(`no NAME.parquet with NAME.expect.json in ${dir}`);
    console.log(`${passed} passed, ${failed + 1} failed, ${skipped} skipped`);
    process.exit(1);
  }
  const byReader = await Promise.all(opts.readers.map(r => runReader(r, files, opts)));
  for (const f of files) {
    opts.readers.forEach((r, k) => {
      const res = byReader[k].get(f) || { status: 'FAIL', msg: 'no result' };
      if (res.status === 'NONE') return; // nothing for this pseudo-reader to check
      const tag = res.status.padEnd(4);
      console.log(`${tag}  ${path.basename(f)}  ${r}${res.msg ? ': ' + res.msg : ''}`);
      if (res.status === 'PASS') passed++;
      else if (res.status === 'SKIP') skipped++;
      else failed++;
    });
  }
  console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
  process.exit(failed ? 1 : 0);
}

main(process.argv.slice(2)).catch(e => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(2);
});
