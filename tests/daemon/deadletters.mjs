// deadletters.mjs - checks the dead-letter file after the hostile clients
// (deadletter.h's record format): every record is one well-formed JSON
// object; every garbage line sent is there, byte for byte, with a reason;
// the oversized line is there once, marked truncated, with its full length
// and at most max_line_bytes of its start; nothing else was rejected.
//
//   node deadletters.mjs --file REJECTS --garbage EXPECT_B64 --long-bytes N
//        --max-line BYTES
import fs from 'node:fs';
import { parseArgs } from './prng.mjs';

const o = parseArgs(process.argv.slice(2));
let failed = 0;
const pass = n => console.log(`PASS ${n}`);
const fail = (n, why) => { failed++; console.log(`FAIL ${n}${why ? `: ${why}` : ''}`); };
const check = (n, cond, why) => (cond ? pass(n) : fail(n, why));

let text = '';
try { text = fs.readFileSync(o.file, 'utf8'); } catch (e) { fail('dead-letter file exists', e.message); }
const lines = text.split('\n');
const last = lines.pop();
check('dead-letter file ends with a newline', last === '');
const recs = [];
const malformed = [];
for (const l of lines) {
  let r;
  try { r = JSON.parse(l); } catch { malformed.push(l); continue; }
  const okShape = r && typeof r.ts === 'string' && typeof r.source === 'string' && typeof r.reason === 'string' &&
    r.reason.length > 0 && typeof r.truncated === 'boolean' && Number.isInteger(r.bytes) &&
    ((typeof r.raw === 'string') !== (typeof r.raw_b64 === 'string'));
  if (!okShape) malformed.push(l);
  else recs.push(r);
}
check(`every dead letter is a JSON object with ts, source, reason, raw|raw_b64, truncated, bytes (${lines.length})`,
      malformed.length === 0, `${malformed.length} malformed, e.g. ${String(malformed[0]).slice(0, 200)}`);
const rawOf = r => (r.raw !== undefined ? Buffer.from(r.raw, 'utf8') : Buffer.from(r.raw_b64, 'base64'));

const want = new Map();
const garbage = fs.readFileSync(o.garbage, 'utf8').split('\n').filter(Boolean);
for (const b of garbage) want.set(b, (want.get(b) || 0) + 1);
let found = 0, wrongMeta = 0;
const others = [];
for (const r of recs) {
  const key = rawOf(r).toString('base64');
  const n = want.get(key) || 0;
  if (n > 0 && !r.truncated) {
    want.set(key, n - 1);
    found++;
    if (r.bytes !== rawOf(r).length || !/^tcp:127\.0\.0\.1:\d+$/.test(r.source)) wrongMeta++;
  } else {
    others.push(r);
  }
}
check(`every garbage line is in the dead letters byte for byte (${found} of ${garbage.length})`, found === garbage.length);
check('garbage dead letters: bytes = raw length, source = the TCP peer', wrongMeta === 0, `${wrongMeta} wrong`);
const b64 = recs.filter(r => r.raw_b64 !== undefined).length;
console.log(`note: ${b64} records carry raw_b64 (invalid UTF-8), ${recs.length - b64} raw; reasons seen: ` +
  [...new Set(recs.map(r => r.reason.replace(/\d+/g, 'N')))].slice(0, 5).join(' | '));

const longBytes = Number(o['long-bytes']), maxLine = Number(o['max-line']);
const long = others.filter(r => r.bytes === longBytes);
check(`the ${longBytes}-byte line is dead-lettered once`, long.length === 1, `${long.length} records`);
if (long.length === 1) {
  const r = long[0], raw = rawOf(r);
  check('  ... marked truncated, with at most max_line_bytes of its start',
        r.truncated === true && raw.length > 0 && raw.length <= maxLine && raw.subarray(0, 9).toString() === '{"big":"x' &&
        raw.subarray(8).every(c => c === 0x78),
        `truncated ${r.truncated}, ${raw.length} bytes kept, starts ${JSON.stringify(raw.subarray(0, 12).toString())}`);
  check('  ... with a reason naming max_line_bytes', /max_line_bytes/.test(r.reason), r.reason);
}
const rest = others.filter(r => r.bytes !== longBytes);
check('nothing else was rejected', rest.length === 0,
      `${rest.length} other records, e.g. ${JSON.stringify(rest[0])?.slice(0, 300)}`);
process.exit(failed ? 1 : 0);
