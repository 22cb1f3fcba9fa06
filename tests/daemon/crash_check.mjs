// crash_check.mjs - the verdict of the kill -9 loop (test_daemon_crash.sh):
// after many crashes and restarts on one spool and output directory,
//   - every line that was ever in a spool snapshot (spool_dump --lines of
//     the killed daemon's spool) or in a published file appears exactly
//     once in the final output,
//   - no line appears twice,
//   - every output line was sent (its id was handed to a socket, and its
//     content is exactly what the sender made for that id),
//   - files published before a crash are still there, unchanged,
//   - no temporary files, parqd.spool ranges contiguous from 1,
//   - with --bad-every N (the sender's, stream.mjs): the lines that are not
//     JSON are in the dead letters (--rejects FILE) exactly once each when
//     they were ever spooled, each exactly as sent, and in no file; the
//     ranges' seqs are the rows plus the rejects below their end.
//
//   node crash_check.mjs --out DIR --state SENDER_STATE --snap-lines FILE
//        --snap-files FILE [--tmp DIR] [--bad-every N --rejects FILE]
//
// --snap-files lines are "PATH SIZE INODE" for each file published at a
// snapshot.
import fs from 'node:fs';
import os from 'node:os';
import { listParquet, tempFiles, fileInfo, checkRanges, readEvents, canon } from './pq.mjs';
import { parseArgs } from './prng.mjs';
import { lineFor } from './stream.mjs';
import { parseJsonLine } from '../interop/logs_json.mjs';

