// part_check.mjs - the verdict of the partitioned kill -9 loop
// (test_daemon_partition_crash.sh, test_s3_partition_crash.sh): after
// crashes and restarts on one spool and output directory with output.path
// "service={{svc}}/dt=%Y-%m-%d/hour=%H/..." and output.time_from: ts,
//   - no temporary files; DuckDB reads the layout with hive_partitioning,
//   - every output row was sent, exactly as sent (part_stream.mjs lineFor),
//   - no id appears twice,
//   - every line ever in a spool snapshot (or in a file published at a
//     snapshot) is in the final output,
//   - every row lies under the path its own values render: service = its
//     svc (NULL, i.e. __HIVE_DEFAULT_PARTITION__, when it has none), dt and
//     hour = its ts (UTC; part_stream.mjs tsOf), or its _ingest_ts when it
//     has no ts or an unparsable one,
//   - the layout spans the 30 event hours, and late records landed in
//     hours that had files published before them,
//   - a filter on service reads only that partition's files (EXPLAIN
//     ANALYZE "Total Files Read"), for a plain value and for "a/b= c",
//     and one on dt and hour only that event hour's.
//
//   node part_check.mjs --out DIR --state SENDER_STATE --snap-lines FILE
import fs from 'node:fs';
import { listParquet, tempFiles, query, sqlStr } from './pq.mjs';
import { parseArgs } from './prng.mjs';
import { lineFor, svcOf, tsOf, HOURS } from './part_stream.mjs';

const o = parseArgs(process.argv.slice(2));
let failed = 0;
const pass = n => console.log(`PASS ${n}`);
const fail = (n, why) => { failed++; console.log(`FAIL ${n}${why ? `: ${why}` : ''}`); };
const check = (n, cond, why) => (cond ? pass(n) : fail(n, why));

const sentBelow = JSON.parse(fs.readFileSync(o.state, 'utf8')).next;
const tmps = tempFiles(o.out);
check('no temporary files left', tmps.length === 0, tmps.slice(0, 3).join(' '));
const files = listParquet(o.out);
// A glob, not a list: DuckDB prunes (and counts) files by the glob's
// directories only.
const SRC = `read_parquet(${sqlStr(`${o.out}/**/*.parquet`)}, hive_partitioning = true)`;
const rows = await query(`SELECT CAST(variant_extract(event, 'id') AS BIGINT) AS id,
    CAST(variant_extract(event, 'svc') AS VARCHAR) AS svc,
    CAST(variant_extract(event, 'pad') AS VARCHAR) AS pad,
    CAST(variant_extract(event, 'ts') AS VARCHAR) AS ts, service, CAST(dt AS VARCHAR) AS dt,
    CAST(hour AS VARCHAR) AS hour, strftime(_ingest_ts AT TIME ZONE 'UTC', '%Y-%m-%d') AS idt,
    strftime(_ingest_ts AT TIME ZONE 'UTC', '%H') AS ihour FROM ${SRC}`);
// ts as sent: a string is itself, a number its value (DuckDB may print a
// Variant decimal in another form).
const tsSent = (id, got) => {
  const j = tsOf(id).json;
  if (j === undefined) return got === null;
  const v = JSON.parse(j);
  return typeof v === 'string' ? got === v : got !== null && Number(got) === v;
};
const utc = sec => new Date(sec * 1000).toISOString();
const seen = new Map();
const foreign = [], misplaced = [];
const evHours = new Set();
for (const r of rows) {
  const id = Number(r.id);
  const line = { id, ...(r.svc === null ? {} : { svc: r.svc }), pad: r.pad };
  const mine = Number.isSafeInteger(id) ? lineFor(id) : '';
  const { ts: _, ...sent } = mine ? JSON.parse(mine) : {};
  if (!Number.isSafeInteger(id) || id < 1 || id >= sentBelow ||
      JSON.stringify(line) !== JSON.stringify(sent) || !tsSent(id, r.ts)) {
    foreign.push(JSON.stringify(r));
    continue;
  }
  seen.set(id, (seen.get(id) || 0) + 1);
  const ev = tsOf(id).sec;
  const dt = ev === null ? r.idt : utc(ev).slice(0, 10);
  const hour = ev === null ? Number(r.ihour) : Number(utc(ev).slice(11, 13));
  if (ev !== null) evHours.add(`${dt} ${hour}`);
  if (r.service !== (svcOf(id) ?? null) || r.dt !== dt || Number(r.hour) !== hour)
    misplaced.push(JSON.stringify(r));
}
check(`every output row was sent, exactly as sent (${rows.length} rows in ${files.length} files)`,
      foreign.length === 0, `${foreign.length} not sent, e.g. ${String(foreign[0]).slice(0, 200)}`);
