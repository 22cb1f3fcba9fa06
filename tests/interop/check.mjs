// check.mjs - reads one Parquet file with one reader and compares every value
// with its expectation. Returns {status: PASS|FAIL|SKIP, msg}.
import fs from 'node:fs';
import { compare, loadExpectation, mapValues } from './canon.mjs';
import { limitsFor } from './limits.mjs';
import * as duckdb from './reader_duckdb.mjs';
import * as wasm from './reader_wasm.mjs';
import * as hyparquet from './reader_hyparquet.mjs';

export const READERS = { [duckdb.name]: duckdb, [wasm.name]: wasm, [hyparquet.name]: hyparquet };
export const READER_NAMES = [duckdb.name, wasm.name, hyparquet.name];

export function expectPathOf(parquetPath) {
  return parquetPath.replace(/\.parquet$/, '.expect.json');
}

function firstLine(s) {
  s = String(s).split('\n')[0];
  return s.length > 300 ? s.slice(0, 300) + '...' : s;
}

/* Every value of every row and column; the first difference in row-major
 * order, or null. */
function compareAll(exp, got, reader) {
  if (got.nrows !== exp.rows.length)
    return `row count: expected ${exp.rows.length}, got ${got.nrows}`;
  for (const c of exp.columns)
    if (!(c.name in got.columns)) return `column ${c.name}: missing in what the reader returned${got.info ? ' (' + got.info + ')' : ''}`;
  const opts = { negZero: reader.preservesNegZero };
  for (let r = 0; r < exp.rows.length; r++) {
    for (let j = 0; j < exp.columns.length; j++) {
      const t = exp.columns[j];
      const d = compare(t, exp.rows[r][j], got.columns[t.name][r], '', opts);
      if (d) return `row ${r} column ${t.name}${d.path}: expected ${d.exp}, got ${d.got}`;
    }
  }
  return null;
}

export async function checkFile(readerName, file, fileFeatures) {
  const reader = READERS[readerName];
  let exp;
  try {
    const json = JSON.parse(fs.readFileSync(expectPathOf(file), 'utf8'));
    exp = loadExpectation(json, expectPathOf(file));
  } catch (e) {
    return { status: 'FAIL', msg: `bad expectation file: ${firstLine(e.message)}` };
  }
  const features = new Set([...exp.features, ...fileFeatures]);
  const limits = limitsFor(readerName, features);
  if (exp.skip[readerName]) {
    limits.push({ kind: 'skip', feature: '(expectation file)', reason: exp.skip[readerName] });
  }
  // Lossy readers: compare with the same approximation of the expected value.
  let rows = exp.rows;
  for (const l of limits.filter(x => x.kind === 'lossy')) {
    rows = rows.map(row => row.map((v, j) => mapValues(exp.columns[j], v, l.match, l.fn)));
  }
  const lossy = limits.filter(x => x.kind === 'lossy').map(l => l.feature);
  const skips = limits.filter(x => x.kind === 'skip');

  let problem;
  try {
    const got = await reader.read(file, exp.columns);
    problem = compareAll({ ...exp, rows }, got, reader);
  } catch (e) {
    problem = `read error: ${firstLine(e && e.message ? e.message : e)}`;
  }
  if (!problem) {
    let msg = lossy.length ? `lossy comparison for ${lossy.join(', ')} (limits.mjs)` : '';
    if (skips.length) msg += `${msg ? '; ' : ''}NOTE: known limitation ${skips.map(s => s.feature).join(', ')} did not show: check limits.mjs`;
    return { status: 'PASS', msg };
  }
  const skip = skips.find(s => !s.expect || s.expect.test(problem));
  if (skip) return { status: 'SKIP', msg: `${readerName} cannot read ${skip.feature}: ${skip.reason} [observed: ${problem}]` };
  let msg = problem;
  if (skips.length) msg += ` (known limitations ${skips.map(s => s.feature).join(', ')} expect a different failure)`;
  if (lossy.length) msg += ` (lossy comparison for ${lossy.join(', ')})`;
  return { status: 'FAIL', msg };
}