const o = parseArgs(process.argv.slice(2), { 'bad-every': '0' });
const badEvery = Number(o['bad-every']);
const isBad = id => badEvery > 0 && id % badEvery === 0;
const idOf = line => { const m = /^\{"id":(\d+),/.exec(line); return m ? Number(m[1]) : null; };
let failed = 0;
const pass = n => console.log(`PASS ${n}`);
const fail = (n, why) => { failed++; console.log(`FAIL ${n}${why ? `: ${why}` : ''}`); };
const check = (n, cond, why) => (cond ? pass(n) : fail(n, why));
const canonOf = text => canon(parseJsonLine(Buffer.from(text)));

const state = JSON.parse(fs.readFileSync(o.state, 'utf8'));
const sentBelow = state.next;

const tmps = tempFiles(o.out);
check('no temporary files left', tmps.length === 0, tmps.slice(0, 3).join(' '));
const files = listParquet(o.out);
const infos = await fileInfo(files);
const bad = infos.filter(i => i.error);
check(`DuckDB opens each of the ${files.length} files`, bad.length === 0, bad.map(i => `${i.file}: ${i.error}`).slice(0, 2).join('; '));
const rc = checkRanges(infos, 1n);
const rows = infos.reduce((s, i) => s + (i.rows || 0), 0);
// The dead letters: each record's raw line and the spool seq it had.
const rejects = [];
if (o.rejects && fs.existsSync(o.rejects)) {
  for (const l of fs.readFileSync(o.rejects, 'utf8').split('\n')) {
    if (!l) continue;
    let r = null;
    try { r = JSON.parse(l); } catch { /* below */ }
    rejects.push(r && typeof r.raw === 'string' ? { raw: r.raw, seq: r.seq } : { raw: null, text: l });
  }
}
check('parqd.spool ranges disjoint and contiguous from 1', rc.ok, rc.why);
if (rc.ok) {
  const rejectedBelow = rejects.filter(r => Number.isSafeInteger(r.seq) && BigInt(r.seq) < rc.end).length;
  check(`ranges hold exactly the rows and the rejects (${rc.end - 1n} seqs, ${rows} rows, ` +
        `${rejectedBelow} rejects)`, rc.end - 1n === BigInt(rows + rejectedBelow));
}

// Files published at a snapshot: still there, unchanged.
const snapFiles = new Map();
for (const l of fs.readFileSync(o['snap-files'], 'utf8').split('\n')) {
  const m = /^(.*) (\d+) (\d+)$/.exec(l);
  if (m) snapFiles.set(m[1], [Number(m[2]), Number(m[3])]);
}
const changed = [];
for (const [f, [size, ino]] of snapFiles) {
  let st = null;
  try { st = fs.statSync(f); } catch { /* gone */ }
  if (!st || st.size !== size || st.ino !== ino) changed.push(`${f} ${st ? 'changed' : 'gone'}`);
}
check(`the ${snapFiles.size} files published before a crash are all still there, unchanged`,
      changed.length === 0, changed.slice(0, 3).join('; '));

const { recs, via, castError } = await readEvents(files, o.tmp || os.tmpdir());
if (castError) fail('DuckDB reads CAST(event AS JSON)', castError);
const seen = new Map();
const foreign = [];
for (const r of recs) {
  let id = null;
  try { id = JSON.parse(r.text).id; } catch { /* below */ }
  if (!Number.isSafeInteger(id) || id < 1 || id >= sentBelow || isBad(id) ||
      canonOf(lineFor(id)) !== r.canon) {
    foreign.push(r.text);
    continue;
  }
  seen.set(id, (seen.get(id) || 0) + 1);
}
const dups = [...seen].filter(([, n]) => n > 1);
check(`every output line was sent, exactly as sent (${recs.length} rows, read as ${via})`,
      foreign.length === 0, `${foreign.length} not sent, e.g. ${String(foreign[0]).slice(0, 200)}`);
check('no line appears twice', dups.length === 0,
      `${dups.length} ids more than once, e.g. ${dups.slice(0, 5).map(([i, n]) => `${i} x${n}`).join(', ')}`);

const snapIds = new Set();
const badSnap = [];
for (const l of fs.readFileSync(o['snap-lines'], 'utf8').split('\n')) {
  if (!l) continue;
  const id = idOf(l);
  if (!Number.isSafeInteger(id) || lineFor(id, badEvery) !== l) badSnap.push(l);
  else snapIds.add(id);
}
check('every spooled line is one the sender sent', badSnap.length === 0, `${badSnap.length}, e.g. ${String(badSnap[0]).slice(0, 200)}`);
const lost = [...snapIds].filter(id => !isBad(id) && !seen.has(id));
check(`every line ever spooled is in the final output (${snapIds.size} spooled at some snapshot)`,
      lost.length === 0, `${lost.length} lost, e.g. ids ${lost.slice(0, 10).join(', ')}`);

if (badEvery > 0) {
  const rejected = new Map();
  const strange = [];
  for (const r of rejects) {
    const id = r.raw === null ? null : idOf(r.raw);
    if (!Number.isSafeInteger(id) || !isBad(id) || lineFor(id, badEvery) !== r.raw) strange.push(r.raw ?? r.text);
    else rejected.set(id, (rejected.get(id) || 0) + 1);
  }
  const twice = [...rejected].filter(([, n]) => n > 1);
  const missing = [...snapIds].filter(id => isBad(id) && !rejected.has(id));
  check(`every dead letter is a line sent as not JSON, exactly as sent (${rejects.length})`,
        strange.length === 0, `${strange.length}, e.g. ${String(strange[0]).slice(0, 200)}`);
  check('no line is in the dead letters twice', twice.length === 0,
        `${twice.length} ids more than once, e.g. ${twice.slice(0, 5).map(([i, n]) => `${i} x${n}`).join(', ')}`);
  check('every rejected line ever spooled is in the dead letters', missing.length === 0,
        `${missing.length} missing, e.g. ids ${missing.slice(0, 10).join(', ')}`);
}

const inFlight = sentBelow - 1 - seen.size - rejects.length;
console.log(`counts: ${sentBelow - 1} lines handed to sockets, ${snapIds.size} seen in spool snapshots, ` +
  `${recs.length} rows in ${files.length} files, ${seen.size} distinct ids, ` +
  `${inFlight} never accepted (in a socket buffer when the daemon died)`);
process.exit(failed ? 1 : 0);
