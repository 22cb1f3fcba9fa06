// crypt_duckdb.mjs - parqd's encrypted files (tests/tools/crypt_gen) read by
// DuckDB 1.5.6 (@duckdb/node-api), and the plaintext columns of a
// plaintext-footer file also by hyparquet and parquet-wasm.
//
//   node tests/interop/crypt_duckdb.mjs DIR [TESTDATA] [--mutate]
//
// --mutate changes one expected score of the first file and one expected
// name of the plaintext-footer file, so the comparison must FAIL (a check
// that the comparison is live; the wrapper script runs it).
//
// DIR holds crypt_gen's files and manifest.json (see crypt_gen.c). Checks:
//  - "expect-read" uniform AES_GCM_V1 files with an encrypted footer (v1
//    pages, one data page per chunk, flat): every value of every column with
//    the right key (PRAGMA add_parquet_key + encryption_config); a wrong key
//    and a missing encryption_config must fail.
//  - the plaintext-footer file (id and secret encrypted with column keys):
//    DuckDB without encryption_config reads the plaintext columns (name,
//    score, flag), every value compared; selecting an encrypted column must
//    fail (a legacy reader cannot decrypt, Encryption.md 5.5). hyparquet must
//    read the plaintext columns too; parquet-wasm is tried and its outcome
//    reported (PASS, or SKIP naming its error).
//  - "expect-fail" shapes (multi-page, v2, nested, CTR, AAD prefix, column
//    keys): read with the right key; a failure is a named SKIP with the
//    reason and DuckDB's error (a DuckDB limitation: pqcrypt reads these
//    files value by value in crypt_gen); a success is compared value by
//    value and reported as PASS with a note. For the nested shape the flat
//    columns are read as well, to show only the LIST column fails.
//  - with TESTDATA: the same nested-column failure on the parquet-testing
//    reference uniform_encryption files (Arrow's repeated int64, parquet-mr's
//    LIST), whose flat columns DuckDB reads - so the limitation is DuckDB's.
// Prints PASS/FAIL/SKIP lines, then `N passed, M failed, K skipped`;
// exit 1 on any FAIL.
import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { readParquet } from 'parquet-wasm/node';
import { tableFromIPC } from 'apache-arrow';

const args = process.argv.slice(2).filter((a) => a !== '--mutate');
const mutate = process.argv.includes('--mutate');
const dir = args[0];
const testdata = args[1];
if (!dir) {
  console.error('usage: crypt_duckdb.mjs DIR [TESTDATA]');
  process.exit(2);
}
const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
if (mutate) {
  manifest.files[0].rows[17][2] += 0.25;
  const pf = manifest.files.find((f) => f.mode.includes('plaintext-footer'));
  pf.rows[1234][1] = 'name-x';
}
let passed = 0, failed = 0, skipped = 0;
const pass = (what, note = '') => { passed++; console.log(`PASS ${what}${note ? ` (${note})` : ''}`); };
const fail = (what, why) => { failed++; console.log(`FAIL ${what}: ${why}`); };
const skip = (what, why) => { skipped++; console.log(`SKIP ${what}: ${why}`); };
const oneLine = (e) => String(e && e.message ? e.message : e).split('\n')[0];
const sqlStr = (s) => `'${String(s).replace(/'/g, "''")}'`;

// ---- value comparison: manifest rows vs reader rows ------------------------

const COLS = ['id', 'name', 'score', 'flag', 'secret', 'nums'];

/* Normalizes a reader's value to the manifest's JSON form. */
function norm(col, v) {
  if (v === null || v === undefined) return null;
  if (col === 'id' || col === 'secret') return String(v);
  if (col === 'nums') {
    const items = v.items ?? v; // DuckDB list value or array
    return Array.from(items, (x) => String(x));
  }
  return v;
}

