// verify.mjs - checks what parqd published under an output directory
// against the NDJSON lines that were sent (default schema: `event`),
// printing one PASS/FAIL line per check for the calling test script.
//
//   node verify.mjs --out DIR [--min-files 2] [--first-seq 1] [--rejects 0]
//        [--since-us T0] [--until-us T1] [--tmp DIR] [--label X] SENT.ndjson...
//
// Checks: no temporary files; at least --min-files files; PAR1 at both
// ends of each; DuckDB opens each on its own; the parqd.spool ranges are
// disjoint and cover --first-seq.. without a gap, and hold exactly the
// rows plus --rejects; the row count equals the non-blank lines sent; the
// multiset of records equals the multiset of lines sent, exactly (a
// difference in number representation only is named as issue 7);
// _ingest_ts lies in [since, until].
import path from 'node:path';
import os from 'node:os';
import {
  listParquet, tempFiles, magicOk, fileInfo, checkRanges, sourceRecords, readEvents,
  compareMultisets, numberDiff, query, sqlList,
} from './pq.mjs';
import { parseArgs } from './prng.mjs';

const o = parseArgs(process.argv.slice(2), { 'min-files': '1', 'first-seq': '1', rejects: '0', label: '' });
const L = o.label ? `${o.label}: ` : '';
let failed = 0;
const pass = n => console.log(`PASS ${L}${n}`);
const fail = (n, why) => { failed++; console.log(`FAIL ${L}${n}${why ? `: ${why}` : ''}`); };
const check = (n, cond, why) => (cond ? pass(n) : fail(n, why));
const short = (s, n = 300) => (s.length > n ? s.slice(0, n) + '...' : s);

const out = o.out;
const tmps = tempFiles(out);
check('no temporary files left', tmps.length === 0, `${tmps.length}: ${tmps.slice(0, 3).join(' ')}`);

const files = listParquet(out);
const minFiles = Number(o['min-files']);
check(`published files: ${files.length} (at least ${minFiles})`, files.length >= minFiles);

const badMagic = files.filter(f => !magicOk(f));
check('every file has PAR1 at both ends', badMagic.length === 0, badMagic.slice(0, 3).join(' '));

const infos = await fileInfo(files);
const unreadable = infos.filter(i => i.error !== null);
check('DuckDB opens every file on its own', unreadable.length === 0,
      unreadable.slice(0, 2).map(i => `${path.basename(i.file)}: ${i.error}`).join('; '));
const rows = infos.reduce((s, i) => s + (i.rows || 0), 0);

// Seqs: every non-blank line sent and accepted got one (rows + rejects);
// each file's range runs from its first row to past its last, so rejected
// seqs lie inside a range or in a gap between files (or after the last).
const rejects = BigInt(o.rejects), first = BigInt(o['first-seq']);
const rc = checkRanges(infos, first, rejects);
if (rc.ok) {
  const span = rc.end - first - rc.gaps;
  const total = BigInt(rows) + rejects;
  const trailing = first + total - rc.end;
  pass(`parqd.spool ranges are disjoint and cover ${first}..${rc.end - 1n}` +
       (rc.gaps ? ` (${rc.gaps} seqs between files, rejected ones)` : ' without a gap'));
  check(`the ranges hold the rows and rejects (${span} seqs in files + ${rc.gaps} between + ${trailing} after = ` +
        `${rows} rows + ${rejects} rejected)`, trailing >= 0n && span + rc.gaps + trailing === total && trailing <= rejects);
} else {
  fail('parqd.spool ranges are disjoint and contiguous', rc.why);
}

const src = sourceRecords(o._);
check(`row count equals the non-blank lines sent (${rows} rows, ${src.length} lines)`, rows === src.length);

const { recs, via, castError } = await readEvents(files, o.tmp || os.tmpdir());
if (castError)
  fail('DuckDB reads CAST(event AS JSON)', `${castError}; compared the Variant values instead`);
const d = compareMultisets(src, recs);
if (d.missing.length === 0 && d.extra.length === 0) {
  pass(`records equal the lines sent, exactly (${recs.length} records, read as ${via})`);
} else {
  fail(`records equal the lines sent, exactly (read as ${via})`,
       `${d.missing.length} sent but not found, ${d.extra.length} found but not sent`);
  for (const m of d.missing.slice(0, 3)) console.log(`  missing: ${short(m.text)}`);
  for (const e of d.extra.slice(0, 3)) console.log(`  extra:   ${short(e.text)}`);
  const other = d.missing.length + d.extra.length - 2 * d.looseOnly;
  if (d.looseOnly > 0) {
    console.log(`  ${d.looseOnly} of the differing records differ only in number representation ` +
                `(issue 7, Variant number types), e.g. ${d.pairs.map(([a, b]) => numberDiff(a.canon, b.canon)).join('; ')}`);
  }
  check('records equal the lines sent up to number representation', other === 0,
        `${other} records differ in more than number representation`);
}

if (files.length > 0) {
  const [r] = await query(`SELECT count(*) FILTER (WHERE _ingest_ts IS NULL) AS nulls,
      epoch_us(min(_ingest_ts)) AS lo, epoch_us(max(_ingest_ts)) AS hi FROM read_parquet(${sqlList(files)}, hive_partitioning = false)`);
  const lo = BigInt(r.lo ?? 0), hi = BigInt(r.hi ?? 0);
  const since = o['since-us'] ? BigInt(o['since-us']) : null, until = o['until-us'] ? BigInt(o['until-us']) : null;
  const inWindow = (since === null || lo >= since) && (until === null || hi <= until);
  check('_ingest_ts set on every row, within the run', Number(r.nulls) === 0 && inWindow,
        `${r.nulls} nulls, range ${lo}..${hi} us, run ${since}..${until}`);
}
process.exit(failed ? 1 : 0);