const dups = [...seen].filter(([, n]) => n > 1);
check('no line appears twice', dups.length === 0,
      `${dups.length} ids more than once, e.g. ${dups.slice(0, 5).map(([i, n]) => `${i} x${n}`).join(', ')}`);
check('every row lies under the path its own values render (service = svc, dt/hour = ts, else _ingest_ts)',
      misplaced.length === 0, `${misplaced.length}, e.g. ${String(misplaced[0]).slice(0, 300)}`);

const snapIds = new Set();
const badSnap = [];
for (const l of fs.readFileSync(o['snap-lines'], 'utf8').split('\n')) {
  if (!l) continue;
  let id = null;
  try { id = JSON.parse(l).id; } catch { /* below */ }
  if (!Number.isSafeInteger(id) || lineFor(id) !== l) badSnap.push(l);
  else snapIds.add(id);
}
check('every spooled line is one the sender sent', badSnap.length === 0,
      `${badSnap.length}, e.g. ${String(badSnap[0]).slice(0, 200)}`);
const lost = [...snapIds].filter(id => !seen.has(id));
check(`every line spooled before a kill is in the final output (${snapIds.size})`, lost.length === 0,
      `${lost.length} lost, e.g. ids ${lost.slice(0, 10).join(', ')}`);

const noTs = rows.filter(r => tsOf(Number(r.id)).sec === null).length;
check(`the rows span the ${HOURS} event hours (${evHours.size}), and ${noTs} rows without a usable ts ` +
      'went by their ingestion time', evHours.size === HOURS && noTs > 0);
// Late records: a file of an event hour whose first row came after the
// first row of a later hour (its hour had passed when it opened).
const byFile = await query(`SELECT filename AS f, min(CAST(variant_extract(event, 'id') AS BIGINT)) AS lo,
    CAST(dt AS VARCHAR) AS dt, CAST(hour AS INTEGER) AS hour FROM ${SRC} GROUP BY ALL`);
const hourOf = r => Date.parse(`${r.dt}T00:00:00Z`) / 1000 + Number(r.hour) * 3600;
const firstIn = new Map();
for (const r of byFile) {
  const h = hourOf(r), lo = Number(r.lo);
  if (!firstIn.has(h) || firstIn.get(h) > lo) firstIn.set(h, lo);
}
const evStart = Date.UTC(2026, 2, 1) / 1000, evEnd = evStart + HOURS * 3600;
const late = byFile.filter(r => {
  const h = hourOf(r);
  return h >= evStart && h < evEnd &&
    [...firstIn].some(([h2, lo2]) => h2 > h && h2 < evEnd && lo2 < Number(r.lo));
}).length;
check(`late records: ${late} files of an event hour opened after a later hour began`, late > 0);

const values = new Set(rows.map(r => r.service));
const noField = rows.filter(r => r.svc === null).length;
check(`the layout spans many values (${values.size} service values, ${noField} rows without svc)`,
      values.size >= 100 && values.has(null) && values.has('a/b= c'));

// Pruning: a filter on the partition column reads only its directories' files.
for (const v of ['a/b= c', [...values].filter(x => x && x !== 'a/b= c').sort()[0]]) {
  const esc = v.replace(/[\/=]/g, c => (c === '/' ? '%2F' : '%3D'));
  const own = files.filter(f => f.includes(`/service=${esc}/`)).length;
  const plan = await query(`EXPLAIN ANALYZE SELECT count(*) FROM ${SRC} WHERE service = ${sqlStr(v)}`);
  const text = JSON.stringify(plan);
  const m = /Total Files Read: *(\d+)/.exec(text);
  check(`a filter on service = '${v}' reads its ${own} files of ${files.length} (Total Files Read: ${m ? m[1] : '?'})`,
        m && Number(m[1]) === own && own > 0);
}
// And on the event hour: only the files under that dt and hour.
{
  const own = files.filter(f => f.includes('/dt=2026-03-01/hour=05/')).length;
  const plan = await query(`EXPLAIN ANALYZE SELECT count(*) FROM ${SRC} WHERE dt = '2026-03-01' AND hour = 5`);
  const m = /Total Files Read: *(\d+)/.exec(JSON.stringify(plan));
  check(`a filter on dt/hour = 2026-03-01 05 reads its ${own} files (Total Files Read: ${m ? m[1] : '?'})`,
        m && Number(m[1]) === own && own > 0);
}
console.log(`counts: ${sentBelow - 1} lines handed to sockets, ${snapIds.size} in spool snapshots, ` +
  `${rows.length} rows in ${files.length} files, ${seen.size} distinct ids`);
process.exit(failed ? 1 : 0);