function compareRows(want, got, cols) {
  if (got.length !== want.length) return `${got.length} rows, want ${want.length}`;
  for (let r = 0; r < want.length; r++) {
    for (const c of cols) {
      const w = want[r][COLS.indexOf(c)];
      const g = norm(c, got[r][c]);
      if (JSON.stringify(w) !== JSON.stringify(g))
        return `row ${r} column ${c}: expected ${JSON.stringify(w)}, got ${JSON.stringify(g)}`;
    }
  }
  return null;
}

// ---- DuckDB ------------------------------------------------------------------

const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
await con.run(`PRAGMA add_parquet_key('footer', ${sqlStr(manifest.keys.footer)})`);
await con.run(`PRAGMA add_parquet_key('footer256', ${sqlStr(manifest.keys.footer256)})`);
await con.run(`PRAGMA add_parquet_key('wrong', ${sqlStr(manifest.keys.wrong)})`);

async function duck(file, cols, key) {
  const cfg = key ? `, encryption_config = {footer_key: ${sqlStr(key)}}` : '';
  const sel = cols.map((c) => `"${c}"`).join(', ');
  const reader = await con.runAndReadAll(`SELECT ${sel} FROM read_parquet(${sqlStr(file)}${cfg})`);
  return reader.getRowObjects();
}

async function expectError(what, fn) {
  try {
    await fn();
    fail(what, 'succeeded, must fail');
  } catch (e) {
    pass(what, `DuckDB: ${oneLine(e)}`);
  }
}

for (const f of manifest.files) {
  const file = path.join(dir, f.file);
  const label = `${f.file} [${f.mode}]`;
  if (f.plaintext_columns.length && f.mode.includes('plaintext-footer')) {
    const plain = f.plaintext_columns;
    // DuckDB without keys: plaintext columns only
    try {
      const rows = await duck(file, plain, null);
      const diff = compareRows(f.rows, rows, plain);
      if (diff) fail(`duckdb plaintext columns ${label}`, diff);
      else pass(`duckdb plaintext columns (${plain.join(', ')}) of ${label} without encryption_config`, `${rows.length} rows, every value equal`);
    } catch (e) {
      skip(`duckdb plaintext columns ${label}`, `DuckDB limitation: refuses the file without keys: ${oneLine(e)}`);
    }
    await expectError(`duckdb without keys refuses encrypted column id of ${label}`, () => duck(file, ['id'], null));
    // hyparquet: an independent reader of the plaintext columns
    try {
      const bytes = fs.readFileSync(file);
      const ab = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
      const rows = await parquetReadObjects({ file: ab, columns: plain, compressors });
      const diff = compareRows(f.rows, rows, plain);
      if (diff) fail(`hyparquet plaintext columns ${label}`, diff);
      else pass(`hyparquet plaintext columns (${plain.join(', ')}) of ${label}`, `${rows.length} rows, every value equal`);
    } catch (e) {
      fail(`hyparquet plaintext columns ${label}`, oneLine(e));
    }
    // parquet-wasm (arrow-rs): reported, not required
    try {
      const t = tableFromIPC(readParquet(new Uint8Array(fs.readFileSync(file)), { columns: plain }).intoIPCStream());
      const rows = [];
      for (let r = 0; r < t.numRows; r++) {
        const o = {};
        for (const c of plain) o[c] = t.getChild(c).get(r);
        rows.push(o);
      }
      const diff = compareRows(f.rows, rows, plain);
      if (diff) fail(`parquet-wasm plaintext columns ${label}`, diff);
      else pass(`parquet-wasm plaintext columns of ${label}`, `${rows.length} rows, every value equal`);
    } catch (e) {
      let ref = '';
      if (testdata) {
        const rf = path.join(testdata, 'parquet-testing', 'data', 'encrypt_columns_plaintext_footer.parquet.encrypted');
        try {
          readParquet(new Uint8Array(fs.readFileSync(rf)), { columns: ['boolean_field'] });
          ref = '; it reads the plaintext columns of the reference encrypt_columns_plaintext_footer file';
        } catch (e2) {
          ref = oneLine(e2) === oneLine(e) ? '; the same error on the reference encrypt_columns_plaintext_footer file'
            : `; on the reference encrypt_columns_plaintext_footer file: ${oneLine(e2)}`;
        }
      }
      skip(`parquet-wasm plaintext columns ${label}`, `parquet-wasm 0.8.0 (arrow-rs) limitation: ${oneLine(e)}${ref}`);
    }
    continue;
  }

  const cols = f.columns;
  if (f.duckdb === 'expect-read') {
    try {
      const t0 = performance.now();
      const rows = await duck(file, cols, f.key);
      const diff = compareRows(f.rows, rows, cols);
      if (diff) fail(`duckdb ${label}`, diff);
      else pass(`duckdb reads ${label} with the right key`, `${rows.length} rows x ${cols.length} columns, every value equal, ${(performance.now() - t0).toFixed(0)} ms`);
    } catch (e) {
      fail(`duckdb ${label}`, oneLine(e));
    }
    await expectError(`duckdb wrong key fails on ${label}`, () => duck(file, cols, 'wrong'));
    await expectError(`duckdb without encryption_config fails on ${label}`, () => duck(file, cols, null));
    continue;
  }

  // shapes DuckDB is known not to read
  try {
    const rows = await duck(file, cols, f.key);
    const diff = compareRows(f.rows, rows, cols);
    if (diff) skip(`duckdb ${f.shape}`, `DuckDB limitation (${f.reason}): read without error but ${diff}`);
    else pass(`duckdb ${label}`, `listed as a DuckDB limitation (${f.reason}) but DuckDB read every value right`);
  } catch (e) {
    skip(`duckdb ${f.shape}`, `DuckDB limitation: ${f.reason}. DuckDB: ${oneLine(e)}`);
  }
  if (f.nested) {
    const flat = cols.filter((c) => c !== 'nums');
    try {
      const rows = await duck(file, flat, f.key);
      const diff = compareRows(f.rows, rows, flat);
      if (diff) fail(`duckdb flat columns of ${label}`, diff);
      else pass(`duckdb reads the flat columns (${flat.join(', ')}) of ${label}`, 'every value equal: only the LIST column fails');
    } catch (e) {
      fail(`duckdb flat columns of ${label}`, oneLine(e));
    }
  }
}

// The reference files: DuckDB's nested-column failure is not parqd's.
if (testdata) {
  const data = path.join(testdata, 'parquet-testing', 'data');
  await con.run(`PRAGMA add_parquet_key('ref128', '0123456789012345')`);
  await con.run(`PRAGMA add_parquet_key('ref256', '01234567890123456789012345678901')`);
  for (const [rel, key] of [['uniform_encryption.parquet.encrypted', 'ref128'],
                            ['aes256/uniform_encryption.parquet.encrypted', 'ref256']]) {
    const file = path.join(data, rel);
    try {
      const rows = await duck(file, ['boolean_field', 'double_field'], key);
      const ok = rows.length === 50 && rows.every((r, i) => r.boolean_field === (i % 2 === 0) && r.double_field === i * 1.1111111);
      if (ok) pass(`duckdb reads flat columns of reference ${rel}`, '50 rows, boolean_field = i % 2 == 0, double_field = i * 1.1111111');
      else fail(`duckdb reference ${rel}`, 'flat column values differ');
    } catch (e) {
      fail(`duckdb reference ${rel}`, oneLine(e));
    }
    try {
      await duck(file, ['int64_field'], key);
      pass(`duckdb reads the repeated int64_field of reference ${rel}`, 'nested limitation not seen');
    } catch (e) {
      skip(`duckdb reference ${rel} int64_field`, `DuckDB limitation, same as parqd's nested shape: ${oneLine(e)}`);
    }
  }
}

console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed ? 1 : 0);
